"""self_consistency:samples=K (seed 003): K independent chains of thought, plurality vote.

Each chain is a ``cot`` call at a non-zero temperature. The vote is over the canonical
typed answer, what the typed grader reads, never the raw text: the multiset of numbers
the answer states (``numbers_in``: "84 years" and "eighty-four" are both 84) and the set
of entities it names (its normalised words, less numbers, function words, units and the
remains of possessives and contractions, whatever their case). Every sample votes for
its own reading, and nothing else decides the winner but the readings' votes, so the
same samples give the same winner in any order:

1. The reading with the most votes wins (a plurality, not a majority).
2. Readings tied for the most votes: the one with more support wins. An answer with the
   same numbers that names only some of a reading's entities supports it ("Bilbao, 59"
   supports "Hamburg has 59 more than Bilbao"): it does not contradict it. It never
   votes for it, so "Bilbao, 59" once and "Hamburg has 59 more than Bilbao" twice is two
   votes to one.
3. Still tied: the reading first in a fixed order (its numbers ascending, then its
   entities in alphabetical order).

The answer returned is, of the winning reading's samples, the text given most often,
then the shortest, then the first alphabetically. Agreement (the winner's votes over the
K samples asked for) is recorded: it measures consistency, not correctness, and it is
below 1 whenever a sample reads otherwise, a subset answer included.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field

from graders.exact import normalise, numbers_in
from harness.events import VoteEvent
from harness.patterns.base import CallFloor, Outcome, PatternOptions, RunContext
from harness.patterns.cot import SYSTEM as COT_SYSTEM
from harness.patterns.cot import final_answer
from harness.patterns.oneshot import answer_once
from harness.patterns.prompts import Prompts, Slot
from harness.patterns.registry import register

PROMPTS = Prompts(
    Slot("chain", COT_SYSTEM, about="the system prompt of each chain of thought (cot's)")
)

#: Words that name no entity: function words, comparison words, common units, and what
#: is left of a possessive or a contraction ("Hamburg's", "it's") once normalised.
FILLER = frozenset(
    """
    a an the and or of in on at to by for from with than then is are was were be it its
    this that there their which who what answer final about approximately around roughly
    probably likely so more fewer less most least larger largest smaller smallest higher
    highest lower lowest bigger biggest longer longest shorter shortest older oldest
    younger youngest difference has have had years year months days km kilometres
    kilometers m metres meters miles feet ft per cent percent total s t d ll re ve
    """.split()  # noqa: SIM905  (a word list reads better as text)
)

Reading = tuple[tuple[float, ...], frozenset[str]]


def typed_reading(answer: str) -> Reading:
    """What a vote compares: the numbers stated (as a multiset) and the entities named."""
    numbers = tuple(sorted(numbers_in(answer)))
    words = normalise(answer).split()
    return numbers, frozenset(w for w in words if w not in FILLER and not numbers_in(w))


def supports(narrower: Reading, wider: Reading) -> bool:
    """Same numbers, and only some of ``wider``'s entities: an answer that does not
    contradict ``wider`` (rule 2)."""
    return narrower[0] == wider[0] and narrower[1] < wider[1]


@dataclass(frozen=True)
class Vote:
    winner: str
    votes: int
    readings: int


def plurality(answers: list[str]) -> Vote:
    """The winning answer, its reading's votes and the number of distinct readings."""
    by_reading: dict[Reading, list[str]] = {}
    for answer in answers:
        by_reading.setdefault(typed_reading(answer), []).append(answer)

    def rank(reading: Reading) -> tuple[int, int, tuple[float, ...], list[str]]:
        votes = len(by_reading[reading])
        support = sum(len(v) for r, v in by_reading.items() if supports(r, reading))
        return -votes, -support, reading[0], sorted(reading[1])

    best = by_reading[min(by_reading, key=rank)]
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
        vote = plurality(answers)
        agreement = vote.votes / self.options.samples
        ctx.emit(VoteEvent(answers=answers, winner=vote.winner, agreement=agreement))
        metrics = {"agreement": agreement, "parsed_samples": float(len(answers))}
        metrics["distinct_readings"] = float(vote.readings)
        return Outcome("answered", vote.winner, last.messages, steps, metrics=metrics)


@register(
    "self_consistency",
    SelfConsistencyOptions,
    "samples chains of thought at temperature > 0, plurality of typed answers; samples calls",
    PROMPTS,
)
def self_consistency(options: SelfConsistencyOptions) -> SelfConsistency:
    return SelfConsistency(options)
