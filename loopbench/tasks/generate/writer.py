"""Writing a generated set as a task-set folder, byte for byte the same for the same knobs,
and refusing to overwrite a folder that holds anything but an earlier generated set."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any

from loopbench.tasks.generate.build import Generated, GenerateError
from loopbench.tasks.taskset import Task

FILES = ("taskset.toml", "tasks.jsonl", "encyclopedia.json")


def _toml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a TOML basic string


def render(made: Generated) -> dict[str, str]:
    """The three files' text. JSON keys keep a fixed order (a task reads id, question,
    expected first; entries keep the order the improved lookup lists matches in)."""
    toml = (
        f"name = {_toml_string(made.options.name)}\n"
        f"description = {_toml_string(made.description)}\n"
        'tools = ["lookup", "calc"]\n'
        'grader = "exact"\n'
        f"generated_by = {_toml_string(made.options.command)}\n"
    )
    lines = "".join(json.dumps(_task_json(t), ensure_ascii=False) + "\n" for t in made.tasks)
    book = json.dumps(made.book, ensure_ascii=False, indent=1) + "\n"
    return {"taskset.toml": toml, "tasks.jsonl": lines, "encyclopedia.json": book}


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


def _task_json(task: Task) -> dict[str, Any]:
    expected: dict[str, Any] = {"numbers": [_number(n) for n in task.expected.numbers]}
    if task.expected.entities:
        expected["entities"] = task.expected.entities
    if task.expected.tolerance is not None:
        expected["tolerance"] = task.expected.tolerance
    if task.expected.distractors:
        expected["distractors"] = task.expected.distractors
    assert task.solution is not None
    return {
        "id": task.id,
        "question": task.question,
        "expected": expected,
        "slice": task.slice,
        "hops": task.hops,
        "solution": task.solution.model_dump(),
    }


def is_generated(folder: Path) -> bool:
    """A folder holding only a generated set's files, its taskset.toml saying so."""
    names = {p.name for p in folder.iterdir()}
    ours = {*FILES, *(f".{name}.tmp" for name in FILES)}  # a write cut short leaves these
    if not names <= ours or "taskset.toml" not in names:
        return False
    try:
        config = tomllib.loads((folder / "taskset.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    return bool(config.get("generated_by"))


def write_set(made: Generated, out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise GenerateError(f"--out {out}: is a file; give a new or empty folder")
    # guard: generate-never-overwrites-folder-did
    if out.is_dir() and any(out.iterdir()) and not is_generated(out):
        raise GenerateError(
            f"--out {out}: holds files and is not a generated task set; give a new or empty "
            "folder (only a set made by tasks generate is replaced)"
        )
    out.mkdir(parents=True, exist_ok=True)
    for name, text in render(made).items():
        temporary = out / f".{name}.tmp"
        temporary.write_text(text, encoding="utf-8", newline="\n")
        os.replace(temporary, out / name)
