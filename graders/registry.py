"""The grader registry: grader names -> the task model they read and a factory.

A task set names its grader in taskset.toml (``grader = "exact"``). The grader decides how
the set's tasks are read (``task_model``: each line of tasks.jsonl, its ``expected`` the
answer key) and how answers are graded (``factory``, building a ``Grader`` for the set).
An unknown name is refused when the set loads, with the registered names and how to add
one. Plugins add graders with ``@loopbench.register_grader`` (harness/plugins.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from graders.base import Grader, GraderSetup
from graders.base import SelfCase as SelfCase  # where the graders' cases are written
from graders.builtin import code_tests_grader, exact_grader
from graders.choice import CHOICE_CASES, ChoiceTask, choice_from_target, choice_grader
from graders.exact_cases import EXACT_CASES
from graders.game24 import CASES as GAME24_CASES
from graders.game24 import Game24Task, game24_grader, numbers_from_target
from graders.json_answer import JSON_CASES, JsonTask, json_from_target, json_grader
from graders.label import LABEL_CASES, LabelTask, label_from_target, label_grader
from graders.number import NUMBER_CASES, NumberTask, number_from_target, number_grader
from graders.regex import REGEX_CASES, RegexTask, regex_from_target, regex_grader
from graders.squad import (
    EM_CASES,
    F1_CASES,
    EmTask,
    F1Task,
    em_grader,
    f1_grader,
    squad_from_target,
)
from graders.task_models import CodeTask, Task, TaskBase
from harness.errors import BadInput, UnknownName
from harness.registry import Registry

GraderFactory = Callable[[GraderSetup], Grader[Any]]
FactoryT = TypeVar("FactoryT", bound=GraderFactory)

#: A task set's own file (a CSV row's answer cell, an Inspect sample's target) made into
#: the grader's ``expected``: the target, and what else the row gives by name (``choices``,
#: ``tolerance``).
TargetReader = Callable[[Any, Mapping[str, Any]], Any]


class UnknownGrader(UnknownName):
    pass


class GraderSpecError(BadInput):
    """A ``--grader`` spec naming no registered grader, or written wrongly: one line."""


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


#: ``NAME`` or ``NAME:KEY=VALUE,...``; a comma starts a new option only before ``KEY=``, so a
#: value may be a JSON list (``labels=["yes","no"]``).
_OPTION_START = re.compile(r",(?=\s*[A-Za-z_][\w-]*\s*=)")
SPEC_EXAMPLE = "NAME or NAME:KEY=VALUE,... (e.g. number:tolerance=0.01)"


def parse_grader_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """The grader a spec names and its options, each value read as JSON when it parses,
    else as a string: ``"f1:threshold=0.8"`` -> ``("f1", {"threshold": 0.8})``. A grader
    that is not registered, or an option not written ``KEY=VALUE``, is refused
    (``GraderSpecError``); the options themselves are the factory's to check."""
    name, _, written = spec.partition(":")
    name = name.strip()
    try:
        GRADERS.lookup(name)
    except UnknownGrader as exc:
        raise GraderSpecError(f"--grader {spec!r}: {exc}") from None
    options: dict[str, Any] = {}
    for item in _OPTION_START.split(written) if written.strip() else []:
        key, equals, value = item.partition("=")
        if not equals or not key.strip():
            raise GraderSpecError(
                f"--grader {spec!r}: option {item.strip()!r} is not KEY=VALUE; write {SPEC_EXAMPLE}"
            )
        try:
            options[key.strip()] = json.loads(value)
        except ValueError:
            options[key.strip()] = value.strip()
    return name, options


def exact_from_target(target: Any, extras: Mapping[str, Any]) -> Any:
    """A data file's answer as exact's ``expected``: a number (or text that is one) the
    number to state, a JSON object (or its text) as it is, a list each of its items, any
    other text the entity to name; a mapped ``tolerance`` or ``distractors`` is kept."""
    if isinstance(target, str) and target.strip().startswith("{"):
        target = json.loads(target)
    if isinstance(target, dict):
        return target
    items = target if isinstance(target, list) else [target]
    expected: dict[str, Any] = {"numbers": [], "entities": []}
    for item in items:
        number = _number(item)
        if number is None:
            expected["entities"].append(item)
        else:
            expected["numbers"].append(number)
    return expected | {k: extras[k] for k in ("tolerance", "distractors") if k in extras}


def _number(value: Any) -> float | int | None:
    """A number, or text that is one (``"1,234"``, ``"-3.5"``); None otherwise."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _NUMERAL.fullmatch(value.strip()):
        return float(value.strip().replace(",", ""))
    return None


_NUMERAL = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|[-+]?\.\d+")


register_grader(
    "exact",
    Task,
    "the answer states exactly the expected numbers and names the expected entities",
    example='{"id": "q1", "question": "...", "expected": {"numbers": [84]}}',
    cases=EXACT_CASES,
    from_target=exact_from_target,
)(exact_grader)
register_grader(
    "code_tests",
    CodeTask,
    "the code in the answer passes the task's held-out suite, run in the sandbox",
    example='{"id": "roman", "question": "...", "expected": {"entry_point": "parse_roman", '
    '"suite": "roman"}}',
    runs_code=True,
)(code_tests_grader)

# The answer graders: each reads the reply as graders/reading.py does.
register_grader(
    "choice",
    ChoiceTask,
    "exactly one option is chosen, by its letter or text, and it is the expected one",
    example='{"id": "q1", "question": "...", "expected": {"choices": ["Paris", "Lyon"], '
    '"answer": "B"}}',
    cases=CHOICE_CASES,
    from_target=choice_from_target,
)(choice_grader)
register_grader(
    "label",
    LabelTask,
    "the final answer names the expected label and no other label of the set",
    example='{"id": "q1", "question": "...", "expected": {"label": "positive"}}',
    cases=LABEL_CASES,
    from_target=label_from_target,
)(label_grader)
register_grader(
    "number",
    NumberTask,
    "the final number (#### N, an Answer: line, else the last) is the expected one",
    example='{"id": "q1", "question": "...", "expected": 18}',
    cases=NUMBER_CASES,
    from_target=number_from_target,
)(number_grader)
register_grader(
    "regex",
    RegexTask,
    "the whole final answer matches the expected regular expression",
    example='{"id": "q1", "question": "...", "expected": "[0-9]{4}-[0-9]{2}-[0-9]{2}"}',
    cases=REGEX_CASES,
    from_target=regex_from_target,
)(regex_grader)
register_grader(
    "json",
    JsonTask,
    "the final answer is a JSON object with the expected fields (and schema)",
    example='{"id": "q1", "question": "...", "expected": {"fields": {"city": "Rotterdam"}}}',
    cases=JSON_CASES,
    from_target=json_from_target,
)(json_grader)
register_grader(
    "f1",
    F1Task,
    "SQuAD's token F1 of the final answer with the best gold answer reaches the threshold",
    example='{"id": "q1", "question": "...", "expected": ["Denver Broncos", "Broncos"]}',
    cases=F1_CASES,
    from_target=squad_from_target,
)(f1_grader)
register_grader(
    "em",
    EmTask,
    "the final answer equals a gold answer, both normalised as SQuAD does",
    example='{"id": "q1", "question": "...", "expected": ["Denver Broncos", "Broncos"]}',
    cases=EM_CASES,
    from_target=squad_from_target,
)(em_grader)
register_grader(
    "game24",
    Game24Task,
    "the final answer is an expression making 24 of exactly the task's numbers, each once",
    example='{"id": "4-9-10-13", "question": "...", "expected": {"numbers": [4, 9, 10, 13]}}',
    cases=GAME24_CASES,
    from_target=numbers_from_target,
)(game24_grader)
