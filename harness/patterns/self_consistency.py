"""self_consistency:samples=K (seed 003): K independent chains of thought, plurality vote.

Each chain is a ``cot`` call at a non-zero temperature. The vote is over the whole
typed answer, never the raw text: the multiset of numbers it states, and the
entities it names (its normalised words, less numbers, function words, units and
the remains of possessives and contractions, whatever their case). Two answers
vote together when they state the same numbers and name the same entities, or when
one names only some of the other's ("Hamburg, 59 more" with "the Hamburg depot has
59 more trucks"); so "84 years" and "eighty-four" vote together, while "Lyon, 59
more" and "Hamburg, 59 more" do not. Answers are grouped in the order they came,
each joining the first group whose first answer it matches. The largest group wins
(a plurality, not a majority); a tie goes to the group formed first, and the winner
is that group's first answer. Agreement (the winner's share of the samples) is
recorded: it measures consistency, not correctness.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import Field

from graders.exact import normalise, numbers_in
from harness.patterns.base import CallFloor, Outcome, PatternOptions, RunContext
from harness.patterns.cot import SYSTEM as COT_SYSTEM
from harness.patterns.cot import final_answer
from harness.patterns.oneshot import answer_once
from harness.patterns.registry import register

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


def same_answer(first: Reading, other: Reading) -> bool:
    """Same numbers, and the same entities or one answer's entities among the other's."""
    (numbers, names), (other_numbers, other_names) = first, other
    if numbers != other_numbers:
        return False
    if not names or not other_names:
        return names == other_names
    return names <= other_names or other_names <= names


@dataclass
class Group:
    reading: Reading
    answers: list[str] = field(default_factory=list)


def plurality(answers: list[str]) -> tuple[str, int]:
    """The winning answer and how many samples voted for it."""
    groups: list[Group] = []
    for answer in answers:
        reading = typed_reading(answer)
        group = next((g for g in groups if same_answer(g.reading, reading)), None)
        if group is None:
            group = Group(reading)
            groups.append(group)
        group.answers.append(answer)
    best = max(groups, key=lambda g: len(g.answers))  # the first of the largest
    return best.answers[0], len(best.answers)


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
        for _ in range(self.options.samples):
            last = await answer_once(ctx, COT_SYSTEM, 512, final_answer, self.options.temperature)
            if last.status == "answered" and last.answer is not None:
                answers.append(last.answer)
                ctx.answer_given("sample", last.answer)
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
