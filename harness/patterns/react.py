"""react: the native tool-calling loop (seed 000, and seed 003's structured loop).

Every request carries the whole conversation. The model calls tools (several may
arrive in one turn); each result goes back as a tool message, failures included.
With ``finish=text`` the run ends when the model replies without a tool call; with
``finish=tool`` it ends only when the model calls ``final_answer`` with an answer
and a non-empty list of evidence entries, so "the model stopped talking" becomes a
typed event the loop can check.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from harness.models.types import Message, ModelAPIError, ModelRequest
from harness.patterns.acting import Actions
from harness.patterns.base import Outcome, RunContext, ToolLoopOptions, budget_hit
from harness.patterns.registry import register
from harness.tools import Tool

MAX_OUTPUT_TOKENS = 400
FINAL_ANSWER = "final_answer"
SYSTEM = (
    "Answer the question. Use the tools to look facts up and to calculate; do not rely on memory. "
)
FINISH_TEXT = "When you know the answer, reply with it in a few words, without calling a tool."
FINISH_TOOL = (
    f"When you know the answer, call {FINAL_ANSWER} with the answer in a few words and the "
    "titles of the entries it rests on."
)
NUDGE = f"Call {FINAL_ANSWER} with your answer and the evidence it rests on."


class FinalAnswerArgs(BaseModel):
    answer: str = Field(min_length=1, description="The final answer, in a few words.")
    evidence: list[str] = Field(min_length=1, description="Titles of the entries it rests on.")


FINAL_ANSWER_TOOL = Tool(
    FINAL_ANSWER, "Give your final answer and its evidence.", FinalAnswerArgs, lambda _: "recorded"
)


class ReActOptions(ToolLoopOptions):
    finish: Literal["text", "tool"] = "text"
    """How a run ends: a reply without tool calls, or a call to final_answer."""


@dataclass(frozen=True)
class ReAct:
    options: ReActOptions
    name: str = "react"

    async def run(self, ctx: RunContext) -> Outcome:
        opts = self.options
        messages = [Message("user", ctx.question)]
        if opts.max_steps < 1:
            return Outcome("refused", messages=messages, error="max_steps must be at least 1")
        by_tool = opts.finish == "tool"
        tools = ctx.tools.with_tools(FINAL_ANSWER_TOOL) if by_tool else ctx.tools
        system = SYSTEM + (FINISH_TOOL if by_tool else FINISH_TEXT)
        actions = Actions(ctx, tools, opts.guard)
        steps = 0
        while (stop := budget_hit(ctx, steps, opts)) is None:
            request = ModelRequest(
                model=ctx.model_name,
                system=system,
                messages=tuple(messages),
                tools=tools.specs,
                max_output_tokens=MAX_OUTPUT_TOKENS,
            )
            try:
                response = await ctx.model.complete(request)
            except ModelAPIError as exc:
                return Outcome("api_error", messages=messages, steps=steps, error=str(exc))
            steps += 1
            reply = response.message
            messages.append(reply)
            if response.truncated:  # a half-written tool call must not be dispatched
                return Outcome("truncated", messages=messages, steps=steps)
            if not reply.tool_calls:
                if not by_tool:
                    return Outcome(
                        "answered", answer=reply.content.strip(), messages=messages, steps=steps
                    )
                ctx.emit("parse_failure", step=steps, text=reply.content)
                messages.append(Message("user", NUDGE))
                continue
            answer: str | None = None
            for call in reply.tool_calls:
                result = await actions.run(steps, call.name, call.arguments)
                if call.name == FINAL_ANSWER and result.ok and answer is None:
                    final = FinalAnswerArgs.model_validate_json(call.arguments)
                    answer = final.answer
                    ctx.emit("finish", step=steps, answer=answer, evidence=final.evidence)
                messages.append(Message("tool", result.content, tool_call_id=call.id))
            if answer is not None:
                return Outcome("answered", answer=answer, messages=messages, steps=steps)
        return Outcome(stop, messages=messages, steps=steps)


@register(
    "react",
    ReActOptions,
    "native tool-calling loop; 1 call per turn (several tools a turn), up to max_steps",
)
def react(options: ReActOptions) -> ReAct:
    return ReAct(options)
