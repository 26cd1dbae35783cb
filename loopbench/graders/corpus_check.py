"""The labelled corpus of replies (loopbench/graders/corpus/) and how the graders agree with it.

``replies.jsonl`` holds replies in the styles models write, each with the verdict a careful
reader gives and why: one JSON object a line, ``{"grader", "expected", "options"?, "reply",
"correct", "why", "style"}``. ``restyled.jsonl`` holds answers each written several ways a
careful reader grades alike: ``{"id", "grader", "expected", "options"?, "correct", "why",
"replies": [{"style", "reply"}, ...]}``. Each reply is graded by its registered grader as
``loopbench grade --self-test`` grades a grader's own cases (loopbench/graders/selftest.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from loopbench.graders.answer_keys import Filled
from loopbench.graders.base import GraderSetup, SelfCase
from loopbench.graders.registry import GRADERS
from loopbench.graders.selftest import CaseResult, as_task, run_case
from loopbench.harness.errors import BadInput
from loopbench.harness.files import describe_errors, read_text
from loopbench.harness.structured import StructureError, load_json

#: Whether ``grade --self-test`` fails when a grader's verdict differs from the corpus's.
#: Off while the graders' reading is being rewritten to agree with it (issue 38).
CORPUS_MUST_AGREE = False

CORPUS = Path(__file__).parent / "corpus"
REPLIES = CORPUS / "replies.jsonl"
RESTYLED = CORPUS / "restyled.jsonl"

#: The styles the shipped corpus writes replies in (a corpus may name others).
STYLES = (
    "terse",
    "explanatory",
    "cot_elimination",
    "markdown",
    "latex_boxed",
    "self_correction",
    "hedge",
    "negation",
    "gsm8k",
    "units_scaled",
    "quoted_lookup",
    "plain_final",
)


LineT = TypeVar("LineT", bound=BaseModel)


class CorpusError(BadInput):
    """A corpus line that is not JSON, lacks a field, or names a grader, expected or option
    its grader refuses: one line naming the file and line."""


class _Restyling(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    style: Filled
    reply: str


class _Labelled(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    grader: Filled
    expected: Any
    options: dict[str, Any] = Field(default_factory=dict)
    correct: bool
    why: Filled


class _ReplyLine(_Labelled):
    reply: str
    style: Filled


class _RestyledLine(_Labelled):
    id: Filled
    replies: list[_Restyling] = Field(min_length=2)


@dataclass(frozen=True)
class CorpusReply:
    """A reply with its careful verdict (``case.correct``, ``case.why``) and its style."""

    grader: str
    style: str
    case: SelfCase


@dataclass(frozen=True)
class RestyledAnswer:
    """One answer written several ways, each a reply with the same careful verdict."""

    id: str
    replies: tuple[CorpusReply, ...]


@dataclass(frozen=True)
class Checked:
    """A corpus reply and the grade its grader gave it."""

    reply: CorpusReply
    result: CaseResult

    @property
    def agrees(self) -> bool:
        return self.result.ok

    @property
    def false_pass(self) -> bool:
        """Graded right where the careful reader says wrong."""
        return self.result.grade.correct and not self.reply.case.correct


@dataclass(frozen=True)
class CheckedAnswer:
    answer: RestyledAnswer
    checked: tuple[Checked, ...]

    @property
    def alike(self) -> bool:
        """Every restyling got the same verdict."""
        return len({c.result.grade.correct for c in self.checked}) == 1


@dataclass
class Tally:
    """How a group of replies was graded against the careful verdicts."""

    total: int = 0
    agree: int = 0
    false_passes: int = 0
    false_fails: int = 0

    def add(self, checked: Checked) -> None:
        self.total += 1
        self.agree += checked.agrees
        self.false_passes += checked.false_pass
        self.false_fails += not checked.agrees and not checked.false_pass

    def __str__(self) -> str:
        share = _share(self.agree, self.total)
        return (
            f"{self.agree}/{self.total} agree ({share}), {self.false_passes} false passes, "
            f"{self.false_fails} false fails"
        )


def load_replies(path: Path | None = None) -> list[CorpusReply]:
    """The replies of a file in ``replies.jsonl``'s format (the shipped one by default)."""
    path = REPLIES if path is None else path
    return [
        _reply(path, number, line.grader, line.style, line, line.reply)
        for number, line in _lines(path, _ReplyLine)
    ]


def load_restyled(path: Path | None = None) -> list[RestyledAnswer]:
    """The answers of a file in ``restyled.jsonl``'s format (the shipped one by default)."""
    path = RESTYLED if path is None else path
    return [
        RestyledAnswer(
            line.id,
            tuple(_reply(path, n, line.grader, r.style, line, r.reply) for r in line.replies),
        )
        for n, line in _lines(path, _RestyledLine)
    ]


def check(replies: Iterable[CorpusReply]) -> list[Checked]:
    """Each reply graded by its registered grader."""
    return [
        Checked(reply, run_case(reply.grader, GRADERS.lookup(reply.grader), reply.case))
        for reply in replies
    ]


def check_restyled(answers: Iterable[RestyledAnswer]) -> list[CheckedAnswer]:
    """Each answer's restylings graded by its registered grader."""
    return [CheckedAnswer(answer, tuple(check(answer.replies))) for answer in answers]


def tally(checked: Iterable[Checked], key: str = "grader") -> dict[str, Tally]:
    """The replies tallied by ``key`` ("grader" or "style"), in the order first met."""
    tallies: dict[str, Tally] = {}
    for one in checked:
        tallies.setdefault(getattr(one.reply, key), Tally()).add(one)
    return tallies


def _lines(path: Path, model: type[LineT]) -> Iterator[tuple[int, LineT]]:
    text = read_text(path, CorpusError, "a JSON Lines corpus of graded replies")
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            yield number, model.model_validate(load_json(raw))
        except StructureError as exc:
            raise CorpusError(f"{path}:{number}: not JSON ({exc.why})") from None
        except ValidationError as exc:
            raise CorpusError(f"{path}:{number}: {describe_errors(exc)}") from None


def _reply(
    path: Path, number: int, grader: str, style: str, line: _Labelled, reply: str
) -> CorpusReply:
    """The reply, its expected and options checked by its grader as a task set's are."""
    where = f"{path}:{number}"
    try:
        info = GRADERS.lookup(grader)
    except BadInput as exc:
        raise CorpusError(f"{where}: field 'grader': {exc}") from None
    # guard: corpus-line-naming-grader-runs
    if info.runs_code:
        raise CorpusError(
            f"{where}: field 'grader': {grader!r} runs code; the corpus holds replies"
        )
    try:
        task = as_task(info, line.expected)
        # guard: corpus-line-whose-options-grader
        info.build(GraderSetup(path.parent, options=line.options, tasks=(task,)))
    except ValidationError as exc:
        raise CorpusError(f"{where}: {describe_errors(exc, first=True)}") from None
    except BadInput as exc:
        raise CorpusError(f"{where}: options: {exc}") from None
    return CorpusReply(
        grader, style, SelfCase(line.expected, reply, line.correct, line.why, line.options)
    )


def agreement_lines(checked: list[Checked], answers: list[CheckedAnswer]) -> list[str]:
    """Agreement with the careful verdicts per grader and in all, and the share of restyled
    answers graded alike: what ``grade --self-test`` and bench/reading_agreement.py print."""
    every = Tally()
    for one in checked:
        every.add(one)
    lines = [f"corpus {name:7} {counts}" for name, counts in tally(checked).items()]
    lines.append(f"corpus {'all':7} {every}")
    alike = sum(answer.alike for answer in answers)
    replies = [one for answer in answers for one in answer.checked]
    agree = sum(one.agrees for one in replies)
    lines.append(
        f"restyled: {alike}/{len(answers)} answers graded alike ({_share(alike, len(answers))}); "
        f"{agree}/{len(replies)} replies graded as the careful reader "
        f"({_share(agree, len(replies))})"
    )
    return lines


def _share(part: int, whole: int) -> str:
    return f"{part / whole if whole else 1.0:.0%}"
