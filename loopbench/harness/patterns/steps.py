"""What plan_execute and goal_decomposition share: run one step as a small tool loop,
and answer the question from the steps' results in a final call with no tools.

Both spend one ``max_steps`` budget for the whole run, so every phase reserves the
calls that must still follow it: a step never takes the final answer's call, and a
planning call (a replan, a phase's tasks) is made only while a step and the answer
can still follow.

The texts both send are slots each pattern includes in its own prompts: a step's system
prompt, the final call's system prompt and its message; a step's message is a slot under
each pattern's own name (``step_request``).
"""

from __future__ import annotations

from loopbench.harness.models.types import Message, ModelRequest
from loopbench.harness.patterns.base import (
    CallFloor,
    Outcome,
    RunContext,
    ToolLoopOptions,
    answer_reply,
)
from loopbench.harness.patterns.prompts import Prompts, Slot
from loopbench.harness.patterns.react import react_system
from loopbench.harness.patterns.tool_loop import Loop, tool_loop

SYNTHESIS_SYSTEM = "Answer the question from the results of the steps below, in a few words."
STEP_SYSTEM = Slot("step_system", react_system(False), about="the system prompt of every step")
SYNTHESIS = Slot("synthesis", SYNTHESIS_SYSTEM, about="the system prompt of the final answer")
SYNTHESIS_REQUEST = Slot(
    "synthesis_request",
    'Question: {{ question }}\n\nResults of the steps:\n{{ results or "(none)" }}',
    ("question", "results"),
    "the final answer's message: the question and the steps' results (empty if none)",
    needs=("question", "results"),
)
#: A plan, one step and the answer.
# guard: plan-execute-goal-decomposition
PLANNED_FLOOR = CallFloor(3, "one call to plan, one for a step and one to answer")
#: Calls a planning call made mid-run must leave room for: one step and the answer.
AFTER_PLANNING = 2


def step_request(name: str, about: str) -> Slot:
    """The slot ``name``: the message asking for one step, given the question, the results
    so far (empty if none) and the step."""
    text = "Overall question: {{ question }}\n{{ results }}\nYour step: {{ step }}"
    variables = ("question", "results", "step")
    # guard: step-message-needs-step
    return Slot(name, text, variables, about, needs=variables)


async def run_step(
    ctx: RunContext, options: ToolLoopOptions, prompts: Prompts, request: str, step_budget: int
) -> Outcome:
    """One step of a plan (``request``, its message) as its own short tool loop, with the
    step system prompt of ``prompts`` (the pattern's); the final call stays reserved."""
    messages = [Message("user", request)]
    # guard: executor-reserves-final-call
    budget = min(step_budget, ctx.calls_left(options) - 1)
    if budget < 1:
        return Outcome("step_budget", messages=messages)
    system = prompts.render(ctx, STEP_SYSTEM.name)
    loop = Loop(options, system, ctx.tools, budget, first_step=ctx.model.calls)
    return await tool_loop(ctx, loop, messages)


def can_plan_again(ctx: RunContext, options: ToolLoopOptions) -> bool:
    """Whether a planning call now still leaves a step and the answer their calls."""
    # guard: replan-phase-planning-leave-step
    return ctx.calls_left(options) >= 1 + AFTER_PLANNING


async def synthesise(
    ctx: RunContext, prompts: Prompts, results: str, metrics: dict[str, float]
) -> Outcome:
    """The answer from the steps' ``results``, in a call with no tools (``prompts``: the
    pattern's, which include the synthesis slots)."""
    asked = prompts.render(ctx, SYNTHESIS_REQUEST.name, question=ctx.question, results=results)
    request = ModelRequest(
        ctx.model_name,
        (Message("user", asked),),
        system=prompts.render(ctx, SYNTHESIS.name),
        max_output_tokens=200,
    )
    response = await ctx.model.complete(request)
    return answer_reply(ctx, response, [Message("user", ctx.question), response.message], metrics)
