"""What plan_execute and goal_decomposition share: run one step as a small tool loop,
and answer the question from the steps' results in a final call with no tools.

Both spend one ``max_steps`` budget for the whole run, so every phase reserves the
calls that must still follow it: a step never takes the final answer's call, and a
planning call (a replan, a phase's tasks) is made only while a step and the answer
can still follow.
"""

from __future__ import annotations

from harness.models.types import Message, ModelRequest
from harness.patterns.base import CallFloor, Outcome, RunContext, ToolLoopOptions, answer_reply
from harness.patterns.react import react_system
from harness.patterns.tool_loop import Loop, tool_loop

SYNTHESIS_SYSTEM = "Answer the question from the results of the steps below, in a few words."
#: A plan, one step and the answer.
PLANNED_FLOOR = CallFloor(3, "one call to plan, one for a step and one to answer")
#: Calls a planning call made mid-run must leave room for: one step and the answer.
AFTER_PLANNING = 2


async def run_step(
    ctx: RunContext, options: ToolLoopOptions, task: str, context: str, step_budget: int
) -> Outcome:
    """One step of a plan as its own short tool loop; the final call stays reserved."""
    messages = [Message("user", f"Overall question: {ctx.question}\n{context}\nYour step: {task}")]
    budget = min(step_budget, ctx.calls_left(options) - 1)
    if budget < 1:
        return Outcome("step_budget", messages=messages)
    loop = Loop(options, react_system(False), ctx.tools, budget, first_step=ctx.model.calls)
    return await tool_loop(ctx, loop, messages)


def can_plan_again(ctx: RunContext, options: ToolLoopOptions) -> bool:
    """Whether a planning call now still leaves a step and the answer their calls."""
    return ctx.calls_left(options) >= 1 + AFTER_PLANNING


async def synthesise(ctx: RunContext, results: str, metrics: dict[str, float]) -> Outcome:
    request = ModelRequest(
        ctx.model_name,
        (Message("user", f"Question: {ctx.question}\n\nResults of the steps:\n{results}"),),
        system=SYNTHESIS_SYSTEM,
        max_output_tokens=200,
    )
    response = await ctx.model.complete(request)
    return answer_reply(ctx, response, [Message("user", ctx.question), response.message], metrics)
