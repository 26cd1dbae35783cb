"""cot: think step by step, then answer on a last line. One call, no tools.

Only the text after the final "Answer:" is graded, so the working's numbers do not
count against the answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from harness.patterns.base import ONE_CALL, CallFloor, Outcome, PatternOptions, RunContext
from harness.patterns.oneshot import answer_once
from harness.patterns.prompts import Prompts, Slot
from harness.patterns.registry import register

SYSTEM = (
    "Think step by step: write out your working. Then give the final answer, "
    "in a few words, on a last line that starts with 'Answer:'."
)
PROMPTS = Prompts(
    Slot("step", SYSTEM, about="the system prompt asking for the working, then 'Answer:'")
)
_ANSWER_LINE = re.compile(
    r"^[\s*#>_-]*(?:final\s+)?answer\s*\**\s*[:=\-]\s*\**(?P<answer>.+)$",
    re.IGNORECASE | re.MULTILINE,
)
_ANSWER_IS = re.compile(r"\bthe (?:final )?answer is\s*:?\s*(?P<answer>[^\n]+)", re.IGNORECASE)


def final_answer(text: str) -> str | None:
    """The last 'Answer: ...' line, else the last 'the answer is ...' phrase."""
    for pattern in (_ANSWER_LINE, _ANSWER_IS):
        found = [m.group("answer").strip(" *_") for m in pattern.finditer(text)]
        if found and found[-1]:
            return found[-1]
    return None


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
