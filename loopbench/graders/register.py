"""How a grader registers: ``@register_grader(name, TaskModel, summary)`` on its factory,
in the module that defines it, as a pattern registers in its own.

The shipped graders are imported, and so registered, by loopbench/graders/registry.py, which lists
them; a plugin's by its own import (``--plugin``, or an entry point of the group
``loopbench.graders``: loopbench/harness/plugins.py). A task set then names its grader in
taskset.toml (``grader = "exact"``). This module imports no grader, so that each can
import it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from loopbench.graders.base import Grader, GraderSetup
from loopbench.graders.base import SelfCase as SelfCase  # where the graders' cases are written
from loopbench.graders.task_models import TaskBase
from loopbench.harness.errors import UnknownName
from loopbench.harness.registry import Registry

GraderFactory = Callable[[GraderSetup], Grader[Any]]
FactoryT = TypeVar("FactoryT", bound=GraderFactory)

#: A task set's own file (a CSV row's answer cell, an Inspect sample's target) made into
#: the grader's ``expected``: the target, and what else the row gives by name (``choices``,
#: ``tolerance``).
TargetReader = Callable[[Any, Mapping[str, Any]], Any]

#: The task line shown when a line is wrong, for a grader that gives none of its own.
PLAIN_EXAMPLE = '{"id": "q1", "question": "...", "expected": ...}'


class UnknownGrader(UnknownName):
    pass


@dataclass(frozen=True)
class GraderDetails:
    """What a grader may say of itself besides its name, task model and summary: each has a
    default, so a grader gives only those it needs."""

    example: str = PLAIN_EXAMPLE
    """One task line as the grader reads it, shown when a line is wrong."""
    runs_code: bool = False
    """It runs model-written code: callers make its sandbox (and say how isolated it is)."""
    cases: tuple[SelfCase, ...] = ()
    """What ``grade --self-test`` checks it on."""
    from_target: TargetReader | None = None
    """How a row of a CSV, JSONL, Parquet or Inspect file becomes its ``expected``; a grader
    without one grades only sets in its own tasks.jsonl format."""
    check: Callable[[GraderSetup], object] | None = None
    """How a set's options and tasks are checked when it loads, for a grader that cannot be
    built then (the judge's needs the run's judge endpoint); building it otherwise."""
    file_options: tuple[str, ...] = ()
    """Options naming a file: a relative path given in taskset.toml is read from the set's
    folder, one given by ``--grader`` from the current directory."""
    delegate_option: str | None = None
    """The option naming another grader this one builds with its other options
    (``choice_or``'s ``plain``): that grader's ``file_options`` are this one's too."""


@dataclass(frozen=True)
class GraderInfo:
    name: str
    task_model: type[TaskBase]
    """What each line of tasks.jsonl is read as; its ``expected`` is the answer key."""
    factory: GraderFactory
    summary: str
    """What the grader checks, in one line."""
    details: GraderDetails = GraderDetails()

    @property
    def example(self) -> str:
        return self.details.example or PLAIN_EXAMPLE

    @property
    def runs_code(self) -> bool:
        return self.details.runs_code

    @property
    def cases(self) -> tuple[SelfCase, ...]:
        return self.details.cases

    @property
    def from_target(self) -> TargetReader | None:
        return self.details.from_target

    def build(self, setup: GraderSetup) -> Grader[Any]:
        return self.factory(setup)


class _Graders(Registry[GraderInfo]):
    """The graders by name: the shipped ones in the order loopbench/graders/registry.py lists their
    modules (``list_shipped``), whichever of them was imported first, then plugins' as
    added. Kept in that order as they are added, so a lookup only looks."""

    _shipped: tuple[str, ...] = ()

    def add(self, name: str, entry: GraderInfo) -> None:
        super().add(name, entry)
        self._order()

    def list_shipped(self, modules: tuple[str, ...]) -> None:
        """The shipped graders' modules, in the order their graders are listed."""
        self._shipped = modules
        self._order()

    def _order(self) -> None:
        place = {module: index for index, module in enumerate(self._shipped)}

        def listed(item: tuple[str, GraderInfo]) -> int:
            return place.get(getattr(item[1].factory, "__module__", ""), len(place))

        self._entries = dict(sorted(self._entries.items(), key=listed))


GRADERS = _Graders(
    "grader",
    "loopbench.graders",
    UnknownGrader,
    "decorate its factory with @loopbench.register_grader(name, TaskModel, summary)",
)


def register_grader(
    name: str,
    task_model: type[TaskBase],
    summary: str,
    details: GraderDetails = GraderDetails(),
) -> Callable[[FactoryT], FactoryT]:
    """Register the decorated factory as the grader ``name``, which a task set then names
    in its taskset.toml (``grader = "last_word"``).

    Each line of such a set's tasks.jsonl is read as ``task_model``, a ``TaskBase``
    subclass whose ``expected`` field is the answer key. The factory takes the set's
    ``GraderSetup`` and returns a ``Grader``, whose ``async grade(task, answer)`` returns a
    ``Grade``. ``details`` (``GraderDetails``) says what else it needs: ``example``, a task
    line, shown when a line is wrong; ``runs_code``, that it runs model-written code, so
    that callers make it a sandbox (``GraderSetup.sandbox``) and say how isolated it is;
    ``cases``, answers ``grade --self-test`` checks it on; ``from_target``, how a data
    file's answer cell becomes its ``expected`` (``--tasks data.csv``).

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
        # guard: grader-reads-task-model
        if not (isinstance(task_model, type) and issubclass(task_model, TaskBase)):
            raise ValueError(
                f"grader {name!r}: its task model must be a subclass of loopbench.TaskBase, "
                f"not {task_model!r}"
            )
        info = GraderInfo(name, task_model, factory, summary, details)
        GRADERS.add(name, info)
        return factory

    return add
