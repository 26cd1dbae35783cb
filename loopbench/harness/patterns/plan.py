"""plan: plan-then-act (seed 000).

One planning call with no tools offered, then the native tool loop with the plan
appended to the system prompt. Fixing the plan before any tool output enters the
transcript is what makes the extra call worth it: a tool result cannot rewrite it.

- ``max_steps < 2`` is refused before any request (its call floor): one step cannot
  hold a plan and an action.
- A planning turn that calls a tool anyway is refused.
- The planning call counts against the caller's budget (``max_steps=3`` is at most
  three requests) and the loop's step numbers continue after it.

Its prompts: the planning call's system prompt (``plan``, given the tools as a list), the
tool loop's (``act``, given the plan; react's prompt for finish=text with the plan after
it) and the guard's warning (``guard``).
"""

from __future__ import annotations

from dataclasses import dataclass

from loopbench.harness.events import PlanEvent
from loopbench.harness.models.types import Message, ModelRequest
from loopbench.harness.patterns.acting import GUARD_SLOT
from loopbench.harness.patterns.base import CallFloor, Outcome, RunContext, ToolLoopOptions
from loopbench.harness.patterns.prompts import Prompts, Slot
from loopbench.harness.patterns.react import react_system
from loopbench.harness.patterns.registry import register
from loopbench.harness.patterns.tool_loop import Loop, tool_loop

PLANNING_SYSTEM = (
    "Write a short numbered plan for answering the question: which facts to look up and "
    "what to calculate. Do not answer yet and do not call any tool. These tools will be "
    "available when the plan is carried out:\n{{ tools }}"
)
PROMPTS = Prompts(
    Slot(
        "plan",
        PLANNING_SYSTEM,
        ("tools",),
        about="the planning call's system prompt; tools lists the tools, one '- name: what' a line",
    ),
    Slot(
        "act",
        react_system(False) + "\n\nFollow this plan:\n{{ plan }}",
        ("plan",),
        about="the tool loop's system prompt; plan is the plan written",
        needs=("plan",),
    ),
    GUARD_SLOT,
)


@dataclass(frozen=True)
class PlanThenAct:
    options: ToolLoopOptions
    name: str = "plan"

    def call_floor(self) -> CallFloor:
        # guard: plan-refusal
        return CallFloor(2, "one call to plan and one to act")

    async def run(self, ctx: RunContext) -> Outcome:
        opts = self.options
        messages = [Message("user", ctx.question)]
        tool_list = "\n".join(f"- {t.name}: {t.description}" for t in ctx.tools)
        request = ModelRequest(
            ctx.model_name,
            tuple(messages),
            system=PROMPTS.render(ctx, "plan", tools=tool_list),
            max_output_tokens=400,
        )
        response = await ctx.model.complete(request)
        # guard: truncation-plan
        if response.truncated:
            return Outcome("truncated", messages=messages, steps=1)
        if response.message.tool_calls:
            return Outcome(
                "refused",
                messages=messages,
                steps=1,
                error="the planning call tried to invoke a tool; a plan is written, not acted",
            )
        plan = response.message.content.strip()
        ctx.emit(PlanEvent(step=1, plan=plan))
        system = PROMPTS.render(ctx, "act", plan=plan)
        warning = PROMPTS.render(ctx, "guard")
        loop = Loop(opts, system, ctx.tools, opts.max_steps - 1, first_step=1, warning=warning)
        outcome = await tool_loop(ctx, loop, messages)
        outcome.steps += 1
        return outcome


@register(
    "plan",
    ToolLoopOptions,
    "plan-then-act: 1 planning call (no tools), then the tool loop; max_steps calls in all",
    PROMPTS,
)
def plan(options: ToolLoopOptions) -> PlanThenAct:
    return PlanThenAct(options)
