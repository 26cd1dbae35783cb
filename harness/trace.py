"""The trace of one run: every request, response, tool call and pattern event, in order.

Events are kept as cheap tuples while the run is live and turned into JSON once,
when the runner writes the run's trace line.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from harness.models.openai_compat import message_to_wire
from harness.models.types import Message, ModelRequest, ModelResponse


@dataclass
class Trace:
    started: float = field(default_factory=time.perf_counter)
    events: list[tuple[float, str, dict[str, Any]]] = field(default_factory=list)

    def emit(self, kind: str, **data: Any) -> None:
        self.events.append((time.perf_counter() - self.started, kind, data))

    def count(self, kind: str) -> int:
        return sum(1 for _, k, _ in self.events if k == kind)

    def to_json(self) -> list[dict[str, Any]]:
        return [
            {"t": round(t, 6), "kind": kind, **_jsonable(data)} for t, kind, data in self.events
        ]


def _jsonable(data: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, ModelRequest):
            out[key] = request_json(value)
        elif isinstance(value, ModelResponse):
            out[key] = response_json(value)
        elif isinstance(value, Message):
            out[key] = message_to_wire(value)
        else:
            out[key] = value
    return out


def request_json(request: ModelRequest) -> dict[str, Any]:
    return {
        "model": request.model,
        "system": request.system,
        "messages": [message_to_wire(m) for m in request.messages],
        "tools": [t.name for t in request.tools],
        "tool_choice": request.tool_choice,
        "temperature": request.temperature,
        "max_output_tokens": request.max_output_tokens,
        "stop": list(request.stop),
    }


def response_json(response: ModelResponse) -> dict[str, Any]:
    u = response.usage
    return {
        "message": message_to_wire(response.message),
        "finish_reason": response.finish_reason,
        "usage": {"input": u.input_tokens, "output": u.output_tokens, "cached": u.cached_tokens},
        "retries": response.retries,
    }
