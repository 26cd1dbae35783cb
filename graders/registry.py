"""The grader registry: grader names -> the task model they read and a factory.

A task set names its grader in taskset.toml (``grader = "exact"``). The grader decides how
the set's tasks are read (``task_model``: each line of tasks.jsonl, its ``expected`` the
answer key) and how answers are graded (``factory``, building a ``Grader`` for the set).
An unknown name is refused when the set loads, with the registered names and how to add
one. Plugins add graders with ``@loopbench.register_grader`` (harness/plugins.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from graders.base import Grader, GraderSetup
from graders.builtin import code_tests_grader, exact_grader
from graders.task_models import CodeTask, Task, TaskBase
from harness.errors import UnknownName
from harness.registry import Registry

GraderFactory = Callable[[GraderSetup], Grader[Any]]
FactoryT = TypeVar("FactoryT", bound=GraderFactory)

#: A task set's own file (a CSV row's answer cell, an Inspect sample's target) made into
#: the grader's ``expected``: the target, and what else the row gives by name (``choices``,
#: ``tolerance``).
TargetReader = Callable[[Any, Mapping[str, Any]], Any]


@dataclass(frozen=True)
class SelfCase:
    """One answer the grader must judge as said: ``loopbench grade --self-test`` runs it."""

    expected: Any
    """The task's ``expected``, as tasks.jsonl writes it."""
    answer: str
    correct: bool
    why: str = ""
    options: Mapping[str, Any] = field(default_factory=dict)
    """The grader's options for this case (``GraderSetup.options``)."""


class UnknownGrader(UnknownName):
    pass


@dataclass(frozen=True)
class GraderInfo:
    name: str
    task_model: type[TaskBase]
    """What each line of tasks.jsonl is read as; its ``expected`` is the answer key."""
    factory: GraderFactory
    summary: str
    """What the grader checks, in one line."""
    example: str = '{"id": "q1", "question": "...", "expected": ...}'
    """One task line as the grader reads it, shown when a line is wrong."""
    runs_code: bool = False
    """It runs model-written code: callers make its sandbox (and say how isolated it is)."""
    cases: tuple[SelfCase, ...] = ()
    """What ``grade --self-test`` checks it on."""
    from_target: TargetReader | None = None
    """How a row of a CSV, JSONL, Parquet or Inspect file becomes its ``expected``; a grader
    without one grades only sets in its own tasks.jsonl format."""

    def build(self, setup: GraderSetup) -> Grader[Any]:
        return self.factory(setup)


GRADERS = Registry[GraderInfo](
    "grader",
    "loopbench.graders",
    UnknownGrader,
    "decorate its factory with @loopbench.register_grader(name, TaskModel, summary)",
)


def register_grader(
    name: str,
    task_model: type[TaskBase],
    summary: str,
    *,
    example: str = "",
    runs_code: bool = False,
    cases: tuple[SelfCase, ...] = (),
    from_target: TargetReader | None = None,
) -> Callable[[FactoryT], FactoryT]:
    """Register the decorated factory as the grader ``name``, which a task set then names
    in its taskset.toml (``grader = "last_word"``).

    Each line of such a set's tasks.jsonl is read as ``task_model``, a ``TaskBase``
    subclass whose ``expected`` field is the answer key. The factory takes the set's
    ``GraderSetup`` and returns a ``Grader``, whose ``async grade(task, answer)`` returns a
    ``Grade``. ``example`` is a task line, shown when a line is wrong; ``runs_code`` says
    the grader runs model-written code, so that callers make it a sandbox
    (``GraderSetup.sandbox``) and say how isolated it is. ``cases`` are answers
    ``grade --self-test`` checks it on; ``from_target`` makes a data file's answer cell
    its ``expected`` (``--tasks data.csv``).

        class WordTask(loopbench.TaskBase):
            expected: str

        class LastWord(loopbench.Grader[WordTask]):
            async def grade(self, task: WordTask, answer: str) -> loopbench.Grade:
                said = (answer.split() or [""])[-1].strip(".")
                return loopbench.Grade(said == task.expected, f"last word {said!r}")

        @loopbench.register_grader("last_word", WordTask, "the answer ends with the word")
        def last_word(setup: loopbench.GraderSetup) -> LastWord:
            return LastWord()
    """

    def add(factory: FactoryT) -> FactoryT:
        if not (isinstance(task_model, type) and issubclass(task_model, TaskBase)):
            raise ValueError(
                f"grader {name!r}: its task model must be a subclass of loopbench.TaskBase, "
                f"not {task_model!r}"
            )
        shown = example or GraderInfo.example
        info = GraderInfo(name, task_model, factory, summary, shown, runs_code, cases, from_target)
        GRADERS.add(name, info)
        return factory

    return add


_DEPOTS = {"numbers": [79], "entities": ["Rotterdam"], "distractors": ["Gdansk", "Porto"]}
register_grader(
    "exact",
    Task,
    "the answer states exactly the expected numbers and names the expected entities",
    example='{"id": "q1", "question": "...", "expected": {"numbers": [84]}}',
    cases=(
        SelfCase(_DEPOTS, "Answer: Rotterdam, 79 more", True, "the final answer"),
        SelfCase(_DEPOTS, "Rotterdam, Gdansk, Porto or Leeds: 79", False, "a hedge"),
        SelfCase(_DEPOTS, "Rotterdam or Leeds, 79", False, "an entity offered with another"),
        SelfCase(_DEPOTS, "Rotterdam, not Gdansk: 79", True, "a negated distractor"),
        SelfCase(_DEPOTS, "Neither Gdansk nor Rotterdam: 79", False, "a negated entity"),
        SelfCase(_DEPOTS, "Rotterdam or Gdansk, 79", True, "seed 003's rule", {"rule": "seed"}),
    ),
)(exact_grader)
register_grader(
    "code_tests",
    CodeTask,
    "the code in the answer passes the task's held-out suite, run in the sandbox",
    example='{"id": "roman", "question": "...", "expected": {"entry_point": "parse_roman", '
    '"suite": "roman"}}',
    runs_code=True,
)(code_tests_grader)
