"""self_consistency:samples=K (seed 003): K independent chains of thought, plurality vote.

Each chain is a ``cot`` call at a non-zero temperature. The vote is over the whole
typed answer, never the raw text: the multiset of numbers it states together with
the entities it names. Entities are its capitalised words (proper names), or, in an
answer with none, all its words; either way normalised, less numbers, function words
and units. So "84 years" and "eighty-four" vote together, "The Hamburg depot, with 59
more trucks" with "Hamburg, 59 more", while "Lyon, 59 more" and "Hamburg, 59 more" do
not. The plurality wins, not the majority; ties go to the answer seen
first. Agreement (the winner's share of the samples) is recorded: it measures
consistency, not correctness.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from pydantic import Field

from graders.exact import normalise, numbers_in
from harness.patterns.base import CallFloor, Outcome, PatternOptions, RunContext
from harness.patterns.cot import SYSTEM as COT_SYSTEM
from harness.patterns.cot import final_answer
from harness.patterns.oneshot import answer_once
from harness.patterns.registry import register

#: Words that carry no entity: function words, comparison words and common units.
FILLER = frozenset(
    """
    a an the and or of in on at to by for from with than then is are was were be it its
    this that there their which who what answer final about approximately around roughly
    more fewer less most least larger largest smaller smallest higher highest lower lowest
    bigger biggest longer longest shorter shortest older oldest younger youngest difference
    has have had years year months days km kilometres kilometers m metres meters miles feet
    ft per cent percent total
    """.split()  # noqa: SIM905  (a word list reads better as text)
)


def typed_reading(answer: str) -> tuple[tuple[float, ...], frozenset[str]]:
    """What a vote compares: the numbers stated (as a multiset) and the entities named."""
    numbers = tuple(sorted(numbers_in(answer)))
    names = [w for w in re.findall(r"\b[^\W\d_][\w'-]*", answer) if w[0].isupper()]
    words = normalise(" ".join(names)).split() if names else []
    entities = frozenset(w for w in words if w not in FILLER and not numbers_in(w))
    if not entities:
        everything = normalise(answer).split()
        entities = frozenset(w for w in everything if w not in FILLER and not numbers_in(w))
    return numbers, entities


def plurality(answers: list[str]) -> tuple[str, int]:
    """The first answer of the most common typed reading, and how many samples it had."""
    votes = Counter(typed_reading(a) for a in answers)
    top = max(votes.values())
    winner = next(a for a in answers if votes[typed_reading(a)] == top)  # first seen wins ties
    return winner, top


class SelfConsistencyOptions(PatternOptions):
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
        for _ in range(self.options.samples):
            last = await answer_once(ctx, COT_SYSTEM, 512, final_answer, self.options.temperature)
            if last.status == "answered" and last.answer is not None:
                answers.append(last.answer)
        steps = self.options.samples
        if not answers:
            return Outcome("unparsed", messages=last.messages, steps=steps)
        winner, top = plurality(answers)
        agreement = top / self.options.samples
        ctx.emit("vote", answers=answers, winner=winner, agreement=agreement)
        return Outcome(
            "answered",
            answer=winner,
            messages=last.messages,
            steps=steps,
            metrics={"agreement": agreement, "parsed_samples": len(answers)},
        )


@register(
    "self_consistency",
    SelfConsistencyOptions,
    "samples chains of thought at temperature > 0, plurality of typed answers; samples calls",
)
def self_consistency(options: SelfConsistencyOptions) -> SelfConsistency:
    return SelfConsistency(options)
