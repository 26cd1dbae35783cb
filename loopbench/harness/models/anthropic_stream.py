"""Anthropic's Messages API streamed (``stream: true``), built back into the message the
API would have sent whole, so the client parses a streamed reply as any other.

The events, in order: ``message_start`` (the message with no content yet, and its usage
so far: the input tokens and both cache counts), then for each content block a
``content_block_start`` (a ``text``, ``tool_use``, ``thinking`` or ``redacted_thinking``
block), its ``content_block_delta`` events (``text_delta``, ``input_json_delta``: a
piece of the tool call's input as JSON text, ``thinking_delta``, ``signature_delta``) and
a ``content_block_stop``; then ``message_delta`` (the stop reason, and usage: the output
tokens, and any count it repeats, which replaces the one before) and ``message_stop``.
``ping`` events may come anywhere; an ``error`` event ends the stream with the error it
names. Event types not listed are skipped, as the API asks of its clients.

``body()`` is the message so far, with ``usage`` holding ``input_tokens``,
``output_tokens``, ``cache_read_input_tokens`` and ``cache_creation_input_tokens``: what
a stream cut short had reported is counted. The stream is done at ``message_stop``.

Time to first token: the first event carrying text the caller reads (a ``text_delta``)
or a tool call (a ``tool_use`` block's start). Thinking is not counted: it is not what
a user of the reply waits on.
"""

from __future__ import annotations

import json
from typing import Any

from loopbench.harness.models.sse import ServerEvent
from loopbench.harness.models.streamed import StreamEventError

#: The usage counts a message reports, as the unstreamed reply names them.
USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
#: What each delta type appends to, in its block.
DELTAS = {
    "text_delta": ("text", "text"),
    "thinking_delta": ("thinking", "thinking"),
    "signature_delta": ("signature", "signature"),
    "input_json_delta": ("partial_json", "_json"),
}


class MessageEvents:
    """``Accumulator`` of a Messages stream's events."""

    def __init__(self) -> None:
        self._message: dict[str, Any] = {"type": "message", "role": "assistant"}
        self._blocks: dict[int, dict[str, Any]] = {}
        self._usage: dict[str, Any] = {}
        self._started = False
        self._done = False

    @property
    def done(self) -> bool:
        return self._done

    def add(self, event: ServerEvent) -> bool:
        try:
            data = json.loads(event.data)
        except (ValueError, RecursionError) as exc:
            raise StreamEventError(f"an event is not JSON ({exc}): {event.data[:200]}") from None
        if not isinstance(data, dict):
            raise StreamEventError(f"an event is not an object: {event.data[:200]}")
        kind = data.get("type", event.name)
        if kind == "error":
            raise StreamEventError(f"the endpoint sent an error: {json.dumps(data)[:300]}")
        if kind == "message_start":
            return self._start(data.get("message"))
        if kind in ("ping",) or kind not in HANDLED:
            return False
        if not self._started:
            raise StreamEventError(f"a {kind} event came before message_start")
        return HANDLED[kind](self, data)

    def _start(self, message: object) -> bool:
        if self._started or not isinstance(message, dict):
            raise StreamEventError("message_start came twice, or without a message")
        self._started = True
        for key in ("id", "model", "stop_reason", "stop_sequence"):
            if key in message:
                self._message[key] = message[key]
        self._take_usage(message.get("usage"))
        return False

    def _block_start(self, data: dict[str, Any]) -> bool:
        index, block = data.get("index"), data.get("content_block")
        if not isinstance(index, int) or index in self._blocks or not isinstance(block, dict):
            raise StreamEventError(f"content_block_start at index {index!r} is not a new block")
        self._blocks[index] = dict(block)
        if block.get("type") == "tool_use":
            self._blocks[index]["_json"] = ""
            return True
        return bool(block.get("type") == "text" and block.get("text"))

    def _block_delta(self, data: dict[str, Any]) -> bool:
        block = self._block(data)
        delta = data.get("delta")
        kind = delta.get("type") if isinstance(delta, dict) else None
        if not isinstance(delta, dict) or kind not in DELTAS:
            return False  # a delta type this reader does not know: skipped
        field, into = DELTAS[kind]
        piece = delta.get(field)
        if not isinstance(piece, str):
            raise StreamEventError(f"a {kind}'s {field} is not text")
        block[into] = block.get(into, "") + piece
        return kind == "input_json_delta" or (kind == "text_delta" and bool(piece))

    def _block_stop(self, data: dict[str, Any]) -> bool:
        self._block(data)
        return False

    def _block(self, data: dict[str, Any]) -> dict[str, Any]:
        index = data.get("index")
        if not isinstance(index, int) or index not in self._blocks:
            raise StreamEventError(f"an event names content block {index!r}, never started")
        return self._blocks[index]

    def _delta(self, data: dict[str, Any]) -> bool:
        delta = data.get("delta") or {}
        if not isinstance(delta, dict):
            raise StreamEventError("message_delta's delta is not an object")
        for key in ("stop_reason", "stop_sequence"):
            if key in delta:
                self._message[key] = delta[key]
        self._take_usage(data.get("usage"))
        return False

    def _stop(self, data: dict[str, Any]) -> bool:
        cut_by_limit = self._message.get("stop_reason") == "max_tokens"  # kept, as it is
        for index, block in self._blocks.items():
            if block.get("type") == "tool_use" and _input(block) is None and not cut_by_limit:
                raise StreamEventError(f"tool_use block {index}'s input is not JSON")
        self._done = True
        return False

    def _take_usage(self, usage: object) -> None:
        if usage is None:
            return
        if not isinstance(usage, dict):
            raise StreamEventError("an event's usage is not an object")
        self._usage |= {key: usage[key] for key in USAGE_FIELDS if usage.get(key) is not None}

    def body(self) -> bytes:
        content = []
        for _, block in sorted(self._blocks.items()):
            shown = {key: value for key, value in block.items() if key != "_json"}
            if block.get("type") == "tool_use":
                shown["input"] = _input(block) or {}
            content.append(shown)
        message = {**self._message, "content": content}
        if self._usage:
            message["usage"] = dict(self._usage)
        return json.dumps(message).encode()


def _input(block: dict[str, Any]) -> dict[str, Any] | None:
    """A tool_use block's input from its JSON pieces (none: an empty object); None when
    the pieces are not a JSON object."""
    text = block.get("_json", "")
    if not text.strip():
        return dict(block.get("input") or {})
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


HANDLED = {
    "content_block_start": MessageEvents._block_start,
    "content_block_delta": MessageEvents._block_delta,
    "content_block_stop": MessageEvents._block_stop,
    "message_delta": MessageEvents._delta,
    "message_stop": MessageEvents._stop,
}
