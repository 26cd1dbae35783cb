"""A run's trace events as a conversation to read: each text once, in the order it happened.

Every request repeats the whole conversation so far; kept as it is, a trace grows with
the square of its turns. Here a request adds only the messages it has that the one
before it did not, the model's own replies are shown once (as the response that made
them), and a tool result shown with its call is not shown again as the observation the
model was given, unless what it was given differs (the repeated-action guard's warning).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

Entry = dict[str, Any]

#: Keys of a pattern's own event that are not shown: when it happened, what it is, and the
#: whole conversation a limit_reached event repeats.
_HIDDEN = ("t", "kind", "conversation")


def conversation(events: Sequence[Mapping[str, Any]]) -> list[Entry]:
    """``events`` (as ``traces.jsonl`` holds them) as entries keyed ``k``: ``system``,
    ``example`` (the messages a prompt holds before its question), ``message``, ``again`` (a
    request that does not go on from the one before), ``reply``, ``tool``, ``error`` and
    ``event`` (any other kind, such as a pattern's plan or vote)."""
    reader = _Reader()
    for event in events:
        reader.read(event)
    return reader.entries


class _Reader:
    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.before: list[Any] | None = None  # the last request's messages
        self.system: str | None = None
        self.replies: set[str] = set()
        self.said = ""  # the last reply's text, which a parse_failure event repeats
        self.results: list[str] = []  # tool results shown since the last request

    def read(self, event: Mapping[str, Any]) -> None:
        kind = event.get("kind")
        if kind == "request":
            self.request(event.get("request") or {}, event.get("call"))
        elif kind == "response":
            self.response(event.get("response") or {})
        elif kind == "tool_call":
            self.results.append(_text(event.get("result")))
            self.entries.append(
                {
                    "k": "tool",
                    "tool": _text(event.get("tool")),
                    "args": _text(event.get("arguments")),
                    "ok": bool(event.get("ok")),
                    "result": self.results[-1],
                }
            )
        elif kind == "api_error":
            self.entries.append(
                {
                    "k": "error",
                    "text": _text(event.get("error")),
                    "status": event.get("status"),
                    "retries": event.get("retries", 0),
                }
            )
        else:
            detail = {
                key: value
                for key, value in event.items()
                if key not in _HIDDEN and not (key == "text" and value == self.said)
            }
            self.entries.append({"k": "event", "kind": _text(kind), "detail": detail})

    def request(self, request: Mapping[str, Any], call: Any) -> None:
        messages = list(request.get("messages") or [])
        before = self.before
        goes_on = before is not None and messages[: len(before)] == before
        if before is not None and (not goes_on or len(messages) == len(before)):
            self.entries.append({"k": "again", "call": call, "same": goes_on})
        if request.get("system", "") != self.system:
            self.system = str(request.get("system") or "")
            self.entries.append(
                {"k": "system", "text": self.system, "tools": request.get("tools", [])}
            )
        new = messages[len(before) :] if goes_on and before is not None else messages
        if not goes_on and (start := _question_at(messages)):
            self.entries.append({"k": "example", "messages": [_message(m) for m in new[:start]]})
            new = new[start:]
        for message in new:
            if not self._shown(message):
                self.entries.append(_message(message))
        self.before, self.results = messages, []

    def response(self, response: Mapping[str, Any]) -> None:
        message = response.get("message") or {}
        self.replies.add(_key(message))
        self.said = _text(message.get("content"))
        usage = response.get("usage") or {}
        self.entries.append(
            {
                **_message(message),
                "k": "reply",
                "finish": response.get("finish_reason"),
                "in": usage.get("input"),
                "out": usage.get("output"),
                "cached": bool(response.get("from_cache")),
                "retries": response.get("retries", 0),
            }
        )

    def _shown(self, message: Mapping[str, Any]) -> bool:
        """Whether ``message`` is already on screen: a reply of the model's, or a tool
        result shown with its call."""
        role = message.get("role")
        if role == "assistant":
            return _key(message) in self.replies
        text = _text(message.get("content"))
        observation = text.removeprefix("Observation: ") if role == "user" else text
        if (role == "tool" or text.startswith("Observation: ")) and observation in self.results:
            self.results.remove(observation)
            return True
        return False


def _question_at(messages: Sequence[Mapping[str, Any]]) -> int:
    """Where a conversation's question is: its last user message that is not an
    observation. What comes before it (a worked example) was written into the prompt."""
    asked = [
        i
        for i, m in enumerate(messages)
        if m.get("role") == "user" and not _text(m.get("content")).startswith("Observation:")
    ]
    return asked[-1] if asked else 0


def _message(message: Mapping[str, Any]) -> Entry:
    calls = [
        {"name": _text(f.get("name")), "args": _text(f.get("arguments"))}
        for call in message.get("tool_calls") or []
        if isinstance(f := call.get("function"), Mapping)
    ]
    entry: Entry = {"k": "message", "role": _text(message.get("role")), "text": ""}
    if message.get("content") is not None:
        entry["text"] = _text(message.get("content"))
    if calls:
        entry["calls"] = calls
    return entry


def _key(message: Mapping[str, Any]) -> str:
    """A message as compared with the replies already shown (tool call ids aside)."""
    return json.dumps(_message(message), sort_keys=True)


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
