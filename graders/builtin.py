"""The shipped graders: ``exact`` (the typed answer key, by the strict rule or seed 003's)
and ``code_tests`` (the code in an answer run against the held-out suite in the sandbox).

Code runs also get their checks (the feedback suite, the model's own tests) and two
measures of what a repair did (seed 003, 3.5): ``code_edits``, answers on the way whose
code differed from the one before, and ``edits_same_result``, those of them that left the
held-out verdict as it was. Code is compared by its syntax tree: a change of comments or
layout is not an edit.
"""

from __future__ import annotations

import ast
from itertools import pairwise
from typing import Literal

from graders.base import Grader, GraderSetup
from graders.code_tests import CodeGrader, SuiteCheck, code_in
from graders.exact import Grade, grade
from graders.hedges import strict_grade
from graders.options import GraderOptions, read_options
from graders.reading import answer_text
from graders.readings import typed_key
from graders.task_models import CodeTask, Task, TaskBase
from sandbox.limits import Limits
from sandbox.run import Sandbox


class ExactGrader(Grader[Task]):
    """The answer must state exactly the expected numbers and name the expected entities;
    under the strict rule (the default), in its final answer, and hedging not."""

    def __init__(self, rule: str = "strict") -> None:
        self.rule = rule

    async def grade(self, task: Task, answer: str) -> Grade:
        expected = task.expected
        if self.rule == "seed":
            return grade(answer, expected.numbers, expected.entities, expected.tolerance)
        return strict_grade(answer, expected)

    def canonical(self, task: Task, answer: str) -> str:
        """The typed reading of what the rule reads: the final answer, or (seed) all of it."""
        return typed_key(answer if self.rule == "seed" else answer_text(answer).value or "")


class ExactOptions(GraderOptions):
    rule: Literal["strict", "seed"] = "strict"
    """strict: the final answer, hedges refused; seed: seed 003's rule (every expected
    entity named, nothing else checked)."""


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
        return ast.dump(ast.parse(code))
    except SyntaxError:
        return code
