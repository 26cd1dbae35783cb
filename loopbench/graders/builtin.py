"""Two shipped graders, registered here: ``exact`` (the typed answer key, by the strict rule
or seed 003's) and ``code_tests`` (the code in an answer run against the held-out suite in
the sandbox).

Code runs also get their checks (the feedback suite, the model's own tests) and two
measures of what a repair did (seed 003, 3.5): ``code_edits``, answers on the way whose
code differed from the one before, and ``edits_same_result``, those of them that left the
held-out verdict as it was. Code is compared by its syntax tree: a change of comments or
layout is not an edit.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from itertools import pairwise
from typing import Any, Literal

from loopbench.graders.base import Grader, GraderSetup
from loopbench.graders.code_tests import CodeGrader, SuiteCheck, code_in
from loopbench.graders.exact import Grade, grade
from loopbench.graders.exact_cases import EXACT_CASES
from loopbench.graders.hedges import strict_grade
from loopbench.graders.options import GraderOptions, read_options
from loopbench.graders.reading import answer_text
from loopbench.graders.readings import typed_key
from loopbench.graders.register import GraderDetails, register_grader
from loopbench.graders.task_models import CodeTask, Task, TaskBase
from loopbench.sandbox.limits import Limits
from loopbench.sandbox.run import Sandbox

#: Answers up to this long have their verdict and reading kept (``ExactGrader``) ...
MEMO_CHARS = 1_000
#: ... this many of each at most (all are let go when it is full).
MEMO_SIZE = 4_096


class ExactGrader(Grader[Task]):
    """The answer must state exactly the expected numbers and name the expected entities;
    under the strict rule (the default), in its final answer, and hedging not.

    A verdict depends on the answer and its task's answer key alone, and a grid's runs
    often answer a task alike ("84"), so a short answer's verdict and reading are kept and
    given again: reading an answer costs more than the rest of a run's own work."""

    def __init__(self, rule: str = "strict") -> None:
        self.rule = rule
        #: By the answer key (each kept, so that its id is not reused) and the answer.
        self._grades: dict[tuple[int, str], tuple[Any, Grade]] = {}
        self._readings: dict[tuple[int, str], tuple[Any, str]] = {}

    async def grade(self, task: Task, answer: str) -> Grade:
        expected = task.expected
        key = (id(expected), answer)
        if (kept := self._grades.get(key)) is not None:
            return kept[1]
        if self.rule == "seed":
            verdict = grade(answer, expected.numbers, expected.entities, expected.tolerance)
        else:
            verdict = strict_grade(answer, expected)
        _keep(self._grades, key, expected, verdict)
        return verdict

    def canonical(self, task: Task, answer: str) -> str:
        """The typed reading of what the rule reads: the final answer, or (seed) all of it."""
        key = (id(task.expected), answer)
        if (kept := self._readings.get(key)) is not None:
            return kept[1]
        reading = typed_key(answer if self.rule == "seed" else answer_text(answer).value or "")
        _keep(self._readings, key, task.expected, reading)
        return reading


def _keep(memo: dict[tuple[int, str], tuple[Any, Any]], key: tuple[int, str], *kept: Any) -> None:
    """Keep what was read of a short answer, and the answer key it was read against."""
    # guard: exact-memo-short-answers-only
    if len(key[1]) > MEMO_CHARS:
        return
    if len(memo) >= MEMO_SIZE:
        memo.clear()
    memo[key] = (kept[0], kept[1])


class ExactOptions(GraderOptions):
    rule: Literal["strict", "seed"] = "strict"
    """strict: the final answer, hedges refused; seed: seed 003's rule (every expected
    entity named, nothing else checked)."""


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


@register_grader(
    "exact",
    Task,
    "the answer states exactly the expected numbers and names the expected entities",
    GraderDetails(
        example='{"id": "q1", "question": "...", "expected": {"numbers": [84]}}',
        cases=EXACT_CASES,
        from_target=exact_from_target,
    ),
)
def exact_grader(setup: GraderSetup) -> ExactGrader:
    return ExactGrader(read_options("exact", setup.options, ExactOptions).rule)


class CodeTestsGrader(Grader[CodeTask]):
    """The code in the answer must pass the task's held-out suite."""

    def __init__(self, sandbox: Sandbox) -> None:
        self._code = CodeGrader(sandbox)

    async def grade(self, task: CodeTask, answer: str) -> Grade:
        verdict, _ = await self._code.grade(task.suites, answer)
        return verdict

    def check(self, task: CodeTask) -> SuiteCheck:
        return SuiteCheck(self._code, task.suites)

    def measures(
        self, task: CodeTask, answers: list[str], verdicts: list[bool]
    ) -> dict[str, float]:
        return edit_measures(task, answers, verdicts)


@register_grader(
    "code_tests",
    CodeTask,
    "the code in the answer passes the task's held-out suite, run in the sandbox",
    GraderDetails(
        example='{"id": "roman", "question": "...", "expected": {"entry_point": "parse_roman", '
        '"suite": "roman"}}',
        runs_code=True,
    ),
)
def code_tests_grader(setup: GraderSetup) -> CodeTestsGrader:
    return CodeTestsGrader(setup.sandbox or Sandbox(Limits(timeout_s=setup.timeout_s)))


def edit_measures(task: TaskBase, answers: list[str], verdicts: list[bool]) -> dict[str, float]:
    """How often the code changed between answers on the way, and how often for nothing;
    none for a task without code."""
    if not isinstance(task, CodeTask):
        return {}
    codes = [_shape(code_in(answer, task.suites.entry_point)) for answer in answers]
    changed = [a != b for a, b in pairwise(codes)]
    same = [a == b for a, b in pairwise(verdicts)]
    return {
        "code_edits": float(sum(changed)),
        "edits_same_result": float(sum(c and s for c, s in zip(changed, same, strict=True))),
    }


def _shape(code: str | None) -> str | None:
    """Code as its syntax tree, so a changed comment or layout is not an edit."""
    if code is None:
        return None
    try:
        # guard: comment-not-edit
        return ast.dump(ast.parse(code))
    except SyntaxError:
        return code
