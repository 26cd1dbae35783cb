"""The f1 and em graders: SQuAD's scoring of a short answer against its gold answers.

The answer is the phrase the reply commits to (loopbench/graders/phrases.py: without what it
negates, its lead-in or a remark in brackets; a hedge is wrong, whatever it scores). It
and each gold answer are normalised as SQuAD's evaluation script does: lower case,
punctuation removed, the articles a, an and the removed, white space collapsed. ``em`` is
right when the answer equals a gold answer so normalised (its score 1 or 0); ``f1`` scores
the tokens shared with the best gold answer (the harmonic mean of precision and recall)
and is right when that score reaches its threshold (the task's, else the grader's
``threshold`` option, 0.5 by default); an answer of the other polarity ("guilty" for "not
guilty") or naming another thing in place of part of the gold scores 0. A gold answer
that is a number is given by a reply committing to that number, as the number grader
reads one ("They scored ten points." for "10").
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, FiniteFloat, model_validator

from loopbench.graders.base import Grader, GraderSetup, SelfCase
from loopbench.graders.exact import Grade
from loopbench.graders.options import GraderOptions, read_options
from loopbench.graders.phrases import phrase
from loopbench.graders.register import GraderDetails, register_grader
from loopbench.graders.stated_numbers import read_number, stated_number
from loopbench.graders.task_models import TaskBase
from loopbench.graders.words import FUNCTION_WORDS

_PUNCTUATION = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
DEFAULT_THRESHOLD = 0.5


def squad_normalise(text: str) -> str:
    """SQuAD's normalisation (its evaluation script's ``normalize_answer``)."""
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION)).split())


def f1_score(answer: str, gold: str) -> float:
    said, want = squad_normalise(answer).split(), squad_normalise(gold).split()
    if not said or not want:
        return float(said == want)
    common = sum((Counter(said) & Counter(want)).values())
    if not common:
        return 0.0
    precision, recall = common / len(said), common / len(want)
    return 2 * precision * recall / (precision + recall)


def _answers(data: Any) -> Any:
    if isinstance(data, str):
        return {"answers": [data]}
    return {"answers": data} if isinstance(data, list) else data


def _scored(answer: str) -> str:
    if not squad_normalise(answer):
        raise ValueError(f"gold answer {answer!r} is nothing once normalised (articles only?)")
    return answer


class EmExpected(BaseModel):
    """The gold answers: one, a list (the best counts), or ``{"answers": [...]}``."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    answers: list[str] = Field(min_length=1)

    _listed = model_validator(mode="before")(_answers)

    @model_validator(mode="after")
    def _each_scores(self) -> EmExpected:
        for answer in self.answers:
            _scored(answer)
        return self


class F1Expected(EmExpected):
    threshold: FiniteFloat | None = Field(default=None, gt=0, le=1)
    """The score an answer needs to be right; the grader's ``threshold`` when unset."""


class EmTask(TaskBase):
    expected: EmExpected


class F1Task(TaskBase):
    expected: F1Expected


class F1Options(GraderOptions):
    threshold: FiniteFloat = Field(default=DEFAULT_THRESHOLD, gt=0, le=1)


#: Verbs that, after the gold answer as a sentence's subject, still give it as the answer
#: ("The Denver Broncos won Super Bowl 50."); not "lost".
_GIVING = ("won", "wins", "is", "was", "were", "are", "did", "does", "became", "invented")


def _said_of(gold: str) -> tuple[str, ...]:
    """How a sentence giving ``gold`` (normalised) as its subject starts."""
    return tuple(f"{gold} {verb} " for verb in _GIVING)


def numbered(answer: str, golds: list[str]) -> Grade | None:
    """A gold answer that is a number ("10") is given by any sentence committing to that
    number ("The Panthers scored ten."): the verdict, with score 1 or 0; None when no gold
    answer is a number or the reply states none."""
    wanted = [n for gold in golds if (n := read_number(gold)) is not None]
    said = stated_number(answer) if wanted else None
    if said is None or not said.stated:
        return None
    if said.value is None:
        return Grade(False, f"{said.why}; expected {golds[:3]}", 0.0)
    hit = any(said.value.matches(n, 1e-9) for n in wanted)
    verdict = "matches" if hit else "matches no gold answer of"
    return Grade(hit, f"states {said.value.value:g}, which {verdict} {golds[:3]}", float(hit))


class EmGrader(Grader[EmTask]):
    async def grade(self, task: EmTask, answer: str) -> Grade:
        if (number := numbered(answer, task.expected.answers)) is not None:
            return number
        found = phrase(answer, task.expected.answers)
        if found.value is None:
            return Grade(False, f"{found.why}; expected {task.expected.answers[:3]}", 0.0)
        said = squad_normalise(found.value)
        golds = [squad_normalise(gold) for gold in task.expected.answers]
        hit = any(said == gold or f"{said} ".startswith(_said_of(gold)) for gold in golds)
        shown = f"{said[:80]!r} {'matches' if hit else 'matches no gold answer of'}"
        return Grade(hit, f"{shown} {task.expected.answers[:3]}", float(hit))

    def canonical(self, task: EmTask, answer: str) -> str:
        """The answer given, normalised as SQuAD does."""
        return squad_normalise(phrase(answer, task.expected.answers).value or "")


class F1Grader(Grader[F1Task]):
    def __init__(self, threshold: float) -> None:
        self._threshold = threshold

    def canonical(self, task: F1Task, answer: str) -> str:
        """The answer given, normalised as SQuAD does."""
        return squad_normalise(phrase(answer, task.expected.answers).value or "")

    async def grade(self, task: F1Task, answer: str) -> Grade:
        golds = task.expected.answers
        if (number := numbered(answer, golds)) is not None:
            return number
        found = phrase(answer, golds)
        if found.value is None:
            return Grade(False, f"{found.why}; expected {golds[:3]}", 0.0)
        score, best = max((scored(found.value, gold), gold) for gold in golds)
        need = self._threshold if task.expected.threshold is None else task.expected.threshold
        verdict = "reaches" if score >= need else "is below"
        return Grade(score >= need, f"F1 {score:.2f} (best {best!r}) {verdict} {need:g}", score)


#: Words that turn an answer to its opposite ("not guilty"); "without" does not ("Tesla
#: without doubt").
_POLARITY = frozenset(["not", "no", "never", "neither", "nor", "isnt", "wasnt", "arent", "werent"])


def scored(said: str, gold: str) -> float:
    """SQuAD's F1, except that an answer of the other polarity ("guilty" for "not guilty")
    or one naming another thing in place of part of the gold ("Treaty of Paris" for "Treaty
    of Versailles") scores 0."""
    said_words, gold_words = set(squad_normalise(said).split()), set(squad_normalise(gold).split())
    # guard: f1-answer-other-polarity-scores
    if bool(said_words & _POLARITY) != bool(gold_words & _POLARITY):
        return 0.0
    missing, extra = (
        gold_words - said_words - FUNCTION_WORDS,
        said_words - gold_words - FUNCTION_WORDS,
    )
    # guard: f1-another-thing-place-part
    if missing and extra:
        return 0.0
    return f1_score(said, gold)


def squad_from_target(target: Any, extras: Mapping[str, Any]) -> Any:
    """A gold answer or a list of them, with the row's ``threshold`` (f1)."""
    given = {"threshold": extras["threshold"]} if "threshold" in extras else {}
    answers = target if isinstance(target, list) else [target]
    return {**given, "answers": [_as_text(answer) for answer in answers]}


def _as_text(answer: Any) -> Any:
    """A number as its text (a data file's integer column: 1889 is "1889")."""
    numeric = isinstance(answer, int | float) and not isinstance(answer, bool)
    return str(answer) if numeric else answer


_GOLD = ["Denver Broncos", "The Broncos"]
EM_CASES = (
    SelfCase(_GOLD, "Denver Broncos", True, "a gold answer"),
    SelfCase(_GOLD, "the Broncos.", True, "articles, case and punctuation"),
    SelfCase(_GOLD, "The game...\nAnswer: Broncos", True, "the Answer line, any gold answer"),
    SelfCase(_GOLD, "Denver", False, "part of the answer"),
    SelfCase(_GOLD, "Broncos or Panthers", False, "a hedge is not the answer"),
    SelfCase(_GOLD, "not the Broncos", False, "a negation is not the answer"),
)
F1_CASES = (
    SelfCase(_GOLD, "Denver Broncos", True, "score 1"),
    SelfCase(_GOLD, "Denver", True, "score 0.67 against 'Denver Broncos'"),
    SelfCase(_GOLD, "Carolina Panthers", False, "score 0"),
    SelfCase(_GOLD, "the Broncos, who beat Carolina in Santa Clara", False, "score 0.25"),
    SelfCase(
        {"answers": _GOLD, "threshold": 0.8}, "Denver", False, "the task's threshold: 0.67 < 0.8"
    ),
    SelfCase(_GOLD, "Denver", False, "the grader's threshold", {"threshold": 0.8}),
    SelfCase(_GOLD, "", False, "no answer scores 0"),
    SelfCase(_GOLD, "Denver Broncos or Carolina Panthers", False, "a hedge, though it scores 0.57"),
    SelfCase(["trick or treat"], "Trick or treat!", True, "'or' in a gold answer is no hedge"),
    SelfCase(_GOLD, "not the Denver Broncos", False, "a negated answer does not count"),
    SelfCase(_GOLD, "Carolina Panthers, not Denver Broncos", False, "the negated part dropped"),
    SelfCase(_GOLD, "Denver Broncos, not Carolina Panthers", True, "the affirmed part scores 1"),
    SelfCase(["not guilty"], "Not guilty.", True, "a negation a gold answer holds is kept"),
)


@register_grader(
    "f1",
    F1Task,
    "SQuAD's token F1 of the final answer with the best gold answer reaches the threshold",
    GraderDetails(
        example='{"id": "q1", "question": "...", "expected": ["Denver Broncos", "Broncos"]}',
        cases=F1_CASES,
        from_target=squad_from_target,
    ),
)
def f1_grader(setup: GraderSetup) -> F1Grader:
    return F1Grader(read_options("f1", setup.options, F1Options).threshold)


@register_grader(
    "em",
    EmTask,
    "the final answer equals a gold answer, both normalised as SQuAD does",
    GraderDetails(
        example='{"id": "q1", "question": "...", "expected": ["Denver Broncos", "Broncos"]}',
        cases=EM_CASES,
        from_target=squad_from_target,
    ),
)
def em_grader(setup: GraderSetup) -> EmGrader:
    read_options("em", setup.options, GraderOptions)
    return EmGrader()
