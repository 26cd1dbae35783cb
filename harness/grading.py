"""Grading a run's answers: the typed exact grader, or, on a coding task set, the code-test
grader running the held-out suite in the sandbox.

Code runs also get their checks (``ctx.code``: the feedback suite, the model's own tests)
and two measures of what a repair did (seed 003, 3.5): ``code_edits``, answers on the way
whose code differed from the one before, and ``edits_same_result``, those of them that
left the held-out verdict as it was. Code is compared by its syntax tree: a change of
comments or layout is not an edit.
"""

from __future__ import annotations

import ast
from itertools import pairwise

from graders.code_tests import CodeGrader, SuiteCheck, code_in
from graders.exact import Grade, grade
from graders.sandbox import Limits, Sandbox
from harness.patterns.base import CodeCheck
from tasks.taskset import AnyTask, CodeTask, TaskSet


class Grading:
    """Grades the answers of one task set's runs."""

    def __init__(self, taskset: TaskSet, sandbox: Sandbox | None = None) -> None:
        self._code: CodeGrader | None = None
        if taskset.is_code:
            self._code = CodeGrader(sandbox or Sandbox(Limits(timeout_s=taskset.timeout_s)))

    def check(self, task: AnyTask) -> CodeCheck | None:
        if self._code is None or not isinstance(task, CodeTask):
            return None
        return SuiteCheck(self._code, task.suites)

    async def grade(self, task: AnyTask, answer: str) -> Grade:
        if isinstance(task, CodeTask):
            if self._code is None:
                raise ValueError(f"task {task.id!r} is a coding task in a set without its grader")
            verdict, _ = await self._code.grade(task.suites, answer)
            return verdict
        expected = task.expected
        return grade(answer, expected.numbers, expected.entities, expected.tolerance)


def edit_measures(task: AnyTask, answers: list[str], verdicts: list[bool]) -> dict[str, float]:
    """How often the code changed between answers on the way, and how often for nothing."""
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
