"""The trace of one run: every request, response, tool call and pattern event, in order.

Events are kept as cheap tuples while the run is live and turned into JSON once,
when the runner writes the run's trace line.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

from harness.models.types import Message, ModelRequest, ModelResponse
from harness.models.wire import message_to_wire

#: Why a pattern gave an answer on its way: reflection's draft and revisions, reflexion's
#: attempts, best_of_n's candidates, self_consistency's samples.
AnswerRole = Literal["draft", "revision", "attempt", "candidate", "sample"]


@dataclass(frozen=True)
class AnswerEvent:
    """An answer traced on the way to the final one; ``accepted`` is a check's verdict."""

    role: AnswerRole
    answer: str
    accepted: bool | None = None


@dataclass(frozen=True)
class TracedAnswer:
    """An answer already in the trace, whose check has not judged it yet."""

    _data: dict[str, Any]

    def judge(self, accepted: bool) -> None:
        self._data["accepted"] = accepted


#: The most characters of one message's text (or one tool call's arguments) a trace keeps.
MAX_TEXT = 100_000


@dataclass
class Trace:
    started: float = field(default_factory=time.perf_counter)
    events: list[tuple[float, str, dict[str, Any]]] = field(default_factory=list)
    #: Longer texts are cut in the trace, with a marker; what is graded is never cut.
    max_text: int = MAX_TEXT

    def emit(self, kind: str, **data: Any) -> None:
        self.events.append((time.perf_counter() - self.started, kind, data))

    def answer(self, role: AnswerRole, answer: str, accepted: bool | None = None) -> TracedAnswer:
        self.emit("answer", role=role, answer=answer, accepted=accepted)
        return TracedAnswer(self.events[-1][2])

    def answers(self) -> list[AnswerEvent]:
        """Every answer traced with ``answer``, in order."""
        return [
            AnswerEvent(data["role"], data["answer"], data["accepted"])
            for _, kind, data in self.events
            if kind == "answer"
        ]

    def count(self, kind: str) -> int:
        return sum(1 for _, k, _ in self.events if k == kind)

    def to_json(self) -> list[dict[str, Any]]:
        return [
            {"t": round(t, 6), "kind": kind, **_jsonable(data, self.max_text)}
            for t, kind, data in self.events
        ]


def _jsonable(data: dict[str, Any], max_text: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, ModelRequest):
            out[key] = request_json(value, max_text)
        elif isinstance(value, ModelResponse):
            out[key] = response_json(value, max_text)
        elif isinstance(value, Message):
            out[key] = _wire(value, max_text)
        elif isinstance(value, list) and value and all(isinstance(v, Message) for v in value):
            out[key] = [_wire(m, max_text) for m in value]
        elif isinstance(value, str):
            out[key] = cut(value, max_text)
        else:
            out[key] = value
    return out


def cut(text: str, max_text: int) -> str:
    """``text``, or its first ``max_text`` characters and a marker saying what was cut."""
    if len(text) <= max_text:
        return text
    return f"{text[:max_text]}[... {len(text) - max_text} more characters cut on disk]"


#: The most tool calls of one message a trace keeps.
MAX_TOOL_CALLS = 100


def _wire(message: Message, max_text: int) -> dict[str, Any]:
    wire = message_to_wire(message)
    if isinstance(wire.get("content"), str):
        wire["content"] = cut(wire["content"], max_text)
    calls = wire.get("tool_calls", [])
    for call in calls[:MAX_TOOL_CALLS]:
        call["id"] = cut(call["id"], max_text)
        function = call["function"]
        function["name"] = cut(function["name"], max_text)
        function["arguments"] = cut(function["arguments"], max_text)
    if len(calls) > MAX_TOOL_CALLS:
        more = len(calls) - MAX_TOOL_CALLS
        wire["tool_calls"] = [*calls[:MAX_TOOL_CALLS], {"cut": f"{more} more tool calls"}]
    return wire


def request_json(request: ModelRequest, max_text: int = MAX_TEXT) -> dict[str, Any]:
    return {
        "model": request.model,
        "system": request.system,
        "messages": [_wire(m, max_text) for m in request.messages],
        "tools": [t.name for t in request.tools],
        "tool_choice": request.tool_choice,
        "temperature": request.temperature,
        "top_p": request.top_p,
        "seed": request.seed,
        "max_output_tokens": request.max_output_tokens,
        "stop": list(request.stop),
    }


def response_json(response: ModelResponse, max_text: int = MAX_TEXT) -> dict[str, Any]:
    u = response.usage
    return {
        "message": _wire(response.message, max_text),
        "finish_reason": response.finish_reason,
        "usage": {"input": u.input_tokens, "output": u.output_tokens, "cached": u.cached_tokens},
        "retries": response.retries,
        "from_cache": response.from_cache,
    }
