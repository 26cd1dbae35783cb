"""Generators of the outputs area's big hostile inputs (see generate.py)."""

from __future__ import annotations

from pathlib import Path


def experiment_with_a_long_arm(path: Path, chars: int) -> None:
    """An experiment file whose one arm is ``chars`` characters and an escape sequence: the
    error naming it quotes it all, and is cut to one short line."""
    arm = "x" * chars + "\\u001b]0;pwn\\u0007"
    path.write_text(f'arms = ["{arm}"]\n', encoding="utf-8")
