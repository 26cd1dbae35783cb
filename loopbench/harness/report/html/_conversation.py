"""A run's trace events as a conversation to read: each text once, in the order it happened.

Every request repeats the whole conversation so far; kept as it is, a trace grows with
the square of its turns. Here a request adds only the messages it has that the one
before it did not, the model's own replies are shown once (as the response that made
them), and a tool result shown with its call is not shown again as the observation the
model was given, unless what it was given differs (the repeated-action guard's warning).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from loopbench.harness.events import (
    OBSERVATION,
    ApiErrorEvent,
    Event,
    RequestEvent,
    ResponseEvent,
    ToolCallEvent,
    TracedRequest,
    TracedResponse,
    WireMessage,
    question_at,
)

Entry = dict[str, Any]


def conversation(events: Sequence[Event]) -> list[Entry]:
    """``events`` (as ``loopbench.harness.events.parse_events`` reads them) as entries keyed ``k``:
    ``system``, ``example`` (the messages a prompt holds before its question), ``message``,
    ``again`` (a request that does not go on from the one before), ``reply``, ``tool``,
    ``error`` and ``event`` (any other kind, such as a pattern's plan or vote)."""
    reader = _Reader()
    for event in events:
        reader.read(event)
    return reader.entries


class _Reader:
    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.before: list[WireMessage] | None = None  # the last request's messages
        self.system: str | None = None
        self.replies: set[str] = set()
        self.said = ""  # the last reply's text, which a parse_failure event repeats
        self.results: list[str] = []  # tool results shown since the last request

    def read(self, event: Event) -> None:
        if isinstance(event, RequestEvent):
            self.request(event.request, event.call)
        elif isinstance(event, ResponseEvent):
            self.response(event.response)
        elif isinstance(event, ToolCallEvent):
            self.results.append(event.result)
            self.entries.append(
                {
                    "k": "tool",
                    "tool": event.tool,
                    "args": _text(event.arguments),
                    "ok": event.ok,
                    "result": event.result,
                }
            )
        elif isinstance(event, ApiErrorEvent):
            self.entries.append(
                {
                    "k": "error",
                    "text": event.error,
                    "status": event.status,
                    "retries": event.retries,
                }
            )
        else:
            # Not shown: the whole conversation a limit_reached event repeats, and the text of
            # a parse_failure, which is the reply just shown.
            detail = {
                key: value
                for key, value in event.data().items()
                if key != "conversation" and not (key == "text" and value == self.said)
            }
            self.entries.append({"k": "event", "kind": event.kind, "detail": detail})

    def request(self, request: TracedRequest, call: int) -> None:
        messages = request["messages"]
        before = self.before
        goes_on = before is not None and messages[: len(before)] == before
        if before is not None and (not goes_on or len(messages) == len(before)):
            self.entries.append({"k": "again", "call": call, "same": goes_on})
        if request["system"] != self.system:
            self.system = request["system"]
            self.entries.append({"k": "system", "text": self.system, "tools": request["tools"]})
        new = messages[len(before) :] if goes_on and before is not None else messages
        if not goes_on and (start := question_at(messages) or 0):
            self.entries.append({"k": "example", "messages": [_message(m) for m in new[:start]]})
            new = new[start:]
        for message in new:
            if not self._shown(message):
                self.entries.append(_message(message))
        self.before, self.results = messages, []

    def response(self, response: TracedResponse) -> None:
        message = response["message"]
        self.replies.add(_key(message))
        self.said = message["content"] or ""
        usage = response["usage"]
        self.entries.append(
            {
                **_message(message),
                "k": "reply",
                "finish": response["finish_reason"],
                "in": usage["input"],
                "out": usage["output"],
                "cached": response.get("from_cache", False),
                "retries": response["retries"],
            }
        )

    def _shown(self, message: WireMessage) -> bool:
        """Whether ``message`` is already on screen: a reply of the model's, or a tool
        result shown with its call."""
        role = message["role"]
        if role == "assistant":
            return _key(message) in self.replies
        text = message["content"] or ""
        observed = f"{OBSERVATION} "
        observation = text.removeprefix(observed) if role == "user" else text
        if (role == "tool" or text.startswith(observed)) and observation in self.results:
            self.results.remove(observation)
            return True
        return False


def _message(message: WireMessage) -> Entry:
    calls = [
        {"name": function["name"], "args": function["arguments"]}
        for call in message.get("tool_calls", [])
        if (function := call.get("function")) is not None
    ]
    entry: Entry = {"k": "message", "role": message["role"], "text": message["content"] or ""}
    if calls:
        entry["calls"] = calls
    return entry


def _key(message: WireMessage) -> str:
    """A message as compared with the replies already shown (tool call ids aside)."""
    return json.dumps(_message(message), sort_keys=True)


def _text(value: str | dict[str, Any]) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
