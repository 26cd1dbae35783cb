"""What plan_execute and goal_decomposition share: run one step as a small tool loop,
and answer the question from the steps' results in a final call with no tools."""

from __future__ import annotations

from harness.models.types import Message, ModelAPIError, ModelRequest
from harness.patterns.base import Outcome, RunContext, Status, ToolLoopOptions
from harness.patterns.react import react_system
from harness.patterns.tool_loop import tool_loop

SYNTHESIS_SYSTEM = "Answer the question from the results of the steps below, in a few words."


def calls_left(ctx: RunContext, options: ToolLoopOptions) -> int:
    return options.max_steps - ctx.model.calls


async def run_step(
    ctx: RunContext, options: ToolLoopOptions, task: str, context: str, step_budget: int
) -> Outcome:
    """One step of a plan as its own short tool loop; a final call stays reserved."""
    messages = [Message("user", f"Overall question: {ctx.question}\n{context}\nYour step: {task}")]
    budget = min(step_budget, calls_left(ctx, options) - 1)
    if budget < 1:
        return Outcome("step_budget", messages=messages)
    return await tool_loop(
        ctx,
        options,
        messages,
        react_system(False),
        ctx.tools,
        max_steps=budget,
        first_step=ctx.model.calls,
    )


async def synthesise(ctx: RunContext, results: str, metrics: dict[str, float]) -> Outcome:
    request = ModelRequest(
        ctx.model_name,
        (Message("user", f"Question: {ctx.question}\n\nResults of the steps:\n{results}"),),
        system=SYNTHESIS_SYSTEM,
        max_output_tokens=200,
    )
    messages = [Message("user", ctx.question)]
    try:
        response = await ctx.model.complete(request)
    except ModelAPIError as exc:
        return Outcome("api_error", messages=messages, steps=ctx.model.calls, error=str(exc))
    messages.append(response.message)
    status: Status = "truncated" if response.truncated else "answered"
    answer = None if response.truncated else response.message.content.strip()
    return Outcome(status, answer=answer, messages=messages, steps=ctx.model.calls, metrics=metrics)
