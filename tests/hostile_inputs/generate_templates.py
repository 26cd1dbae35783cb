"""Generators of the templates area's big hostile inputs: prompt files and the task files
their slots fill in."""

from __future__ import annotations

import json
from pathlib import Path


def template_repeated_slot(path: Path, slot: str, text: str, times: int, after: str = "") -> None:
    """A prompt file whose ``slot`` is ``text`` repeated ``times`` times, then ``after``
    (what else the slot must keep)."""
    path.write_text(f"{slot} = {json.dumps(text * times + after)}\n", encoding="utf-8")


def template_wrapped_slot(path: Path, slot: str, before: str, after: str, times: int) -> None:
    """A prompt file whose ``slot`` nests ``times`` deep: ``before``*times, ``after``*times
    around ``question``."""
    text = "{{ " + before * times + "question" + after * times + " }}"
    path.write_text(f"{slot} = {json.dumps(text)}\n", encoding="utf-8")


def template_long_question(path: Path, length: int) -> None:
    """A one-task JSONL file whose question is ``length`` characters long."""
    task = {"id": "long", "question": "Q" * length, "answer": "4"}
    path.write_text(json.dumps(task) + "\n", encoding="utf-8")


def template_long_number(path: Path, slot: str, digits: int) -> None:
    """A prompt file whose ``slot`` writes out a number of ``digits`` digits."""
    path.write_text(f'{slot} = "{{{{ {"9" * digits} }}}}"\n', encoding="utf-8")


def template_long_name(path: Path, slot: str, length: int) -> None:
    """A prompt file whose ``slot`` fills in a name ``length`` characters long."""
    path.write_text(f'{slot} = "{{{{ {"a" * length} }}}}"\n', encoding="utf-8")
