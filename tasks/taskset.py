"""A task set is a folder: tasks.jsonl, taskset.toml and, for lookup, encyclopedia.json.

``load_taskset`` takes a built-in name (a folder beside this file) or a path, so a
user brings their own set in the same format. Every problem is reported with the
file, the line and the field, and what to do about it.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    FiniteFloat,
    ValidationError,
    model_validator,
)

from harness.tools import Tool, ToolSet
from tasks.tools import Encyclopedia, LookupVariant, calc_tool, lookup_tool

BUILTIN_DIR = Path(__file__).parent
KNOWN_TOOLS = ("lookup", "calc")


class TaskSetError(Exception):
    pass


def _not_blank(text: str) -> str:
    if not text.strip():
        raise ValueError("must hold more than white space")
    return text


#: Text that must hold something besides white space.
Filled = Annotated[str, AfterValidator(_not_blank)]


class Expected(BaseModel):
    """What a correct answer holds, read by the typed exact grader.

    An answer key that would grade wrongly is refused: a number that is not finite
    (NaN equals nothing, and a NaN tolerance accepts everything), a negative
    tolerance, a blank entity, and an expectation with neither numbers nor entities
    (which every answer would meet).
    """

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    numbers: list[FiniteFloat] = Field(default_factory=list)
    """Every number the answer must contain, as a multiset; no others may appear."""
    entities: list[Filled] = Field(default_factory=list)
    """Phrases the answer must name, compared after normalisation."""
    tolerance: FiniteFloat | None = Field(default=None, ge=0)
    """Absolute tolerance for numbers; 1e-9 when unset."""

    @model_validator(mode="after")
    def _expects_something(self) -> Expected:
        if not self.numbers and not self.entities:
            raise ValueError(
                "expects nothing, so every answer would be correct; give numbers, entities "
                'or both, e.g. {"numbers": [84]}'
            )
        return self


class Task(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    id: Filled
    """Unique within the set; the key runs are matched by."""
    question: Filled
    expected: Expected
    slice: str | None = None
    """An optional group for breakdowns, e.g. "public" or "company"."""

    @property
    def fingerprint(self) -> str:
        """Changes whenever what the task asks or expects changes (its slice does not count)."""
        return _digest(self.model_dump(include={"id", "question", "expected"}))


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

    def fingerprint(self) -> dict[str, Any]:
        """What a results folder is tied to: every task's fingerprint, and the tools with
        the encyclopedia they read."""
        book = self.encyclopedia
        tools = {
            "tools": list(self.tools),
            "encyclopedia": None
            if book is None
            else {"entries": book.entries, "related": book.related, "naming": book.naming},
        }
        return {"tasks": {t.id: t.fingerprint for t in self.tasks}, "tools": _digest(tools)}

    def toolset(self, lookup: LookupVariant = "plain") -> ToolSet:
        made: list[Tool] = []
        for name in self.tools:
            if name == "lookup" and self.encyclopedia is not None:
                made.append(lookup_tool(self.encyclopedia, lookup))
            elif name == "calc":
                made.append(calc_tool())
        return ToolSet(made)


def _digest(value: Any) -> str:
    canonical = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


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
            f"{path}: {describe_errors(exc)} (tools may be: {', '.join(KNOWN_TOOLS)})"
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
            raise TaskSetError(f"{path}:{number}: {describe_errors(exc)}") from None
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


def describe_errors(exc: ValidationError) -> str:
    """Every problem a validation found, as ``field 'a.b': what is wrong``."""
    return "; ".join(
        f"field {'.'.join(str(p) for p in e['loc']) or '(whole line)'!r}: {e['msg']}"
        for e in exc.errors()
    )
