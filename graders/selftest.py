"""``loopbench grade --self-test``: every registered grader judged on its own cases
(``register_grader(..., cases=...)``), each a task's expected, an answer and the verdict a
careful reader gives."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graders.base import GraderSetup, SelfCase
from graders.exact import Grade
from graders.registry import GRADERS, GraderInfo


@dataclass(frozen=True)
class CaseResult:
    grader: str
    case: SelfCase
    grade: Grade

    @property
    def ok(self) -> bool:
        return self.grade.correct == self.case.correct


def as_task(info: GraderInfo, expected: Any) -> Any:
    """A task of the grader's model expecting ``expected`` (``ValidationError`` if its
    model refuses it)."""
    question = {"id": "given", "question": "(the answer given)", "expected": expected}
    return info.task_model.model_validate(question, strict=True)


def grade_one(info: GraderInfo, task: Any, answer: str, options: Mapping[str, Any]) -> Grade:
    """``answer`` to ``task`` graded by the grader built with ``options`` for a set of that
    one task (``GraderOptionError`` when it refuses them)."""
    grader = info.build(GraderSetup(Path.cwd(), options=options, tasks=(task,)))
    return asyncio.run(grader.grade(task, answer))


def run_self_test() -> list[CaseResult]:
    """Each registered grader's cases, with the grade each got."""
    return [
        CaseResult(
            name, case, grade_one(info, as_task(info, case.expected), case.answer, case.options)
        )
        for name, info in GRADERS.registered().items()
        for case in info.cases
    ]
