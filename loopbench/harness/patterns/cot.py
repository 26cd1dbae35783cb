"""cot: think step by step, then answer on a last line. One call, no tools.

Only the reply from its final "Answer:" on is the answer, so the working's numbers do not
count against it; a self-correction after that line does. A reply that marks no answer
("Not A or C; B.", "Yes, the passage says ...") is the answer whole, read as every grader
reads a reply (its final answer found by loopbench/graders/reading.py), so a style of writing the
answer is not a format failure.
"""

from __future__ import annotations

from dataclasses import dataclass

from loopbench.graders.reading import answer_part
from loopbench.harness.patterns.base import ONE_CALL, CallFloor, Outcome, PatternOptions, RunContext
from loopbench.harness.patterns.oneshot import answer_once
from loopbench.harness.patterns.prompts import Prompts, Slot
from loopbench.harness.patterns.registry import register

SYSTEM = (
    "Think step by step: write out your working. Then give the final answer, "
    "in a few words, on a last line that starts with 'Answer:'."
)
PROMPTS = Prompts(
    Slot("step", SYSTEM, about="the system prompt asking for the working, then 'Answer:'")
)


def final_answer(text: str) -> str | None:
    """The reply from its final answer's mark on ("Answer:", "the answer is"...), as every
    grader reads it (loopbench/graders/reading.py), so a self-correction after the mark still
    counts; the whole reply when it marks none; None when it is empty."""
    return answer_part(text) or text.strip() or None


class CotOptions(PatternOptions):
    pass


@dataclass(frozen=True)
class ChainOfThought:
    options: CotOptions
    name: str = "cot"

    def call_floor(self) -> CallFloor:
        return ONE_CALL

    async def run(self, ctx: RunContext) -> Outcome:
        return await answer_once(ctx, PROMPTS.render(ctx, "step"), 512, final_answer)


@register("cot", CotOptions, "chain of thought, then 'Answer:'; 1 call, no tools", PROMPTS)
def cot(options: CotOptions) -> ChainOfThought:
    return ChainOfThought(options)
