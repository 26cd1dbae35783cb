"""self_consistency:samples=K (seed 003): K independent chains of thought, plurality vote.

Each chain is a ``cot`` call at a non-zero temperature. Answers are compared by the
grader's typed reading (the multiset of numbers they state; the normalised text when
they state none), not as raw text, so "84 years" and "eighty-four" vote together.
The plurality wins, not the majority; ties go to the answer seen first. Agreement
(the winner's share of the samples) is recorded: it measures consistency, not
correctness.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from pydantic import Field

from graders.exact import normalise, numbers_in
from harness.patterns.base import Outcome, PatternOptions, RunContext
from harness.patterns.cot import SYSTEM as COT_SYSTEM
from harness.patterns.cot import final_answer
from harness.patterns.oneshot import answer_once
from harness.patterns.registry import register


def typed_reading(answer: str) -> tuple[object, ...]:
    numbers = sorted(numbers_in(answer))
    return ("numbers", *numbers) if numbers else ("text", normalise(answer))


class SelfConsistencyOptions(PatternOptions):
    samples: int = Field(default=5, ge=1)
    """Independent chains of thought to vote over."""
    temperature: float = Field(default=0.7, gt=0)
    """Sampling temperature of each chain; votes need varied samples."""


@dataclass(frozen=True)
class SelfConsistency:
    options: SelfConsistencyOptions
    name: str = "self_consistency"

    async def run(self, ctx: RunContext) -> Outcome:
        answers: list[str] = []
        last = Outcome("unparsed")
        for sample in range(1, self.options.samples + 1):
            last = await answer_once(ctx, COT_SYSTEM, 512, final_answer, self.options.temperature)
            if last.status == "api_error":
                last.steps = sample - 1
                return last
            if last.status == "answered" and last.answer is not None:
                answers.append(last.answer)
        steps = self.options.samples
        if not answers:
            return Outcome("unparsed", messages=last.messages, steps=steps)
        votes = Counter(typed_reading(a) for a in answers)
        top = max(votes.values())
        winner = next(a for a in answers if votes[typed_reading(a)] == top)  # first seen wins ties
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
