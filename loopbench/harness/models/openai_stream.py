"""An OpenAI-style chat completion streamed (``stream: true``), built back into the reply
the endpoint would have sent whole.

The request asks for usage in the stream (``stream_options: {include_usage: true}``):
the endpoint then sends it in a last chunk, with no choices, before ``data: [DONE]``.
Each other chunk holds a ``delta`` of the first choice: text to append, tool calls to
build up by their ``index`` (the id and name come once, the arguments in pieces to
join), and at the end its ``finish_reason``. ``body()`` is the chat completion those
make, which ``loopbench.harness.models.wire.parse_response`` reads as it reads an unstreamed one:
the same checks, the same message, the same usage.

The stream is done at ``[DONE]``; a connection closed before it is a stream cut short,
even after the usage chunk. A chunk that is not JSON or not a chunk's shape, and an
``error`` object some servers send mid-stream, are ``StreamEventError``.
"""

from __future__ import annotations

import json
from typing import Any

from loopbench.harness.models.sse import DONE, ServerEvent
from loopbench.harness.models.streamed import StreamEventError


class ChatChunks:
    """``Accumulator`` of a chat completion's chunks."""

    def __init__(self) -> None:
        self._content: list[str] = []
        self._calls: dict[int, dict[str, Any]] = {}
        self._finish: object = None
        self._usage: object = None
        self._done = False

    @property
    def done(self) -> bool:
        return self._done

    def add(self, event: ServerEvent) -> bool:
        if event.data.strip() == DONE:
            self._done = True
            return False
        try:
            chunk = json.loads(event.data)
        except (ValueError, RecursionError) as exc:
            raise StreamEventError(f"a chunk is not JSON ({exc}): {event.data[:200]}") from None
        if not isinstance(chunk, dict):
            raise StreamEventError(f"a chunk is not an object: {event.data[:200]}")
        if chunk.get("error") is not None:
            raise StreamEventError(f"the endpoint sent an error: {json.dumps(chunk)[:300]}")
        if chunk.get("usage") is not None:
            self._usage = chunk["usage"]
        choices = chunk.get("choices")
        if choices is None:
            choices = []
        if not isinstance(choices, list):
            raise StreamEventError("a chunk's choices is not a list")
        first = False
        for choice in choices:
            if not isinstance(choice, dict):
                raise StreamEventError("a chunk's choice is not an object")
            if choice.get("index", 0) != 0:  # n > 1 is never asked for
                continue
            first |= self._delta(choice.get("delta") or {})
            if choice.get("finish_reason") is not None:
                self._finish = choice["finish_reason"]
        return first

    def _delta(self, delta: object) -> bool:
        """Take one delta; whether it carried text or a tool call."""
        if not isinstance(delta, dict):
            raise StreamEventError("a chunk's delta is not an object")
        content = delta.get("content")
        if content is not None and not isinstance(content, str):
            raise StreamEventError("a delta's content is not text")
        if content:
            self._content.append(content)
        calls = delta.get("tool_calls") or []
        if not isinstance(calls, list):
            raise StreamEventError("a delta's tool_calls is not a list")
        for piece in calls:
            self._tool_call(piece)
        return bool(content) or bool(calls)

    def _tool_call(self, piece: object) -> None:
        if not isinstance(piece, dict):
            raise StreamEventError("a tool call delta is not an object")
        index = piece.get("index", len(self._calls))
        if isinstance(index, bool) or not isinstance(index, int):
            raise StreamEventError(f"a tool call delta's index is {index!r}, not a number")
        call = self._calls.setdefault(index, {"id": None, "name": "", "arguments": []})
        function = piece.get("function") or {}
        if not isinstance(function, dict):
            raise StreamEventError("a tool call delta's function is not an object")
        if piece.get("id") and call["id"] is None:
            call["id"] = piece["id"]
        if function.get("name") and not call["name"]:
            call["name"] = function["name"]
        arguments = function.get("arguments")
        if isinstance(arguments, dict):  # as some servers send them whole
            arguments = json.dumps(arguments)
        if arguments is not None and not isinstance(arguments, str):
            raise StreamEventError("a tool call delta's arguments are not text")
        if arguments:
            call["arguments"].append(arguments)

    def body(self) -> bytes:
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self._content) or None}
        if self._calls:
            message["tool_calls"] = [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": call["name"], "arguments": "".join(call["arguments"])},
                }
                for _, call in sorted(self._calls.items())
            ]
        completion: dict[str, Any] = {
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": self._finish}],
        }
        if self._usage is not None:
            completion["usage"] = self._usage
        return json.dumps(completion).encode()
