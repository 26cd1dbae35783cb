"""The fake servers' streamed replies: a chat completion sent as server-sent events, as
OpenAI's API sends one when a request asks ``stream: true``, and a message as Anthropic's
Messages API sends one (``message_events``).

The events: a first chunk with the role and no text, sent at once; then, after
``StreamScript.first_token_s``, the text a few characters a chunk and each tool call (its
id and name, then its arguments in two pieces); a chunk with the finish reason; the
usage in a last chunk with no choices, when the request asked for it
(``stream_options.include_usage``); then ``data: [DONE]``.

A script can break the stream: ``cut_after`` ends the body after that many chunks,
cleanly or (``abort``) by dropping the connection, before ``[DONE]``; ``stall_s`` stops
sending for that long after the first chunk of text (a stream that stalls; stopping the
server ends the wait). Both APIs' streams are sent by ``send_stream``, which a
``StreamWire`` tells how to write an event, which events carry a token and which usage.

A message's events: ``message_start`` (the message with no content, and its usage: the
input, both cache counts, and one output token, as the API reports then), a ``ping``,
then each block: its ``content_block_start``, its deltas (text a few characters a
``text_delta``, thinking likewise then its ``signature_delta``, a tool call's input as
JSON text in two ``input_json_delta`` pieces) and its ``content_block_stop``; then
``message_delta`` (the stop reason, and the output tokens: the whole count) and
``message_stop``.
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


def _chat_carries(chunk: dict[str, Any]) -> bool:
    return any(
        (c.get("delta") or {}).get("content") or (c.get("delta") or {}).get("tool_calls")
        for c in chunk["choices"]
    )


def _chat_line(chunk: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(chunk)}\n\n".encode()


def _chat_usage(chunk: dict[str, Any]) -> dict[str, Any] | None:
    return chunk.get("usage")


@dataclass(frozen=True)
class StreamWire:
    """How an API's stream is sent: each event's bytes, which events carry a token (the
    first waits ``first_token_s``), the usage an event reports, what ends the stream."""

    line: Callable[[dict[str, Any]], bytes] = _chat_line
    carries: Callable[[dict[str, Any]], bool] = _chat_carries
    usage: Callable[[dict[str, Any]], dict[str, Any] | None] = _chat_usage
    end: bytes = b"data: [DONE]\n\n"


#: OpenAI's chat completion chunks.
CHAT_WIRE = StreamWire()


def message_events(message: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The Messages API events of ``message`` (a whole message, as sent unstreamed)."""
    usage = message["usage"]
    opening = {key: value for key, value in usage.items() if key != "output_tokens"}
    started = message | {"content": [], "stop_reason": None, "stop_sequence": None}
    yield {"type": "message_start", "message": started | {"usage": opening | {"output_tokens": 1}}}
    yield {"type": "ping"}
    for index, block in enumerate(message["content"]):
        yield from _block_events(index, block)
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": message["stop_sequence"]}
    yield {
        "type": "message_delta",
        "delta": delta,
        "usage": {"output_tokens": usage["output_tokens"]},
    }
    yield {"type": "message_stop"}


def _block_events(index: int, block: dict[str, Any]) -> Iterator[dict[str, Any]]:
    def delta(fields: dict[str, Any]) -> dict[str, Any]:
        return {"type": "content_block_delta", "index": index, "delta": fields}

    kind = block["type"]
    #: What the block starts with: empty, filled by its deltas.
    openings: dict[str, dict[str, Any]] = {
        "text": {"text": ""},
        "thinking": {"thinking": "", "signature": ""},
        "tool_use": {"input": {}},
    }
    opening = openings.get(kind, {})
    shown = {k: v for k, v in block.items() if k not in ("text", "thinking", "signature", "input")}
    yield {"type": "content_block_start", "index": index, "content_block": shown | opening}
    if kind in ("text", "thinking"):
        text = block[kind]
        for start in range(0, len(text), PIECE):
            yield delta({"type": f"{kind}_delta", kind: text[start : start + PIECE]})
    if kind == "thinking":
        yield delta({"type": "signature_delta", "signature": block["signature"]})
    if kind == "tool_use":
        arguments = json.dumps(block["input"])
        half = len(arguments) // 2
        for piece in (arguments[:half], arguments[half:]):
            yield delta({"type": "input_json_delta", "partial_json": piece})
    yield {"type": "content_block_stop", "index": index}


def _message_carries(event: dict[str, Any]) -> bool:
    """Text, or a tool call (its block's start already): what the client times."""
    if event["type"] == "content_block_start":
        return bool(event["content_block"]["type"] == "tool_use")
    kind = (event.get("delta") or {}).get("type")
    return event["type"] == "content_block_delta" and kind in ("text_delta", "input_json_delta")


def _message_usage(event: dict[str, Any]) -> dict[str, Any] | None:
    if event["type"] == "message_start":
        return dict(event["message"]["usage"])
    return dict(event["usage"]) if event["type"] == "message_delta" else None


#: Anthropic's Messages events.
MESSAGES_WIRE = StreamWire(
    line=lambda event: f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode(),
    carries=_message_carries,
    usage=_message_usage,
    end=b"",
)


async def send_stream(
    request: web.Request,
    events: Iterator[dict[str, Any]],
    script: StreamScript,
    closing: asyncio.Event,
    on_usage: Callable[[dict[str, Any]], None],
    wire: StreamWire = CHAT_WIRE,
) -> web.StreamResponse:
    """Send ``events`` as server-sent events, as ``script`` says; ``on_usage`` is told each
    usage an event reports, when it is sent (what was served)."""
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
        carries = wire.carries(event)
        if carries and not waited:
            waited = True
            if script.first_token_s:
                await asyncio.sleep(script.first_token_s)
        await response.write(wire.line(event))
        if (usage := wire.usage(event)) is not None:
            on_usage(usage)
        if carries and script.stall_s:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(closing.wait(), script.stall_s)
            if closing.is_set() or request.transport is None or request.transport.is_closing():
                return response  # the client gave up on it, or the server is stopping
            script = StreamScript(cut_after=script.cut_after)  # stalls once
    if script.cut_after is None and wire.end:
        await response.write(wire.end)
    await response.write_eof()
    return response
