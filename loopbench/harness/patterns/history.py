"""What a tool loop re-sends of its earlier steps: ``history=full`` or ``history=window:N``.

Seed 003 prices a tool loop three ways: full replay (every call re-sends every earlier
step, so input grows with the square of the steps), prompt caching (the same, with the
repeated prefix billed at a discount) and compaction (only the last few steps in full).
``history`` makes the third an arm setting, so the three are measured on an endpoint.

A step is one assistant turn with what answered it: its tool calls and their results
(native tool calls), or one Thought/Action reply and its Observation (the text loop).
Under ``window:N`` the last N steps are sent as they are; each older one is sent as one
line, its action and a cut-down result (``Step 3: lookup(title=Nile) -> 6,650 km``), so
the model keeps the thread. Those lines are added to the last message before the first
step (the question's), so the request stays a conversation every API accepts: every
tool result still follows its own call, and user and assistant turns still alternate.
The conversation the pattern keeps (its trace, its outcome) is never compacted: only
what each request sends.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import replace

from loopbench.harness.models.types import Message

FULL = "full"
_WINDOW = re.compile(r"window:(?P<n>[0-9]+)")
#: What ``history`` accepts, as said when a value is refused.
WRITTEN = "full, or window:N with N a whole number of steps of at least 1"
#: Characters of an older step's action, of each of its results, and of its whole line.
ACTION_CHARS = 80
RESULT_CHARS = 100
LINE_CHARS = 300
HEADING = "Earlier steps, in short (the last {n} follow in full):"
_ACTION_LINE = re.compile(r"^\W*action\s*\d*\W*:\s*(?P<action>.+)$", re.IGNORECASE | re.MULTILINE)
_OBSERVATION = re.compile(r"^\s*observation\s*:\s*", re.IGNORECASE)


def checked(value: str) -> str:
    """``value`` as ``history`` keeps it (``window:02`` is ``window:2``); a ValueError
    saying what is accepted when it is neither form."""
    text = value.strip()
    if text == FULL:
        return FULL
    match = _WINDOW.fullmatch(text)
    # guard: history-window-at-least-one
    if match is None or int(match["n"]) < 1:
        raise ValueError(f"write {WRITTEN}")
    return f"window:{int(match['n'])}"


def window_of(history: str) -> int | None:
    """The steps ``history`` sends in full; None for all of them (full replay)."""
    if history == FULL:
        return None
    match = _WINDOW.fullmatch(history)
    return None if match is None else int(match["n"])


def compacted(messages: Sequence[Message], history: str) -> tuple[Message, ...]:
    """What a request sends of ``messages`` (a question, then steps) under ``history``:
    the messages themselves under full replay, or while the steps fit in the window."""
    window = window_of(history)
    if window is None:  # full replay, as most runs: nothing to split
        return tuple(messages)
    head, steps = split_steps(messages)
    # guard: history-window-bound
    if len(steps) <= window:
        return tuple(messages)
    older, kept = steps[:-window], steps[-window:]
    lines = [HEADING.format(n=window)]
    lines += [step_line(number, step) for number, step in enumerate(older, start=1)]
    summary = "\n".join(lines)
    if head and head[-1].role == "user":
        last = head[-1]
        head = [*head[:-1], replace(last, content=f"{last.content}\n\n{summary}")]
    else:
        head = [*head, Message("user", summary)]
    return (*head, *(message for step in kept for message in step))


def split_steps(messages: Sequence[Message]) -> tuple[list[Message], list[list[Message]]]:
    """The messages before the first assistant turn, and the steps: each assistant turn
    with the messages that answer it, up to the next assistant turn."""
    head: list[Message] = []
    steps: list[list[Message]] = []
    for message in messages:
        if message.role == "assistant":
            steps.append([message])
        elif steps:
            steps[-1].append(message)
        else:
            head.append(message)
    return head, steps


def step_line(number: int, step: Sequence[Message]) -> str:
    """One older step as one bounded line: each action with its result cut down."""
    turn, answers = step[0], step[1:]
    if turn.tool_calls:
        results = {m.tool_call_id: m.content for m in answers if m.role == "tool"}
        told = [m.content for m in answers if m.role != "tool"]
        parts = [
            f"{_cut(f'{call.name}({_arguments(call.arguments)})', ACTION_CHARS)} -> "
            f"{_cut(results.get(call.id, '(no result)'), RESULT_CHARS)}"
            for call in turn.tool_calls
        ]
    else:
        found = _ACTION_LINE.search(turn.content)
        action = found["action"] if found else _first_line(turn.content) or "(empty reply)"
        told = [_OBSERVATION.sub("", m.content, count=1) for m in answers]
        parts = [_cut(action, ACTION_CHARS)]
    if told:
        parts[-1] += f" -> {_cut(' / '.join(told), RESULT_CHARS)}"
    # guard: history-older-step-one-line
    return _cut(f"Step {number}: " + "; ".join(parts), LINE_CHARS)


def _arguments(raw: str) -> str:
    """Arguments as ``key=value, ...`` when they are a JSON object; as written otherwise."""
    try:
        parsed = json.loads(raw)
    except ValueError:
        return raw
    if not isinstance(parsed, dict):
        return raw
    return ", ".join(
        f"{key}={value if isinstance(value, str) else json.dumps(value)}"
        for key, value in parsed.items()
    )


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _cut(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters, a cut marked by an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
