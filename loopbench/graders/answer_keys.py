"""What a task expects, as task sets write it: the exact grader's answer key, a coding
task's entry point and suites, and a generated question's solution (its look-ups, facts
and operation). Each refuses, with a reason, a key that would grade wrongly."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, FiniteFloat, model_validator

from loopbench.graders.exact import normalise


def _not_blank(text: str) -> str:
    if not text.strip():
        raise ValueError("must hold more than white space")
    return text


#: Text that must hold something besides white space.
Filled = Annotated[str, AfterValidator(_not_blank)]


class Expected(BaseModel):
    """What a correct answer holds, read by the typed exact grader.

    An answer key that would grade wrongly is refused: a number that is not finite
    (NaN equals nothing, and a NaN tolerance accepts everything), a negative
    tolerance, a blank entity, and an expectation with neither numbers nor entities
    (which every answer would meet), a distractor that is an expected entity.
    """

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    # guard: answer-keys-would-grade-wrong
    numbers: list[FiniteFloat] = Field(default_factory=list)
    """Every number the answer must contain, as a multiset; no others may appear."""
    entities: list[Filled] = Field(default_factory=list)
    """Phrases the answer must name, compared after normalisation."""
    tolerance: FiniteFloat | None = Field(default=None, ge=0)
    """Absolute tolerance for numbers; 1e-9 when unset."""
    distractors: list[Filled] = Field(default_factory=list)
    """Entities the answer must not name (the other candidates a hedge would list),
    compared as entities are; the strict rule refuses an answer naming one."""

    @model_validator(mode="after")
    def _expects_something(self) -> Expected:
        if not self.numbers and not self.entities:
            raise ValueError(
                "expects nothing, so every answer would be correct; give numbers, entities "
                'or both, e.g. {"numbers": [84]}'
            )
        entities = {normalise(e) for e in self.entities}
        if clash := [d for d in self.distractors if normalise(d) in entities]:
            raise ValueError(
                f"distractor {clash[0]!r} is an expected entity, so no answer could be "
                "correct; list among distractors only entities the answer must not name"
            )
        return self


def _identifier(text: str) -> str:
    if not text.isidentifier():
        raise ValueError("must be a Python name, e.g. parse_roman")
    return text


def _folder_name(text: str) -> str:
    if not text or text in (".", "..") or "/" in text or "\\" in text:
        raise ValueError("must be the name of a folder under suites/, e.g. roman_numerals")
    return text


class CodeExpected(BaseModel):
    """What a coding task is graded on: the entry point its code must define, and its suites."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    entry_point: Annotated[str, AfterValidator(_identifier)]
    """The function or class the tests call, e.g. parse_roman."""
    suite: Annotated[str, AfterValidator(_folder_name)]
    """The folder under suites/ holding feedback.py, heldout.py and reference.py."""


#: What a generated question does with its facts (docs/tasksets.md, "Generated sets").
Operation = Literal["lookup", "difference", "sum", "ratio", "comparison", "which"]
OPERATIONS: tuple[Operation, ...] = ("lookup", "difference", "sum", "ratio", "comparison", "which")


class Fact(BaseModel):
    """One fact a solution read: what an entry states."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    title: Filled
    """The entry that states it."""
    field: Filled
    """What it is, e.g. "trucks", "born" or "manager"."""
    value: int | str
    """A count or a year, or the name the entry gives (which names the next entry)."""


class Solution(BaseModel):
    """How a generated question is answered: for an outside reader to check."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    operation: Operation
    lookups: list[Filled] = Field(min_length=1)
    """The titles looked up, in order: the shortest walk (see docs/tasksets.md)."""
    facts: list[Fact] = Field(min_length=1)
    """The facts read on the way, in the order they were used."""
