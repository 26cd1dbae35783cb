"""The number grader: right when the number the reply's final answer commits to is the
expected one, within an absolute tolerance.

The reply is read as every answer is (loopbench/graders/reading.py: the final answer, a
self-correction after it, the sentence that commits), its number as
loopbench/graders/stated_numbers.py reads one: digits, fractions, scaled numbers, percentages,
currency or words; a worked answer's result. A number negated ("not 17"), compared ("more than 17")
or in an aside ("18 (3 hens x 6)") is not the answer; two numbers offered ("17 or 18", "18 to 20")
and an amount left open ("18 or more", "at least 18") are a hedge, and wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, FiniteFloat, model_validator

from loopbench.graders.base import Grader, GraderSetup, SelfCase
from loopbench.graders.exact import DEFAULT_TOLERANCE, Grade
from loopbench.graders.options import GraderOptions, read_options
from loopbench.graders.register import GraderDetails, register_grader
from loopbench.graders.stated_numbers import read_number, stated_number
from loopbench.graders.task_models import TaskBase


def _bare_number(data: Any) -> Any:
    return (
        {"number": data} if isinstance(data, int | float) and not isinstance(data, bool) else data
    )


class NumberExpected(BaseModel):
    """The number, as a bare number or with its own tolerance."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    number: FiniteFloat
    tolerance: FiniteFloat | None = Field(default=None, ge=0)
    """Absolute; the grader's ``tolerance`` option when unset."""

    _bare = model_validator(mode="before")(_bare_number)


class NumberTask(TaskBase):
    expected: NumberExpected


class NumberOptions(GraderOptions):
    tolerance: FiniteFloat = Field(default=DEFAULT_TOLERANCE, ge=0)


class NumberGrader(Grader[NumberTask]):
    def __init__(self, tolerance: float) -> None:
        self._tolerance = tolerance

    async def grade(self, task: NumberTask, answer: str) -> Grade:
        want = task.expected.number
        tolerance = task.expected.tolerance
        tolerance = self._tolerance if tolerance is None else tolerance
        said = stated_number(answer)
        if said.value is None:
            return Grade(False, f"{said.why}; expected {want:g}")
        got = said.value.value
        if not said.value.matches(want, tolerance):
            return Grade(False, f"final number {got:g}; expected {want:g}")
        return Grade(True, f"final number {got:g} matches")

    def canonical(self, task: NumberTask, answer: str) -> str:
        """The final number; "" when there is none (or a hedge)."""
        got = stated_number(answer).value
        return "" if got is None else f"{got.value:g}"


def number_from_target(target: Any, extras: Mapping[str, Any]) -> Any:
    """A number, or its text ("1,234", "$5"), with the row's ``tolerance``."""
    number = read_number(target) if isinstance(target, str) else None
    given = {"tolerance": extras["tolerance"]} if "tolerance" in extras else {}
    return {**given, "number": target if number is None else number}


NUMBER_CASES = (
    SelfCase(18, "I think 17 or 18", False, "a hedge in the last number's clause"),
    SelfCase(18, "So she has 18 eggs, not 17 or 19", True, "the last number not negated"),
    SelfCase(18, "Between 10 and 20 eggs; I count 18", True, "the last clause's number"),
    SelfCase(18, "18", True, "the number alone"),
    SelfCase(18, "She sells 16 - 3 - 4 = 9 eggs at $2 each.\n#### 18", True, "GSM8K's ####"),
    SelfCase(18, "16 - 3 - 4 = 9 eggs, 9 * 2 = 18.\nAnswer: $18", True, "the Answer line"),
    SelfCase(18, "9 eggs at $2 make 18 dollars", True, "else the reply's last number"),
    SelfCase(18, "Answer: 18 is wrong, it is 17", False, "the last number when no = says"),
    SelfCase(1234.5, "Answer: $1,234.50", True, "thousands separator, $ and cents"),
    SelfCase(-3, "The answer is -3 degrees.", True, "a negative number"),
    SelfCase(50, "Answer: 50%", True, "a trailing %"),
    SelfCase(18, "Answer: 18 or 19", False, "two numbers: a hedge"),
    SelfCase(18, "Answer: not 17, 18", True, "a negated number does not count"),
    SelfCase(18, "Answer: 9 * 2 = 18", True, "the result of a worked answer"),
    SelfCase(18, "18 eggs in all... Answer: 17", False, "the reasoning's numbers do not count"),
    SelfCase(18, "Answer: 218", False, "a number that holds the expected one"),
    SelfCase({"number": 3.14159, "tolerance": 0.01}, "Answer: 3.14", True, "the task's tolerance"),
    SelfCase(3.14159, "Answer: 3.14", False, "the default tolerance"),
    SelfCase(3.14159, "Answer: 3.14", True, "the grader's tolerance", {"tolerance": 0.01}),
    SelfCase(18, "I cannot tell.", False, "no number"),
    SelfCase(18, "Answer: 18, 19, 20", False, "numbers listed together: a hedge"),
    SelfCase(18, "Answer: roughly 18 to 20 eggs", False, "a range: a hedge"),
    SelfCase(18, "Answer: 18 eggs (3 hens x 6)", True, "an aside's numbers are not listed"),
    SelfCase(18, "Answer: 18 is not correct", False, "a 'not' after the number negates it"),
    SelfCase(18, "Answer: 18 = 9 * 2", True, "the side of = that is a single number"),
    SelfCase(18, "Answer: eighteen", True, "number words when there are no digits"),
)


@register_grader(
    "number",
    NumberTask,
    "the final number (#### N, an Answer: line, else the last) is the expected one",
    GraderDetails(
        example='{"id": "q1", "question": "...", "expected": 18}',
        cases=NUMBER_CASES,
        from_target=number_from_target,
    ),
)
def number_grader(setup: GraderSetup) -> NumberGrader:
    return NumberGrader(read_options("number", setup.options, NumberOptions).tolerance)
