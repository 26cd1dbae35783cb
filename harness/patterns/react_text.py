"""react_text: the text ReAct loop of seed 003.

The model writes ``Thought: ...`` and ``Action: tool[argument]``; the loop runs the
action and appends ``Observation: ...``; ``finish[answer]`` ends the run. Each call
carries the whole conversation so far, after one worked example given as chat turns
(small models follow a format they have seen themselves write far more often than
one described in the system prompt).

Small models rarely keep the format, so parsing is lenient about case, ``Action 2:``
numbering, markdown emphasis, round brackets, quotes and trailing text, but exact
about what counts: one known action with its argument. A reply with no action is a
recorded ``parse_failure`` event answered with a reminder of the format, not a crash.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from harness.events import FinishEvent, ParseFailureEvent
from harness.models.types import Message, ModelRequest
from harness.patterns.acting import Actions
from harness.patterns.base import ONE_CALL, CallFloor, Outcome, RunContext, ToolLoopOptions
from harness.patterns.registry import register

MAX_OUTPUT_TOKENS = 256
FINISH = "finish"
_ACTION_LINE = re.compile(
    r"^[\s*_>#-]*action\s*\d*\s*[*_]*\s*:[\s*_`]*(?P<name>[a-z_]\w*)\s*(?P<open>[\[(])",
    re.IGNORECASE | re.MULTILINE,
)
_ANSWER_LINE = re.compile(
    r"^[\s*_>#-]*final\s+answer\s*[*_]*\s*:\s*(?P<answer>.+)$", re.IGNORECASE | re.MULTILINE
)
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
        return TextAction(FINISH, answer.group("answer").strip())
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


def system_prompt(tool_lines: list[str]) -> str:
    return (
        "Answer the question by looking facts up; do not rely on memory. Each turn, write "
        "one line 'Thought: ...' and then one line 'Action: ...' with exactly one of these "
        "actions:\n"
        + "\n".join(tool_lines)
        + "\nfinish[answer] - give your final answer, in a few words\n"
        "After each action you are shown 'Observation: ...'."
    )


# A worked example on made-up entries, so it cannot leak an answer from any task set.
EXAMPLE = (
    Message(
        "user", "Question: How many years after the Alder bridge opened did the Birch tunnel open?"
    ),
    Message(
        "assistant",
        "Thought: I need the opening year of the Alder bridge.\nAction: lookup[Alder bridge]",
    ),
    Message("user", "Observation: A road bridge, opened in 1950."),
    Message("assistant", "Thought: Now the Birch tunnel.\nAction: lookup[Birch tunnel]"),
    Message("user", "Observation: A rail tunnel, opened in 1975."),
    Message("assistant", "Thought: I subtract the years.\nAction: calc[1975 - 1950]"),
    Message("user", "Observation: 25"),
    Message("assistant", "Thought: I know the answer.\nAction: finish[25 years]"),
)


@dataclass(frozen=True)
class ReActText:
    options: ToolLoopOptions
    name: str = "react_text"

    def call_floor(self) -> CallFloor:
        return ONE_CALL

    async def run(self, ctx: RunContext) -> Outcome:
        opts = self.options
        messages = [Message("user", f"Question: {ctx.question}")]
        known = ctx.tools.names
        system = system_prompt(
            [f"{t.name}[{t.text_argument}] - {t.description}" for t in ctx.tools]
        )
        actions = Actions(ctx, ctx.tools, opts.guard)
        steps = 0
        while steps < opts.max_steps:
            request = ModelRequest(
                model=ctx.model_name,
                system=system,
                messages=(*EXAMPLE, *messages),
                max_output_tokens=MAX_OUTPUT_TOKENS,
                stop=("\nObservation:",),
            )
            response = await ctx.model.complete(request)
            steps += 1
            messages.append(response.message)
            if response.truncated:
                return Outcome("truncated", messages=messages, steps=steps)
            action = parse_action(response.message.content, [*known, FINISH])
            if action is None:
                ctx.emit(ParseFailureEvent(step=steps, text=response.message.content))
                observation = (
                    "I found no action in your reply. Write 'Action: ' followed by one of "
                    f"{', '.join(f'{k}[...]' for k in [*known, FINISH])}."
                )
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
)
def react_text(options: ToolLoopOptions) -> ReActText:
    return ReActText(options)
