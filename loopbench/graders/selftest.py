"""``loopbench grade --self-test``: every registered grader judged on its own cases
(``register_grader(..., GraderDetails(cases=...))``), each a task's expected, an answer and
the verdict a careful reader gives."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from loopbench.graders.answer_size import grade_read
from loopbench.graders.base import GraderSetup, SelfCase
from loopbench.graders.exact import Grade
from loopbench.graders.registry import GRADERS, GraderInfo
from loopbench.harness.errors import BadInput
from loopbench.harness.files import describe_errors
from loopbench.harness.structured import StructureError, load_json


@dataclass(frozen=True)
class CaseResult:
    grader: str
    case: SelfCase
    grade: Grade
    ok: bool


class ExpectedError(BadInput):
    """``grade --expected`` is not what the grader's tasks expect."""


def read_expected(info: GraderInfo, name: str, given: str) -> Any:
    """``--expected`` read as the grader's task model reads a task's ``expected``;
    ``ExpectedError`` saying why not, with an example of what grader ``name`` takes."""
    example = (
        'Write e.g. \'{"numbers": [79], "entities": ["Rotterdam"]}\''
        if name == "exact"
        else f"Write it as a task of grader {name!r} gives it, e.g. {info.example}"
    )
    try:
        # guard: grade-expected-read-as-strictly
        value = load_json(given)  # a key given twice, NaN: refused, as in a task file
        model: Any = info.task_model.model_fields["expected"].annotation
        TypeAdapter(model).validate_python(value, strict=True)
    except StructureError as exc:
        raise ExpectedError(f"--expected: {exc.why}. {example}") from None
    except ValidationError as exc:
        why = describe_errors(exc, "(whole value)")
        raise ExpectedError(f"--expected: {why}. {example}") from None
    except (ValueError, RecursionError):  # a number of over 4300 digits; nesting too deep
        raise ExpectedError(
            f"--expected holds a number too long or nesting too deep. {example}"
        ) from None
    return value


def as_task(info: GraderInfo, expected: Any) -> Any:
    """A task of the grader's model expecting ``expected`` (``ValidationError`` if its
    model refuses it)."""
    question = {"id": "given", "question": "(the answer given)", "expected": expected}
    return info.task_model.model_validate(question, strict=True)


def grade_one(info: GraderInfo, task: Any, answer: str, options: Mapping[str, Any]) -> Grade:
    """``answer`` to ``task`` graded by the grader built with ``options`` for a set of that
    one task (``GraderOptionError`` when it refuses them), read as a run reads it
    (loopbench/graders/answer_size.py)."""
    grader = info.build(GraderSetup(Path.cwd(), options=options, tasks=(task,)))
    return asyncio.run(grade_read(grader, task, answer))


def run_case(name: str, info: GraderInfo, case: SelfCase) -> CaseResult:
    """The case graded; a case whose expected its grader's model refuses fails."""
    try:
        task = as_task(info, case.expected)
    except ValidationError as exc:
        refused = Grade(not case.correct, f"its expected is refused: {describe_errors(exc)}")
        return CaseResult(name, case, refused, False)
    grade = grade_one(info, task, case.answer, case.options)
    return CaseResult(name, case, grade, grade.correct == case.correct)


def run_self_test() -> list[CaseResult]:
    """Each registered grader's cases, with the grade each got."""
    return [
        run_case(name, info, case)
        for name, info in GRADERS.registered().items()
        for case in info.cases
    ]
