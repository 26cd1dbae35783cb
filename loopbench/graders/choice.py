"""The choice grader: a multiple-choice question, right when the final answer chooses
exactly one option and it is the expected one.

An option is chosen by its letter as a word of its own ("B", "(B)", "B) Lyon", "Answer:
B"; A is the first option) or by its text ("The answer is Lyon"), and not when the answer
negates it ("not A", "B rather than A", "A is wrong", "C, not A or B": loopbench/graders/naming.py).
Naming two options ("A or B", "Paris or Lyon"), or all of them ("all of the above" when
that is not an option), is a hedge, and wrong.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from loopbench.graders.answer_keys import Filled
from loopbench.graders.base import Grader, GraderSetup, SelfCase
from loopbench.graders.exact import Grade, normalise
from loopbench.graders.naming import Candidates, chosen
from loopbench.graders.options import GraderOptions, read_options
from loopbench.graders.reading import Said
from loopbench.graders.register import GraderDetails, register_grader
from loopbench.graders.task_models import TaskBase

#: Words naming every option at once, when no option says them itself.
_EVERY = ("all of the above", "all of them", "all of these", "all the above", "every option")


class ChoiceExpected(BaseModel):
    """The options, in order, and the right one: its letter (A is the first) or its text."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    choices: list[Filled] = Field(min_length=2, max_length=26)
    """The options as the question lists them; A, B, C... in this order."""
    answer: Filled
    """The right option: its letter, or its text as in ``choices``."""

    @model_validator(mode="after")
    def _answer_is_an_option(self) -> ChoiceExpected:
        self.index  # noqa: B018 - refuses an answer naming no option, or two
        texts = [normalise(c) for c in self.choices]
        if len(set(texts)) < len(texts):
            raise ValueError("two choices read alike; each option must differ from the others")
        return self

    @property
    def index(self) -> int:
        """The right option's place in ``choices``."""
        answer = self.answer.strip()
        if len(answer) == 1 and answer.isalpha():
            index = ord(answer.upper()) - ord("A")
            if index >= len(self.choices):
                raise ValueError(
                    f"answer {answer!r} is not one of the {len(self.choices)} options "
                    f"(A to {letter(len(self.choices) - 1)})"
                )
            return index
        texts = [normalise(c) for c in self.choices]
        if normalise(answer) not in texts:
            raise ValueError(f"answer {answer!r} is neither an option's letter nor its text")
        return texts.index(normalise(answer))


#: A question's own list of its options: a line per option, opening with its letter.
_LISTED = re.compile(r"^\s*\(?([A-Z])[).:]\s", re.MULTILINE)


class ChoiceTask(TaskBase):
    """A multiple-choice question. The model is shown the options: a question that does not
    list them, a line per option opening with its letter, gets them listed after it."""

    expected: ChoiceExpected

    @model_validator(mode="after")
    def _options_shown(self) -> ChoiceTask:
        letters = {letter(i) for i in range(len(self.expected.choices))}
        if not letters <= set(_LISTED.findall(self.question)):
            options = (f"{letter(i)}) {c}" for i, c in enumerate(self.expected.choices))
            self.question = f"{self.question.rstrip()}\n\n" + "\n".join(options)
        return self


def letter(index: int) -> str:
    return chr(ord("A") + index)


def choice_of(expected: ChoiceExpected, reply: str) -> Said[int]:
    """The option the reply's final answer chooses, or why none."""
    options = [[c] for c in expected.choices]
    if not any(normalise(c) in _EVERY for c in expected.choices):
        options.append(list(_EVERY))  # every option at once: a hedge
    letters = [letter(i) for i in range(len(expected.choices))]
    candidates = Candidates(options, letters, "chooses", "option", _letter_of(len(letters)))
    said = chosen(reply, candidates)
    if said.value == len(expected.choices):
        return Said(None, "hedged: chooses every option")
    return said


class ChoiceGrader(Grader[ChoiceTask]):
    async def grade(self, task: ChoiceTask, answer: str) -> Grade:
        expected = task.expected
        said = choice_of(expected, answer)
        want = f"{letter(expected.index)} ({expected.choices[expected.index]})"
        if said.value is None:
            hedged = said.why.startswith(("hedged", "retracted"))
            return Grade(False, said.why if hedged else f"{said.why}; expected {want}")
        if said.value != expected.index:
            return Grade(False, f"chooses {letter(said.value)}; expected {want}")
        return Grade(True, f"chooses {want}")

    def canonical(self, task: ChoiceTask, answer: str) -> str:
        """The chosen option's letter; "" when none or several are chosen."""
        said = choice_of(task.expected, answer)
        return "" if said.value is None else letter(said.value)


def _letter_of(options: int) -> Callable[[int], str]:
    """An option's letter; past the options, the words naming every option."""
    return lambda index: letter(index) if index < options else "every option"


def choice_from_target(target: Any, extras: Mapping[str, Any]) -> Any:
    """Inspect's target letter (or an option's text) and the row's ``choices``."""
    if isinstance(target, list) and len(target) == 1:
        target = target[0]
    given = {"choices": extras["choices"]} if "choices" in extras else {}
    return {**given, "answer": target}


_CITIES = ["Paris", "Lyon", "Nice"]
_LYON = {"choices": _CITIES, "answer": "B"}
_NICE = {"choices": [*_CITIES, "Lille"], "answer": "C"}
CHOICE_CASES = (
    SelfCase(_LYON, "B", True, "the letter alone"),
    SelfCase(_LYON, "(B)", True, "the letter in brackets"),
    SelfCase(_LYON, "B) Lyon", True, "letter and text agree"),
    SelfCase(_LYON, "Let me think.\nAnswer: B", True, "the Answer line"),
    SelfCase(_LYON, "The answer is Lyon.", True, "the option's text"),
    SelfCase({"choices": _CITIES, "answer": "Lyon"}, "B", True, "expected given as text"),
    SelfCase(_LYON, "A", False, "another option"),
    SelfCase(_LYON, "A or B", False, "two options: a hedge"),
    SelfCase(_LYON, "A, B, C", False, "every option"),
    SelfCase(_LYON, "All of the above", False, "every option, in words"),
    SelfCase(_LYON, "Paris or Lyon", False, "two options by text"),
    SelfCase(_LYON, "not A", False, "a negated option is not chosen"),
    SelfCase(_LYON, "B, not A", True, "the other one negated"),
    SelfCase(_LYON, "Neither A nor C; the answer is B", True, "both others negated"),
    SelfCase(_LYON, "Apple", False, "a letter only as a word of its own"),
    SelfCase(_LYON, "A good guess is B", True, "'A' as an article"),
    SelfCase(_LYON, "A is wrong, so B", True, "negated after the letter"),
    SelfCase(_LYON, "B (Lyon) rather than A", True, "'rather than' negates"),
    SelfCase(_NICE, "C, not A or B", True, "a negation covers a list"),
    SelfCase(_NICE, "It can't be A, B or D, so C", True, "a contraction negates a list"),
    SelfCase(_NICE, "A and B are wrong; C", True, "negated after a list"),
    SelfCase(_NICE, "Answer: C. A is tempting but wrong.", True, "negated past 'but'"),
    SelfCase({**_NICE, "answer": "B"}, "D) Lille is wrong, B) Lyon", True, "a letter and its text"),
    SelfCase(_LYON, "", False, "no answer"),
)


@register_grader(
    "choice",
    ChoiceTask,
    "exactly one option is chosen, by its letter or text, and it is the expected one",
    GraderDetails(
        example='{"id": "q1", "question": "...", "expected": {"choices": ["Paris", "Lyon"], '
        '"answer": "B"}}',
        cases=CHOICE_CASES,
        from_target=choice_from_target,
    ),
)
def choice_grader(setup: GraderSetup) -> ChoiceGrader:
    read_options("choice", setup.options, GraderOptions)
    return ChoiceGrader()
