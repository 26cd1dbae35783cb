"""A task set is a folder: tasks.jsonl, taskset.toml and, for lookup, encyclopedia.json.

``load_taskset`` takes a built-in name (a folder beside this file) or a path, so a
user brings their own set in the same format. Every problem is reported with the
file, the line and the field, and what to do about it.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.tools import Tool, ToolSet
from tasks.tools import Encyclopedia, LookupVariant, calc_tool, lookup_tool

BUILTIN_DIR = Path(__file__).parent
KNOWN_TOOLS = ("lookup", "calc")


class TaskSetError(Exception):
    pass


class Expected(BaseModel):
    """What a correct answer holds, read by the typed exact grader."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    numbers: list[float] = Field(default_factory=list)
    """Every number the answer must contain, as a multiset; no others may appear."""
    entities: list[str] = Field(default_factory=list)
    """Phrases the answer must name, compared after normalisation."""
    tolerance: float | None = None
    """Absolute tolerance for numbers; 1e-9 when unset."""


class Task(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    id: str = Field(min_length=1)
    """Unique within the set; the key runs are matched by."""
    question: str = Field(min_length=1)
    expected: Expected
    slice: str | None = None
    """An optional group for breakdowns, e.g. "public" or "company"."""


class TaskSetConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    name: str
    description: str = ""
    tools: list[Literal["lookup", "calc"]] = Field(default_factory=list)
    grader: Literal["exact"] = "exact"


@dataclass(frozen=True)
class TaskSet:
    name: str
    description: str
    tools: tuple[str, ...]
    grader: str
    tasks: tuple[Task, ...]
    encyclopedia: Encyclopedia | None
    path: Path

    def toolset(self, lookup: LookupVariant = "plain") -> ToolSet:
        made: list[Tool] = []
        for name in self.tools:
            if name == "lookup" and self.encyclopedia is not None:
                made.append(lookup_tool(self.encyclopedia, lookup))
            elif name == "calc":
                made.append(calc_tool())
        return ToolSet(made)


def builtin_names() -> list[str]:
    return sorted(p.parent.name for p in BUILTIN_DIR.glob("*/taskset.toml"))


def load_taskset(spec: str | Path) -> TaskSet:
    folder = Path(spec)
    if not folder.is_dir():
        if isinstance(spec, str) and (BUILTIN_DIR / spec / "taskset.toml").is_file():
            folder = BUILTIN_DIR / spec
        else:
            raise TaskSetError(
                f"no task set {str(spec)!r}: give a built-in name ({', '.join(builtin_names())}) "
                "or a folder holding tasks.jsonl and taskset.toml"
            )
    config = _read_config(folder / "taskset.toml")
    tasks = _read_tasks(folder / "tasks.jsonl")
    book = None
    if "lookup" in config.tools:
        book = _read_encyclopedia(folder / "encyclopedia.json")
    return TaskSet(
        name=config.name,
        description=config.description,
        tools=tuple(config.tools),
        grader=config.grader,
        tasks=tuple(tasks),
        encyclopedia=book,
        path=folder.resolve(),
    )


def _read_config(path: Path) -> TaskSetConfig:
    if not path.is_file():
        raise TaskSetError(f"{path}: missing; write name, description, tools and grader there")
    try:
        return TaskSetConfig.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))
    except tomllib.TOMLDecodeError as exc:
        raise TaskSetError(f"{path}: not valid TOML: {exc}") from None
    except ValidationError as exc:
        raise TaskSetError(
            f"{path}: {_describe(exc)} (tools may be: {', '.join(KNOWN_TOOLS)})"
        ) from None


def _read_tasks(path: Path) -> list[Task]:
    if not path.is_file():
        raise TaskSetError(f"{path}: missing; write one JSON task per line")
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            task = Task.model_validate_json(line)
        except ValidationError as exc:
            raise TaskSetError(f"{path}:{number}: {_describe(exc)}") from None
        if task.id in seen:
            raise TaskSetError(
                f"{path}:{number}: id {task.id!r} is already used on line {seen[task.id]}; "
                "task ids must be unique"
            )
        seen[task.id] = number
        tasks.append(task)
    if not tasks:
        raise TaskSetError(f"{path}: holds no tasks")
    return tasks


def _read_encyclopedia(path: Path) -> Encyclopedia:
    if not path.is_file():
        raise TaskSetError(f"{path}: missing; the lookup tool reads its entries from it")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise TaskSetError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    entries = data.get("entries") if isinstance(data, dict) else None
    if not isinstance(entries, dict) or not all(isinstance(v, str) for v in entries.values()):
        raise TaskSetError(f"{path}: field 'entries' must be an object of title -> text")
    related = data.get("related", {})
    unknown = sorted({r for rs in related.values() for r in rs} - set(entries))
    if unknown:
        raise TaskSetError(f"{path}: field 'related' names entries that do not exist: {unknown}")
    naming = data.get("naming")
    return Encyclopedia(entries, related, naming) if naming else Encyclopedia(entries, related)


def _describe(exc: ValidationError) -> str:
    return "; ".join(
        f"field {'.'.join(str(p) for p in e['loc']) or '(whole line)'!r}: {e['msg']}"
        for e in exc.errors()
    )
