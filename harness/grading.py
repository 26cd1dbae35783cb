"""Grading a run's answers with the grader its task set names (graders/registry.py): the
verdict on each answer, the check a pattern may run on a task's code, and the grader's
measures of the answers given on the way (the code-test grader's edits)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graders.base import AnswerCheck, Grader, GraderSetup
from graders.code_check import CodeCheck
from graders.exact import Grade
from graders.registry import GRADERS
from graders.sandbox import Sandbox
from tasks.taskset import AnyTask, TaskSet


class Grading:
    """Grades the answers of one task set's runs."""

    def __init__(self, taskset: TaskSet, sandbox: Sandbox | None = None) -> None:
        setup = GraderSetup(
            taskset.path, taskset.timeout_s, sandbox, taskset.grader_options, taskset.tasks
        )
        self._grader: Grader[Any] = GRADERS.lookup(taskset.grader).build(setup)

    def check(self, task: AnyTask) -> CodeCheck | None:
        return self._grader.check(task)

    def answer_check(self, task: AnyTask) -> AnswerCheck | None:
        return self._grader.answer_check(task)

    def canonical(self, task: AnyTask) -> Callable[[str], str]:
        """How the grader reads answers to ``task`` alike (its ``canonical``)."""
        return lambda answer: self._grader.canonical(task, answer)

    async def grade(self, task: AnyTask, answer: str) -> Grade:
        return await self._grader.grade(task, answer)

    def measures(self, task: AnyTask, answers: list[str], verdicts: list[bool]) -> dict[str, float]:
        return self._grader.measures(task, answers, verdicts)
