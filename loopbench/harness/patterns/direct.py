"""direct: ask for the answer alone. One call, no tools, no working.

On a coding task the answer is the code, asked as every code arm asks its first attempt,
so direct is the first-attempt baseline the repair arms are measured against.
"""

from __future__ import annotations

from dataclasses import dataclass

from loopbench.harness.patterns.base import (
    ONE_CALL,
    CallFloor,
    Outcome,
    PatternOptions,
    RunContext,
    stripped,
)
from loopbench.harness.patterns.coding import CODE_SLOT, first_attempt
from loopbench.harness.patterns.oneshot import answer_once
from loopbench.harness.patterns.prompts import Prompts, Slot
from loopbench.harness.patterns.registry import register

SYSTEM = (
    "Answer the question. Reply with the answer only, in a few words: "
    "no working and no explanation."
)
PROMPTS = Prompts(
    Slot("answer", SYSTEM, about="the system prompt asking for the answer alone"), CODE_SLOT
)


class DirectOptions(PatternOptions):
    pass


@dataclass(frozen=True)
class Direct:
    options: DirectOptions
    name: str = "direct"

    def call_floor(self) -> CallFloor:
        return ONE_CALL

    async def run(self, ctx: RunContext) -> Outcome:
        if ctx.code is not None:
            return await first_attempt(ctx, PROMPTS.render(ctx, "code"))
        system = PROMPTS.render(ctx, "answer")
        return await answer_once(ctx, system, 128, stripped)


@register("direct", DirectOptions, "answer only; 1 call, no tools", PROMPTS)
def direct(options: DirectOptions) -> Direct:
    return Direct(options)
