"""Grading a run's answers with the grader its task set names (loopbench/graders/registry.py), or
with a plain function (``Experiment(grader=fn)``): the verdict on each answer, the check a
pattern may run on a task's code, and the grader's measures of the answers given on the
way (the code-test grader's edits)."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

from loopbench.graders.answer_size import canonical_read, check_read, grade_read, read_part
from loopbench.graders.base import AnswerCheck, Grader, GraderSetup, JudgeEndpoint
from loopbench.graders.code_check import CodeCheck
from loopbench.graders.exact import Grade
from loopbench.graders.registry import GRADERS
from loopbench.harness.errors import BadInput
from loopbench.sandbox.run import Sandbox
from loopbench.tasks.taskset import AnyTask, TaskSet

#: A grader as a plain function of the task and the answer (the pattern's whole reply): it
#: returns True or False, a score from 0 to 1 (right from ``PASS_SCORE``), or a ``Grade``
#: (its own verdict, reason and score); it may be async.
GraderFunction = Callable[[Any, str], Any]
PASS_SCORE = 0.5


class GraderFunctionError(BadInput):
    """The grader function raised, or returned what is not a verdict: the run's grading
    failed (recorded, and the grid goes on)."""


class FunctionGrader(Grader[AnyTask]):
    def __init__(self, function: GraderFunction) -> None:
        self._function = function
        self._name = getattr(function, "__name__", "grader")

    async def grade(self, task: AnyTask, answer: str) -> Grade:
        try:
            given = self._function(task, answer)
            if inspect.isawaitable(given):
                given = await given
        except Exception as exc:
            raise GraderFunctionError(
                f"{self._name}(task, answer) raised {type(exc).__name__}: {exc}"
            ) from exc
        return self._verdict(given)

    def _verdict(self, given: Any) -> Grade:
        if isinstance(given, Grade):
            return given
        if isinstance(given, bool):
            return Grade(given, f"{self._name} says {'right' if given else 'wrong'}")
        if isinstance(given, int | float) and math.isfinite(given) and 0 <= given <= 1:
            score = float(given)
            return Grade(score >= PASS_SCORE, f"{self._name} scores {score:.2f}", score)
        raise GraderFunctionError(
            f"{self._name}(task, answer) returned {given!r:.80} ({type(given).__name__}); "
            "return True or False, a score from 0 to 1, or a loopbench.Grade"
        )


class Grading:
    """Grades the answers of one task set's runs."""

    def __init__(
        self,
        taskset: TaskSet,
        sandbox: Sandbox | None = None,
        function: GraderFunction | None = None,
        judge: JudgeEndpoint | None = None,
    ) -> None:
        self._grader: Grader[Any]
        self._whole = function is not None
        """A plain function's grader reads the whole answer: its time is its author's."""
        if function is not None:
            self._grader = FunctionGrader(function)
            return
        setup = GraderSetup(
            taskset.path, taskset.timeout_s, sandbox, taskset.grader_options, taskset.tasks, judge
        )
        self._grader = GRADERS.lookup(taskset.grader).build(setup)

    @property
    def grades_on_the_way(self) -> bool:
        """Whether the answers given on the way are graded too (not by a judge)."""
        return self._grader.grades_on_the_way

    def identity(self) -> dict[str, Any]:
        """What besides its name and options makes the grader's verdicts (``Grader.identity``)."""
        return self._grader.identity()

    def check(self, task: AnyTask) -> CodeCheck | None:
        return self._grader.check(task)

    def answer_check(self, task: AnyTask) -> AnswerCheck | None:
        check = self._grader.answer_check(task)
        return check if self._whole else check_read(check)

    def canonical(self, task: AnyTask) -> Callable[[str], str]:
        """How the grader reads answers to ``task`` alike (its ``canonical``)."""
        if self._whole:
            return lambda answer: self._grader.canonical(task, answer)
        # guard: run-canonical-reading-reads-huge
        return lambda answer: canonical_read(self._grader, task, answer)

    async def grade(self, task: AnyTask, answer: str, reply: str | None = None) -> Grade:
        """The verdict on ``answer`` (on ``reply``, the final reply whole, for a grader that
        reads replies); a registered grader reads a huge answer's end only
        (loopbench/graders/answer_size.py)."""
        # guard: grader-reading-replies-given-reply
        if reply is not None and self._grader.reads_reply:
            answer = reply
        if self._whole:
            return await self._grader.grade(task, answer)
        # guard: run-grades-huge-reply-end
        return await grade_read(self._grader, task, answer)

    def measures(self, task: AnyTask, answers: list[str], verdicts: list[bool]) -> dict[str, float]:
        read = answers if self._whole else [read_part(answer) for answer in answers]
        return self._grader.measures(task, read, verdicts)
