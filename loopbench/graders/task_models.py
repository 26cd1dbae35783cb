"""What a task is: an id, a question and what its grader expects.

Each grader reads the lines of tasks.jsonl as its own task model (loopbench/graders/registry.py):
``Task`` for the exact grader, ``CodeTask`` for the code-test grader, a subclass of
``TaskBase`` for a plugin's grader. A model completes itself from its set's folder when
the set loads (``with_files``): a coding task reads its suites there.
"""

from __future__ import annotations

import ast
import hashlib
import json
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from loopbench.graders.answer_keys import CodeExpected, Expected, Filled, Solution
from loopbench.graders.code_tests import CodeSuites
from loopbench.graders.exact import normalise
from loopbench.graders.extract import top_names
from loopbench.harness.errors import BadInput
from loopbench.harness.files import read_text
from loopbench.sandbox.suite_result import suite_tests


class TaskSetError(BadInput):
    pass


class TaskBase(BaseModel):
    """What every task has; a grader's task model adds its ``expected`` answer key."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    id: Filled
    """Unique within the set; the key runs are matched by."""
    question: Filled
    slice: str | None = None
    """An optional group for breakdowns, e.g. "public" or "company"."""
    reference: str | None = None
    """For a reader, never graded and not in the fingerprint: a dataset's worked solution
    (GSM8K's), kept beside the answer it ends in."""

    @property
    def fingerprint(self) -> str:
        """Changes whenever what the task asks or expects changes (its slice does not count)."""
        return digest(self.model_dump(include={"id", "question", "expected"}))

    def with_files(self, folder: Path) -> Self:
        """The task with what it reads from its set's folder (none unless a model says so)."""
        return self


#: A task of any grader's model.
AnyTask = TaskBase


class Task(TaskBase):
    """A task graded by the exact grader."""

    expected: Expected
    hops: int | None = Field(default=None, ge=1)
    """Generated sets: the look-ups the shortest answer needs (not in the fingerprint)."""
    solution: Solution | None = None
    """Generated sets: the look-ups, facts and operation behind ``expected``."""

    @model_validator(mode="after")
    def _hops_match_the_solution(self) -> Task:
        # guard: task-hops-match-look-ups
        if self.solution is not None and self.hops != len(self.solution.lookups):
            raise ValueError(
                f"hops is {self.hops} but the solution lists {len(self.solution.lookups)} "
                "look-ups; they must agree (set hops to the number of look-ups)"
            )
        asked = f" {normalise(self.question)} "
        if named := [d for d in self.expected.distractors if f" {normalise(d)} " in asked]:
            raise ValueError(
                f"distractor {named[0]!r} is named by the question, and a correct answer may "
                'repeat it ("59 more than Bilbao"); list only entities the question does not name'
            )
        return self

    @property
    def fingerprint(self) -> str:
        """Its distractors do not count: they change how the strict rule judges a hedge, not
        what is asked or expected, and a results folder records which rule graded it (so
        runs made before a set had distractors stay done)."""
        asked = self.model_dump(
            include={"id", "question", "expected"}, exclude={"expected": {"distractors"}}
        )
        return digest(asked)


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

    def with_files(self, folder: Path) -> Self:
        """The task with its suites, read from ``suites/NAME/`` and checked."""
        self._suites = read_suites(self, folder)
        return self

    @property
    def fingerprint(self) -> str:
        """Also changes when a suite's tests change."""
        asked = self.model_dump(include={"id", "question", "expected"})
        suites = self._suites
        tests = None
        if suites is not None:
            tests = digest([suites.entry_point, suites.feedback, suites.heldout, suites.preamble])
        return digest({**asked, "suites": tests})


SUITE_FILES = ("feedback.py", "heldout.py", "reference.py")


def read_suites(task: CodeTask, folder: Path) -> CodeSuites:
    """A coding task's suites: each must parse and hold a test, and the reference must
    define the entry point."""
    where = folder / "suites" / task.expected.suite
    expected = f"a Python file of test functions (see docs/tasksets.md) for task {task.id!r}"
    feedback, heldout, reference = (
        read_text(where / name, TaskSetError, expected) for name in SUITE_FILES
    )
    for name, source in (("feedback.py", feedback), ("heldout.py", heldout)):
        _parsed(where / name, source)
        # guard: coding-set-suites-checked-when
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
    return CodeSuites(entry_point, feedback, heldout, reference)


def _parsed(path: Path, source: str) -> ast.Module:
    try:
        return ast.parse(source, str(path))
    except SyntaxError as exc:
        raise TaskSetError(f"{path}:{exc.lineno}: not valid Python ({exc.msg})") from None


def digest(value: Any) -> str:
    """A short, stable hash of a JSON value: what fingerprints are made of."""
    canonical = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]
