"""react: the native tool-calling loop (seed 000, and seed 003's structured loop).

Every request carries the whole conversation (``history=window:N``: the last N steps in
full, the older ones a line each). The model calls tools (several may
arrive in one turn); each result goes back as a tool message, failures included.
With ``finish=text`` the run ends when the model replies without a tool call; with
``finish=tool`` it ends only when the model calls ``final_answer`` with an answer
and a non-empty list of evidence entries, so "the model stopped talking" becomes a
typed event the loop can check.

Its slots are the system prompt (``system``), made of the seed's ``thought`` (what the
model is to do with the question) and ``action`` (how it acts: the tools) and the sentence on
how a run ends (``finish_text`` or ``finish_tool``), and the texts the loop writes itself
(``nudge``, ``guard``). One system prompt asks for both thought and action: a reply carries
its thought as text and its actions as tool calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from loopbench.harness.events import FINAL_ANSWER
from loopbench.harness.models.types import Message
from loopbench.harness.patterns.acting import GUARD_SLOT
from loopbench.harness.patterns.base import (
    ONE_CALL,
    CallFloor,
    Outcome,
    RunContext,
    ToolLoopOptions,
)
from loopbench.harness.patterns.prompts import Prompts, Slot
from loopbench.harness.patterns.registry import register
from loopbench.harness.patterns.tool_loop import NUDGE_SLOT, Loop, tool_loop

THOUGHT = "Answer the question."
ACTION = "Use the tools to look facts up and to calculate; do not rely on memory."
SYSTEM = f"{THOUGHT} {ACTION} "
FINISH_TEXT = "When you know the answer, reply with it in a few words, without calling a tool."
FINISH_TOOL = (
    f"When you know the answer, call {FINAL_ANSWER} with the answer in a few words and the "
    "titles of the entries it rests on."
)
# guard: react-thought-shown-system-thought
PROMPTS = Prompts(
    Slot(
        "system",
        "{{ thought }} {{ action }} {{ finish }}",
        ("thought", "action", "finish"),
        about="the system prompt; finish is how a run ends (finish_text or finish_tool)",
    ),
    Slot(
        "thought",
        THOUGHT,
        about="what the model is to do with the question",
        shown_in=("system", "thought"),
    ),
    Slot("action", ACTION, about="how the model acts: its tools", shown_in=("system", "action")),
    Slot(
        "finish_text",
        FINISH_TEXT,
        about="how a run ends with finish=text",
        shown_in=("system", "finish"),
    ),
    Slot(
        "finish_tool",
        FINISH_TOOL,
        about=f"how a run ends with finish=tool ({FINAL_ANSWER})",
        shown_in=("system", "finish"),
    ),
    NUDGE_SLOT,
    GUARD_SLOT,
)


def react_system(finish_by_tool: bool) -> str:
    return SYSTEM + (FINISH_TOOL if finish_by_tool else FINISH_TEXT)


class ReActOptions(ToolLoopOptions):
    finish: Literal["text", "tool"] = "text"
    """How a run ends: a reply without tool calls, or a call to final_answer."""


@dataclass(frozen=True)
class ReAct:
    options: ReActOptions
    name: str = "react"

    def call_floor(self) -> CallFloor:
        return ONE_CALL

    async def run(self, ctx: RunContext) -> Outcome:
        messages = [Message("user", ctx.question)]
        by_tool = self.options.finish == "tool"
        finish = PROMPTS.render(ctx, "finish_tool" if by_tool else "finish_text")
        loop = Loop(
            self.options,
            PROMPTS.render(
                ctx,
                "system",
                thought=PROMPTS.render(ctx, "thought"),
                action=PROMPTS.render(ctx, "action"),
                finish=finish,
            ),
            ctx.tools,
            self.options.max_steps,
            finish_by_tool=by_tool,
            nudge=PROMPTS.render(ctx, "nudge"),
            warning=PROMPTS.render(ctx, "guard"),
        )
        return await tool_loop(ctx, loop, messages)


@register(
    "react",
    ReActOptions,
    "native tool-calling loop; 1 call per turn (several tools a turn), up to max_steps",
    PROMPTS,
)
def react(options: ReActOptions) -> ReAct:
    return ReAct(options)
