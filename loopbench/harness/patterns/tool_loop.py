"""The native tool-calling loop shared by react, plan, reflection and the patterns built on them.

Every request carries the whole conversation (or, with ``history=window:N``, its last N
steps in full and the older ones a line each: ``loopbench.harness.patterns.history``). Each tool
call's result goes back as a tool message, failures included. With ``finish_by_tool``
the loop ends only on a valid ``final_answer`` call; otherwise on a reply without tool
calls. The two texts the loop writes itself, the nudge and the guard's warning, are
slots (``NUDGE_SLOT``, ``acting.GUARD_SLOT``) that a pattern renders into its ``Loop``;
built-in otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field

from loopbench.harness.events import FINAL_ANSWER, FinishEvent, ParseFailureEvent
from loopbench.harness.models.types import Message, ModelRequest
from loopbench.harness.patterns.acting import GUARD_OBSERVATION, Actions
from loopbench.harness.patterns.base import Outcome, RunContext, ToolLoopOptions, answer_reply
from loopbench.harness.patterns.history import compacted
from loopbench.harness.patterns.prompts import Slot
from loopbench.harness.tools import Tool, ToolSet

MAX_OUTPUT_TOKENS = 400
NUDGE = f"Call {FINAL_ANSWER} with your answer and the evidence it rests on."
NUDGE_SLOT = Slot(
    "nudge", NUDGE, about=f"the reminder after a reply that ends without calling {FINAL_ANSWER}"
)


class FinalAnswerArgs(BaseModel):
    answer: str = Field(min_length=1, description="The final answer, in a few words.")
    evidence: list[str] = Field(min_length=1, description="Titles of the entries it rests on.")


FINAL_ANSWER_TOOL = Tool(
    FINAL_ANSWER, "Give your final answer and its evidence.", FinalAnswerArgs, lambda _: "recorded"
)


@dataclass(frozen=True)
class Loop:
    """One tool-calling loop: what it sends and how long it may go on."""

    options: ToolLoopOptions
    system: str
    tools: ToolSet
    max_steps: int
    """This loop's share of the run's calls (a pattern reserves the rest for its later
    phases); the run-wide limits are the limits wrapper's."""
    first_step: int = 0
    """Numbers this loop's steps after a phase that came before it, so a pattern with a
    phase of its own (a plan) does not emit step 1 twice."""
    finish_by_tool: bool = False
    """End only on a valid ``final_answer`` call; otherwise on a reply without tool calls."""
    temperature: float | None = None
    nudge: str = NUDGE
    """What a reply that does not call ``final_answer`` is answered with (``finish_by_tool``)."""
    warning: str = GUARD_OBSERVATION
    """What a repeated action shows instead of its result when the guard is on."""


async def tool_loop(ctx: RunContext, loop: Loop, messages: list[Message]) -> Outcome:
    """Run until an answer or ``loop.max_steps`` calls; ``messages`` is extended in place."""
    options, system, tools = loop.options, loop.system, loop.tools
    max_steps, first_step = loop.max_steps, loop.first_step
    finish_by_tool, temperature = loop.finish_by_tool, loop.temperature
    if finish_by_tool:
        tools = tools.with_tools(FINAL_ANSWER_TOOL)
    actions = Actions(ctx, tools, options.guard, loop.warning)
    steps = 0
    while steps < max_steps:
        step = first_step + steps + 1
        # guard: clone-before-append-tool-loop
        request = ModelRequest(
            model=ctx.model_name,
            system=system,
            messages=compacted(messages, options.history),
            tools=tools.specs,
            max_output_tokens=MAX_OUTPUT_TOKENS,
            temperature=temperature,
        )
        response = await ctx.model.complete(request)
        steps += 1
        reply = response.message
        messages.append(reply)
        # guard: truncation-tool-loop
        if response.truncated:  # a half-written tool call must not be dispatched
            calls = len(reply.tool_calls)
            return Outcome(
                "truncated",
                messages=messages,
                steps=steps,
                error=f"call {step} hit the output-token limit; its {calls} tool call(s) "
                "were not run",
            )
        if not reply.tool_calls:
            if not finish_by_tool:
                outcome = answer_reply(ctx, response, messages)  # a new one: set, not copied
                outcome.steps = steps
                return outcome
            ctx.emit(ParseFailureEvent(step=step, text=reply.content))
            messages.append(Message("user", loop.nudge))
            continue
        answer: str | None = None
        for call in reply.tool_calls:
            result = await actions.run(step, call.name, call.arguments)
            if call.name == FINAL_ANSWER and result.ok and answer is None:
                # The arguments as the tool set validated them: parsed once, one way.
                # guard: final-answer-read-as-tool
                final = FinalAnswerArgs.model_validate_json(result.args_key or "{}")
                answer = final.answer
                ctx.emit(FinishEvent(step=step, answer=answer, evidence=final.evidence))
            messages.append(Message("tool", result.content, tool_call_id=call.id))
        if answer is not None:
            return Outcome("answered", answer=answer, messages=messages, steps=steps)
    return Outcome("step_budget", messages=messages, steps=steps)
