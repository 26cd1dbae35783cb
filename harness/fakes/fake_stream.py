"""The fake server's streamed replies: a chat completion sent as server-sent events, as
OpenAI's API sends one when a request asks ``stream: true``.

The events: a first chunk with the role and no text, sent at once; then, after
``StreamScript.first_token_s``, the text a few characters a chunk and each tool call (its
id and name, then its arguments in two pieces); a chunk with the finish reason; the
usage in a last chunk with no choices, when the request asked for it
(``stream_options.include_usage``); then ``data: [DONE]``.

A script can break the stream: ``cut_after`` ends the body after that many chunks,
cleanly or (``abort``) by dropping the connection, before ``[DONE]``; ``stall_s`` stops
sending for that long after the first chunk of text (a stream that stalls; stopping the
server ends the wait).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from aiohttp import web

#: Characters of text a chunk carries.
PIECE = 8


@dataclass(frozen=True)
class StreamScript:
    first_token_s: float = 0.0
    """Seconds between the role chunk and the first chunk of text or tool call."""
    cut_after: int | None = None
    """Chunks sent before the body ends, [DONE] not sent: a stream cut short."""
    stall_s: float = 0.0
    """Seconds of silence after the first chunk of text or tool call."""
    abort: bool = False
    """With cut_after: drop the connection there rather than end the body cleanly."""


def chunks(
    content: str,
    tool_calls: list[dict[str, Any]],
    finish_reason: str,
    usage: dict[str, Any] | None,
) -> Iterator[dict[str, Any]]:
    """The chunks of a reply, in order; the usage chunk last (when there is one)."""

    def delta(fields: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": fields, "finish_reason": finish}
        return {"object": "chat.completion.chunk", "choices": [choice]}

    yield delta({"role": "assistant", "content": ""})
    for start in range(0, len(content), PIECE):
        yield delta({"content": content[start : start + PIECE]})
    for index, call in enumerate(tool_calls):
        function = call["function"]
        opening = {"name": function["name"], "arguments": ""}
        yield delta({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                     "function": opening}]})  # fmt: skip
        half = len(function["arguments"]) // 2
        for piece in (function["arguments"][:half], function["arguments"][half:]):
            yield delta({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield delta({}, finish_reason)
    if usage is not None:
        yield {"object": "chat.completion.chunk", "choices": [], "usage": usage}


async def send_stream(
    request: web.Request,
    events: Iterator[dict[str, Any]],
    script: StreamScript,
    closing: asyncio.Event,
    on_usage: Callable[[dict[str, Any]], None],
) -> web.StreamResponse:
    """Send ``events`` as server-sent events, as ``script`` says; ``on_usage`` is told the
    usage when its chunk is sent (what was served)."""
    response = web.StreamResponse(headers={"content-type": "text/event-stream"})
    await response.prepare(request)
    waited = False
    for sent, event in enumerate(events):
        if script.cut_after is not None and sent >= script.cut_after:
            if script.abort and request.transport is not None:
                request.transport.abort()  # the chunked body never ends
            else:
                await response.write_eof()
            return response
        carries = any(
            (c.get("delta") or {}).get("content") or (c.get("delta") or {}).get("tool_calls")
            for c in event["choices"]
        )
        if carries and not waited:
            waited = True
            if script.first_token_s:
                await asyncio.sleep(script.first_token_s)
        await response.write(f"data: {json.dumps(event)}\n\n".encode())
        if "usage" in event:
            on_usage(event["usage"])
        if carries and script.stall_s:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(closing.wait(), script.stall_s)
            if closing.is_set() or request.transport is None or request.transport.is_closing():
                return response  # the client gave up on it, or the server is stopping
            script = StreamScript(cut_after=script.cut_after)  # stalls once
    if script.cut_after is None:
        await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response
