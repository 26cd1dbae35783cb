"""react_text: the text ReAct loop of seed 003.

The model writes ``Thought: ...`` and ``Action: tool[argument]``; the loop runs the
action and appends ``Observation: ...``; ``finish[answer]`` ends the run. Each call
carries the whole conversation so far, after one worked example given as chat turns
(small models follow a format they have seen themselves write far more often than
one described in the system prompt). With ``history=window:N`` only the last N
Thought/Action/Observation steps are sent in full (``loopbench.harness.patterns.history``).

Small models rarely keep the format, so parsing is lenient about case, ``Action 2:``
numbering, markdown emphasis, round brackets, quotes and trailing text, but exact
about what counts: one known action with its argument. A reply with no action is a
recorded ``parse_failure`` event answered with a reminder of the format, not a crash.

Its prompts are the system prompt, made of the seed's ``thought`` (how to write the
thought line) and ``action`` (how to write the action line, with the actions), the worked
example (written as a transcript), the question's message, that reminder and the guard's
warning.
The ``Observation:`` before each result is fixed: the reply's stop sequence and the
trace's reading of a conversation rely on it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from loopbench.graders.reading import answer_part
from loopbench.harness.events import FinishEvent, ParseFailureEvent
from loopbench.harness.models.types import Message, ModelRequest
from loopbench.harness.patterns.acting import GUARD_SLOT, Actions
from loopbench.harness.patterns.base import (
    ONE_CALL,
    CallFloor,
    Outcome,
    RunContext,
    ToolLoopOptions,
)
from loopbench.harness.patterns.history import compacted
from loopbench.harness.patterns.prompts import Prompts, Slot
from loopbench.harness.patterns.registry import register

MAX_OUTPUT_TOKENS = 256
FINISH = "finish"
_ACTION_LINE = re.compile(
    r"^[\s*_>#-]*action\s*\d*\s*[*_]*\s*:[\s*_`]*(?P<name>[a-z_]\w*)\s*(?P<open>[\[(])",
    re.IGNORECASE | re.MULTILINE,
)
_ANSWER_LINE = re.compile(
    r"^[\s*_>#-]*final\s+answer\s*[*_]*\s*:\s*(?P<answer>.+)$", re.IGNORECASE | re.MULTILINE
)
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_CLOSERS = {"[": "]", "(": ")"}
_QUOTES = "\"'`"


@dataclass(frozen=True)
class TextAction:
    name: str
    argument: str


def parse_action(text: str, known: list[str]) -> TextAction | None:
    """The first action in a reply, or None when it holds none.

    Observations the model writes itself are never read as results: the request's stop
    sequence ends a reply at one, and one it opens with is skipped over.
    """
    match = _ACTION_LINE.search(text)
    if match is None:
        bare = "|".join(re.escape(k) for k in known)
        match = re.search(
            rf"^[\s*_>#`-]*(?P<name>{bare})\s*(?P<open>[\[(])", text, re.IGNORECASE | re.MULTILINE
        )
    if match is not None:
        argument = _bracketed(text, match.end(), match.group("open"))
        return TextAction(match.group("name").lower(), argument.strip().strip(_QUOTES).strip())
    answer = _ANSWER_LINE.search(text)
    if answer is not None:
        # The answer as every grader reads one: a correction after the line still counts.
        kept = answer_part(text[answer.start() :]) or answer.group("answer").strip()
        return TextAction(FINISH, kept)
    return None


def _bracketed(text: str, start: int, opener: str) -> str:
    """Text up to the bracket that closes ``opener``; to the end of the line if none does."""
    closer, depth = _CLOSERS[opener], 1
    for i in range(start, len(text)):
        char = text[i]
        if char == "\n":
            return text[start:i].rstrip(closer)
        depth += (char == opener) - (char == closer)
        if depth == 0:
            return text[start:i]
    return text[start:].rstrip(closer)


THOUGHT = "Each turn, write one line 'Thought: ...' and then"
ACTION = (
    "one line 'Action: ...' with exactly one of these actions:\n{{ tools }}\n"
    "finish[answer] - give your final answer, in a few words\n"
)
SYSTEM = (
    "Answer the question by looking facts up; do not rely on memory. {{ thought }} "
    "{{ action }}After each action you are shown 'Observation: ...'."
)
# A worked example on made-up entries, so it cannot leak an answer from any task set.
EXAMPLE_TEXT = """\
Question: How many years after the Alder bridge opened did the Birch tunnel open?

Thought: I need the opening year of the Alder bridge.
Action: lookup[Alder bridge]

Observation: A road bridge, opened in 1950.

Thought: Now the Birch tunnel.
Action: lookup[Birch tunnel]

Observation: A rail tunnel, opened in 1975.

Thought: I subtract the years.
Action: calc[1975 - 1950]

Observation: 25

Thought: I know the answer.
Action: finish[25 years]"""
PROMPTS = Prompts(
    Slot(
        "system",
        SYSTEM,
        ("tools", "thought", "action"),
        about="the system prompt; tools lists the tool actions, one 'name[argument] - what' a line",
    ),
    Slot(
        "thought",
        THOUGHT,
        about="how the model writes its thought each turn",
        shown_in=("system", "thought"),
    ),
    Slot(
        "action",
        ACTION,
        ("tools",),
        about="how the model writes its action; tools as above",
        shown_in=("system", "action"),
    ),
    Slot(
        "example",
        EXAMPLE_TEXT,
        about="the worked example, sent before the question as chat turns: turns apart by a "
        "blank line, the user's first and then in turn (empty for none)",
    ),
    Slot(
        "question",
        "Question: {{ question }}",
        ("question",),
        about="the question's message",
        needs=("question",),
    ),
    Slot(
        "no_action",
        "I found no action in your reply. Write 'Action: ' followed by one of {{ actions }}.",
        ("actions",),
        about="the observation after a reply with no action; actions lists them, 'name[...]'",
    ),
    GUARD_SLOT,
)


def example_turns(text: str) -> tuple[Message, ...]:
    """A worked example written as turns apart by a blank line, the user's first."""
    turns = [turn.strip() for turn in _BLANK_LINE.split(text) if turn.strip()]
    return tuple(Message(("user", "assistant")[i % 2], turn) for i, turn in enumerate(turns))


EXAMPLE = example_turns(EXAMPLE_TEXT)


@dataclass(frozen=True)
class ReActText:
    options: ToolLoopOptions
    name: str = "react_text"

    def call_floor(self) -> CallFloor:
        return ONE_CALL

    async def run(self, ctx: RunContext) -> Outcome:
        opts = self.options
        messages = [Message("user", PROMPTS.render(ctx, "question", question=ctx.question))]
        known = [*ctx.tools.names, FINISH]
        tools = "\n".join(f"{t.name}[{t.text_argument}] - {t.description}" for t in ctx.tools)
        system = PROMPTS.render(
            ctx,
            "system",
            tools=tools,
            thought=PROMPTS.render(ctx, "thought"),
            action=PROMPTS.render(ctx, "action", tools=tools),
        )
        example = example_turns(PROMPTS.render(ctx, "example"))
        no_action = PROMPTS.render(ctx, "no_action", actions=", ".join(f"{k}[...]" for k in known))
        actions = Actions(ctx, ctx.tools, opts.guard, PROMPTS.render(ctx, "guard"))
        steps = 0
        while steps < opts.max_steps:
            # guard: clone-before-append-react-text
            request = ModelRequest(
                model=ctx.model_name,
                system=system,
                messages=(*example, *compacted(messages, opts.history)),
                max_output_tokens=MAX_OUTPUT_TOKENS,
                stop=("\nObservation:",),
            )
            response = await ctx.model.complete(request)
            steps += 1
            messages.append(response.message)
            if response.truncated:
                return Outcome("truncated", messages=messages, steps=steps)
            action = parse_action(response.message.content, known)
            if action is None:
                ctx.emit(ParseFailureEvent(step=steps, text=response.message.content))
                observation = no_action
            elif action.name == FINISH:
                ctx.emit(FinishEvent(step=steps, answer=action.argument))
                return Outcome("answered", answer=action.argument, messages=messages, steps=steps)
            else:
                tool = ctx.tools.get(action.name)
                # An unknown action keeps its argument, so two different ones are not a repeat.
                arguments = {tool.text_argument: action.argument} if tool else action.argument
                result = await actions.run(steps, action.name, arguments)
                observation = result.content
            messages.append(Message("user", f"Observation: {observation}"))
        return Outcome("step_budget", messages=messages, steps=steps)


@register(
    "react_text",
    ToolLoopOptions,
    "text ReAct (Thought/Action/Observation); 1 call per action, up to max_steps",
    PROMPTS,
)
def react_text(options: ToolLoopOptions) -> ReActText:
    return ReActText(options)
