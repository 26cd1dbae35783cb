"""self_consistency:samples=K (seed 003): K independent chains of thought, plurality vote.

Each chain is a ``cot`` call at a non-zero temperature. The vote is over the grader's
reading of each answer (``ctx.canonical``, loopbench/graders/base.py), never the raw text: on a
``choice`` set the option chosen, on an exact set (and with no grader) the canonical typed
answer (loopbench/graders/readings.py): the multiset of numbers the answer states and the set of
entities it names. Every sample votes for its own reading, and nothing else decides the
winner but the readings' votes, so the same samples give the same winner in any order:

0. A sample the grader reads as no answer (a hedge between options, none chosen) votes
   for nothing, unless every sample does.
1. The reading with the most votes wins (a plurality, not a majority).
2. Readings tied for the most votes: the one with more support wins. A typed answer with
   the same numbers that names only some of a reading's entities supports it ("Bilbao,
   59" supports "Hamburg has 59 more than Bilbao"): it does not contradict it. It never
   votes for it, so "Bilbao, 59" once and "Hamburg has 59 more than Bilbao" twice is two
   votes to one. Another grader's readings support none but themselves.
3. Still tied: the reading first in a fixed order (its numbers ascending, then its
   entities in alphabetical order; another grader's readings by their text).

The answer returned is, of the winning reading's samples, the text given most often,
then the shortest, then the first alphabetically. Agreement (the winner's votes over the
K samples asked for) is recorded: it measures consistency, not correctness, and it is
below 1 whenever a sample reads otherwise, a subset answer included.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pydantic import Field

from loopbench.graders.answer_size import read_part
from loopbench.graders.readings import Reading, supports, typed_of, typed_reading
from loopbench.harness.events import VoteEvent
from loopbench.harness.patterns.base import CallFloor, Outcome, PatternOptions, RunContext
from loopbench.harness.patterns.cot import SYSTEM as COT_SYSTEM
from loopbench.harness.patterns.cot import final_answer
from loopbench.harness.patterns.oneshot import answer_once
from loopbench.harness.patterns.prompts import Prompts, Slot
from loopbench.harness.patterns.registry import register

PROMPTS = Prompts(
    Slot("chain", COT_SYSTEM, about="the system prompt of each chain of thought (cot's)")
)


def reading_of(ctx: RunContext) -> Callable[[str], Reading]:
    """How the vote reads an answer: the grader's canonical text (a typed key read back as
    its reading, any other text a reading of its own), else the typed reading of what a
    grader would read of it (loopbench/graders/answer_size.py: a huge answer's end)."""
    canonical = ctx.canonical
    if canonical is None:
        # guard: self-consistency-vote-with-no
        return lambda answer: typed_reading(read_part(answer))

    def read(answer: str) -> Reading:
        key = canonical(answer)
        return typed_of(key) or ((), frozenset([key] if key else []))

    return read


#: A reading of no answer: the grader reads nothing chosen (a hedge, no option named).
NOTHING: Reading = ((), frozenset())


@dataclass(frozen=True)
class Vote:
    winner: str
    votes: int
    readings: int


def plurality(answers: list[str], read: Callable[[str], Reading] = typed_reading) -> Vote:
    """The winning answer, its reading's votes and the number of distinct readings; each
    answer read by ``read``."""
    by_reading: dict[Reading, list[str]] = {}
    for answer in answers:
        # guard: self-consistency-votes-typed-answer
        by_reading.setdefault(read(answer), []).append(answer)

    def rank(reading: Reading) -> tuple[int, int, tuple[float, ...], list[str]]:
        # guard: self-consistency-takes-plurality
        votes = len(by_reading[reading])
        # guard: self-consistency-tie-goes-supported
        support = sum(
            len(v) for r, v in by_reading.items() if r != NOTHING and supports(r, reading)
        )
        return -votes, -support, reading[0], sorted(reading[1])

    # guard: self-consistency-sample-read-as
    standing = [r for r in by_reading if r != NOTHING] or list(by_reading)
    best = by_reading[min(standing, key=rank)]
    # guard: self-consistency-answer-does-not
    text = min(best, key=lambda a: (-best.count(a), len(a), a))
    return Vote(text, len(best), len(by_reading))


class SelfConsistencyOptions(PatternOptions):
    max_steps: int = Field(default=64, ge=0)
    """Ceiling on model calls in the whole run: one per sample, so at least samples."""
    samples: int = Field(default=5, ge=1)
    """Independent chains of thought to vote over; each is one model call."""
    temperature: float = Field(default=0.7, gt=0)
    """Sampling temperature of each chain; votes need varied samples."""


@dataclass(frozen=True)
class SelfConsistency:
    options: SelfConsistencyOptions
    name: str = "self_consistency"

    def call_floor(self) -> CallFloor:
        # guard: self-consistency-refusal
        return CallFloor(self.options.samples, "one call per sample")

    async def run(self, ctx: RunContext) -> Outcome:
        answers: list[str] = []
        last = Outcome("unparsed")
        system = PROMPTS.render(ctx, "chain")
        for _ in range(self.options.samples):
            last = await answer_once(ctx, system, 512, final_answer, self.options.temperature)
            if last.status == "answered" and last.answer is not None:
                answers.append(last.answer)
                ctx.answer_given("sample", last.answer)
        steps = self.options.samples
        if not answers:
            return Outcome("unparsed", messages=last.messages, steps=steps)
        vote = plurality(answers, reading_of(ctx))
        # guard: self-consistency-agreement-winner
        agreement = vote.votes / self.options.samples
        ctx.emit(VoteEvent(answers=answers, winner=vote.winner, agreement=agreement))
        metrics = {"agreement": agreement, "parsed_samples": float(len(answers))}
        metrics["distinct_readings"] = float(vote.readings)
        return Outcome("answered", vote.winner, last.messages, steps, metrics=metrics)


@register(
    "self_consistency",
    SelfConsistencyOptions,
    "samples chains of thought at temperature > 0, plurality of graded readings; samples calls",
    PROMPTS,
)
def self_consistency(options: SelfConsistencyOptions) -> SelfConsistency:
    return SelfConsistency(options)
