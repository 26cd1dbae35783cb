"""An OpenAI-compatible server on loopback that fails on purpose, by script, for tests.

Requests are numbered from 1 as they arrive. The script names the fault of a
request: a mapping from request number to fault, or a function of the number and
the request body (return None for no fault). A request without a fault gets the
deterministic completion of ``fake_server.default_responder``, with usage. A retry
is a new request, so a function of the body fails every retry of a call as well.

The faults, one small handler each:

    429                   too many requests, without Retry-After
    429_retry_after       429 with Retry-After in seconds (``retry_after_s``)
    429_retry_after_date  429 with Retry-After as an HTTP-date, at least ``retry_after_s`` on
    500, 502, 503         a server error
    hang                  no reply at all, for ``hang_s`` (then a 504)
    dribble               the normal completion, one byte every ``dribble_s`` (reset after
                          ``hang_s``)
    reset                 half the normal completion, then the connection reset (TCP RST)
    malformed_json        a 200 whose body is JSON cut short
    wrong_shape           a completion whose tool_calls is an object, not a list
    no_usage              the normal completion without usage
    length_tool_call      finish_reason length, with a half-written tool call
    arguments_not_json    a tool call whose arguments are not JSON
    unknown_tool          a call to a tool that was not offered
    content_parts         the normal content as a list of text parts
    context_overflow      400: the prompt is longer than the context window
    401                   the key is refused, echoed in the error as some servers do

and the hostile ones (``HOSTILE``), each a reply no client should hold whole or parse:

    gzip_bomb             a completion without usage, ``bomb_bytes`` long (1 GiB), sent as
                          gzip of about a thousandth of that
    deflate_bomb          the same in deflate
    huge_body             the same ``bomb_bytes`` uncompressed, chunked (no length declared)
    huge_error            a 500 whose body is as long
    deep_body             a 200 whose choices are lists nested 100,000 deep
    deep_arguments        a tool call whose arguments are lists nested 100,000 deep
    long_integer_arguments a tool call whose argument is a 5,000-digit integer
    long_integer_usage    a completion whose usage counts 5,000-digit numbers of tokens

``hits`` logs every request: its number, fault, arrival time, body, the usage a
client should count from the reply and, for a 429 with Retry-After, the time before
which the retry was asked not to come. It listens on 127.0.0.1 only, no reply
outlasts ``hang_s``, and closing it ends every reply still in progress.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import json
import math
import socket
import struct
import threading
import time
import zlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from aiohttp import web

from loopbench.harness.fakes.fake_server import Reply, default_responder, usage_for
from loopbench.harness.fakes.loopback import LoopbackServer

Ordinary = Literal[
    "429",
    "429_retry_after",
    "429_retry_after_date",
    "500",
    "502",
    "503",
    "hang",
    "dribble",
    "reset",
    "malformed_json",
    "wrong_shape",
    "no_usage",
    "length_tool_call",
    "arguments_not_json",
    "unknown_tool",
    "content_parts",
    "context_overflow",
    "401",
]
Hostile = Literal[
    "gzip_bomb",
    "deflate_bomb",
    "huge_body",
    "huge_error",
    "deep_body",
    "deep_arguments",
    "long_integer_arguments",
    "long_integer_usage",
]
Fault = Ordinary | Hostile
FAULTS: tuple[Ordinary, ...] = Ordinary.__args__  # type: ignore[attr-defined]
HOSTILE: tuple[Hostile, ...] = Hostile.__args__  # type: ignore[attr-defined]
Script = Mapping[int, Fault] | Callable[[int, dict[str, Any]], Fault | None]

CONTEXT_OVERFLOW = (
    "This model's maximum context length is 4096 tokens. However, your messages resulted "
    "in 5120 tokens. Please reduce the length of the messages."
)


@dataclass
class Hit:
    """One request as the server saw it."""

    n: int
    fault: Fault | None
    at: float
    body: dict[str, Any]
    #: The usage a client should count: None unless a whole, well-formed completion with
    #: usage went out.
    usage: dict[str, Any] | None = None
    #: For a 429 with Retry-After: the time (``time.time()``) asked to wait for.
    retry_not_before: float | None = None


class FaultServer(LoopbackServer):
    """Runs on its own thread and event loop, like ``FakeServer``."""

    def __init__(
        self,
        script: Script | None = None,
        *,
        retry_after_s: int = 1,
        dribble_s: float = 1.0,
        hang_s: float = 30.0,
        bomb_bytes: int = 1 << 30,
    ) -> None:
        super().__init__()
        self.script: Script = script if script is not None else {}
        if not callable(self.script) and not set(self.script.values()) <= set(HANDLERS):
            raise ValueError(f"a script names faults, one of: {', '.join(HANDLERS)}")
        self.retry_after_s = retry_after_s
        self.dribble_s = dribble_s
        self.hang_s = hang_s
        #: What a bomb inflates to, and what a huge body holds.
        self.bomb_bytes = bomb_bytes
        self.hits: list[Hit] = []
        self._lock = threading.Lock()

    def fault_for(self, n: int, body: dict[str, Any]) -> Fault | None:
        if callable(self.script):
            return self.script(n, body)
        return self.script.get(n)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        with self._lock:
            n = len(self.hits) + 1
            hit = Hit(n, self.fault_for(n, body), time.time(), body)
            self.hits.append(hit)
        if hit.fault is None:
            return await _normal(self, request, hit)
        if hit.fault not in HANDLERS:
            return _error(500, f"the script named {hit.fault!r}; faults: {', '.join(HANDLERS)}")
        return await HANDLERS[hit.fault](self, request, hit)

    async def closed_within(self, seconds: float) -> bool:
        """Wait up to ``seconds``; True if the server is closing meanwhile."""
        try:
            await asyncio.wait_for(self.closing.wait(), seconds)
        except TimeoutError:
            return False
        return True


Handler = Callable[[FaultServer, web.Request, Hit], Awaitable[web.StreamResponse]]


def completion(hit: Hit, reply: Reply, *, with_usage: bool = True) -> dict[str, Any]:
    """A chat completion of ``reply`` to the request ``hit``."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
    if reply.tool_calls:
        message["tool_calls"] = reply.tool_calls
    data: dict[str, Any] = {
        "id": f"chatcmpl-{hit.n}",
        "object": "chat.completion",
        "model": hit.body.get("model", "fault"),
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
    }
    if with_usage:
        data["usage"] = usage_for(hit.body, reply)
    return data


def _served(hit: Hit, data: dict[str, Any]) -> web.Response:
    """A whole completion, whose usage (if any) a client should count."""
    hit.usage = data.get("usage")
    return web.json_response(data)


def _call(name: str, arguments: str) -> dict[str, Any]:
    return {"id": "call_f", "type": "function", "function": {"name": name, "arguments": arguments}}


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response({"error": {"message": message}}, status=status, headers=headers)


async def _normal(server: FaultServer, request: web.Request, hit: Hit) -> web.StreamResponse:
    return _served(hit, completion(hit, default_responder(hit.body)))


def _status(status: int, message: str) -> Handler:
    async def handler(server: FaultServer, request: web.Request, hit: Hit) -> web.StreamResponse:
        return _error(status, message)

    return handler


async def _retry_after(server: FaultServer, request: web.Request, hit: Hit) -> web.StreamResponse:
    hit.retry_not_before = hit.at + server.retry_after_s
    return _error(429, "rate limited", {"retry-after": str(server.retry_after_s)})


async def _retry_after_date(
    server: FaultServer, request: web.Request, hit: Hit
) -> web.StreamResponse:
    hit.retry_not_before = math.ceil(time.time() + server.retry_after_s)  # whole seconds
    date = email.utils.formatdate(hit.retry_not_before, usegmt=True)
    return _error(429, "rate limited", {"retry-after": date})


async def _hang(server: FaultServer, request: web.Request, hit: Hit) -> web.StreamResponse:
    await server.closed_within(server.hang_s)
    return _error(504, "the fault server hung instead of replying")


async def _partial(request: web.Request, data: bytes) -> web.StreamResponse:
    """A response whose headers promise all of ``data``; the body is the caller's to send."""
    response = web.StreamResponse(headers={"content-type": "application/json"})
    response.content_length = len(data)
    await response.prepare(request)
    return response


def _reset_connection(request: web.Request) -> None:
    if request.transport is not None:
        sock = request.transport.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        request.transport.abort()  # with a zero linger, closing sends a RST


async def _dribble(server: FaultServer, request: web.Request, hit: Hit) -> web.StreamResponse:
    data = completion(hit, default_responder(hit.body))
    body = json.dumps(data).encode()
    response = await _partial(request, body)
    deadline = time.monotonic() + server.hang_s
    try:
        for i in range(len(body)):
            if await server.closed_within(server.dribble_s) or time.monotonic() > deadline:
                _reset_connection(request)
                return response
            await response.write(body[i : i + 1])
    except ConnectionResetError:  # the client gave up
        return response
    hit.usage = data["usage"]
    return response


async def _reset(server: FaultServer, request: web.Request, hit: Hit) -> web.StreamResponse:
    body = json.dumps(completion(hit, default_responder(hit.body))).encode()
    response = await _partial(request, body)
    await response.write(body[: len(body) // 2])
    await server.closed_within(0.05)  # let the half reach the client first
    _reset_connection(request)
    return response


async def _malformed_json(
    server: FaultServer, request: web.Request, hit: Hit
) -> web.StreamResponse:
    text = '{"choices": [{"message": {"role": "assistant", "content": "84"'
    return web.Response(text=text, content_type="application/json")


async def _wrong_shape(server: FaultServer, request: web.Request, hit: Hit) -> web.StreamResponse:
    data = completion(hit, Reply(tool_calls=[_call("lookup", '{"title": "Paris"}')]))
    message = data["choices"][0]["message"]
    message["tool_calls"] = message["tool_calls"][0]
    return _served(hit, data)  # not a completion, but its usage was billed: counted


async def _no_usage(server: FaultServer, request: web.Request, hit: Hit) -> web.StreamResponse:
    return _served(hit, completion(hit, default_responder(hit.body), with_usage=False))


async def _length_tool_call(
    server: FaultServer, request: web.Request, hit: Hit
) -> web.StreamResponse:
    reply = Reply(tool_calls=[_call("lookup", '{"title": "Par')], finish_reason="length")
    return _served(hit, completion(hit, reply))


async def _arguments_not_json(
    server: FaultServer, request: web.Request, hit: Hit
) -> web.StreamResponse:
    reply = Reply(tool_calls=[_call("lookup", "{title: Paris")], finish_reason="tool_calls")
    return _served(hit, completion(hit, reply))


async def _unknown_tool(server: FaultServer, request: web.Request, hit: Hit) -> web.StreamResponse:
    reply = Reply(tool_calls=[_call("teleport", "{}")], finish_reason="tool_calls")
    return _served(hit, completion(hit, reply))


async def _content_parts(server: FaultServer, request: web.Request, hit: Hit) -> web.StreamResponse:
    reply = default_responder(hit.body)
    data = completion(hit, reply)
    half = len(reply.content) // 2
    data["choices"][0]["message"]["content"] = [
        {"type": "text", "text": reply.content[:half]},
        {"type": "text", "text": reply.content[half:]},
    ]
    return _served(hit, data)


async def _unauthorized(server: FaultServer, request: web.Request, hit: Hit) -> web.StreamResponse:
    key = request.headers.get("authorization", "").removeprefix("Bearer ")
    return _error(401, f"Incorrect API key provided: {key}.")


#: Every hostile body is a completion whose content is this letter, over and over.
FILLER = b"a"
DEPTH = 100_000
LONG_INTEGER = "9" * 5_000


def _bomb_parts(size: int) -> tuple[bytes, bytes, int]:
    """A completion without usage, ``size`` bytes long in all: its opening, its closing, and
    how many filler bytes go between them."""
    hit = Hit(0, None, 0.0, {"model": "bomb"})
    opening = json.dumps(completion(hit, Reply(""), with_usage=False))
    before, _, after = opening.partition('"content": null')
    head, tail = (before + '"content": "').encode(), ('"' + after).encode()
    return head, tail, max(0, size - len(head) - len(tail))


@functools.cache
def bomb(encoding: Literal["gzip", "deflate"], size: int) -> bytes:
    """The completion of ``size`` bytes, compressed: each mebibyte of filler compresses to
    the same thousand bytes (a full flush starts afresh), so making a gigabyte's is quick."""
    head, tail, filler = _bomb_parts(size)
    block = FILLER * (1 << 20)
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15, 9, zlib.Z_RLE)
    pieces = [deflate.compress(head) + deflate.flush(zlib.Z_FULL_FLUSH)]
    compressed_block = deflate.compress(block) + deflate.flush(zlib.Z_FULL_FLUSH)
    blocks, rest = divmod(filler, len(block))
    pieces.append(compressed_block * blocks)
    pieces.append(deflate.compress(block[:rest] + tail) + deflate.flush())
    check = zlib.crc32 if encoding == "gzip" else zlib.adler32
    value = check(head, 0 if encoding == "gzip" else 1)
    for _ in range(blocks):
        value = check(block, value)
    value = check(block[:rest] + tail, value)
    raw = b"".join(pieces)
    if encoding == "gzip":
        total = (len(head) + filler + len(tail)) & 0xFFFFFFFF
        return b"\x1f\x8b\x08\0\0\0\0\0\0\xff" + raw + struct.pack("<II", value, total)
    return b"\x78\xda" + raw + struct.pack(">I", value)


def _bomb_handler(encoding: Literal["gzip", "deflate"]) -> Handler:
    async def handler(server: FaultServer, request: web.Request, hit: Hit) -> web.StreamResponse:
        body = await asyncio.to_thread(bomb, encoding, server.bomb_bytes)
        headers = {"content-type": "application/json", "content-encoding": encoding}
        return web.Response(body=body, headers=headers)

    return handler


def _huge(status: int) -> Handler:
    async def handler(server: FaultServer, request: web.Request, hit: Hit) -> web.StreamResponse:
        head, tail, filler = _bomb_parts(server.bomb_bytes)
        response = web.StreamResponse(status=status, headers={"content-type": "application/json"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        block = FILLER * (1 << 20)
        try:
            await response.write(head)
            for start in range(0, filler, len(block)):
                if server.closing.is_set():
                    return response
                await response.write(block[: filler - start])
            await response.write(tail)
        except ConnectionError:  # the client stopped reading, as it should
            pass
        return response

    return handler


async def _deep_body(server: FaultServer, request: web.Request, hit: Hit) -> web.StreamResponse:
    text = '{"choices": ' + "[" * DEPTH + "]" * DEPTH + "}"
    return web.Response(text=text, content_type="application/json")


async def _deep_arguments(
    server: FaultServer, request: web.Request, hit: Hit
) -> web.StreamResponse:
    arguments = '{"title": ' + "[" * DEPTH + "]" * DEPTH + "}"
    reply = Reply(tool_calls=[_call("lookup", arguments)], finish_reason="tool_calls")
    return _served(hit, completion(hit, reply))


async def _long_integer_arguments(
    server: FaultServer, request: web.Request, hit: Hit
) -> web.StreamResponse:
    reply = Reply(
        tool_calls=[_call("lookup", f'{{"title": {LONG_INTEGER}}}')], finish_reason="tool_calls"
    )
    return _served(hit, completion(hit, reply))


async def _long_integer_usage(
    server: FaultServer, request: web.Request, hit: Hit
) -> web.StreamResponse:
    text = json.dumps(completion(hit, default_responder(hit.body), with_usage=False))
    usage = f', "usage": {{"prompt_tokens": {LONG_INTEGER}, "completion_tokens": 1}}}}'
    return web.Response(text=text[:-1] + usage, content_type="application/json")


HANDLERS: dict[Fault, Handler] = {
    "429": _status(429, "rate limited"),
    "429_retry_after": _retry_after,
    "429_retry_after_date": _retry_after_date,
    "500": _status(500, "internal server error"),
    "502": _status(502, "bad gateway"),
    "503": _status(503, "overloaded"),
    "hang": _hang,
    "dribble": _dribble,
    "reset": _reset,
    "malformed_json": _malformed_json,
    "wrong_shape": _wrong_shape,
    "no_usage": _no_usage,
    "length_tool_call": _length_tool_call,
    "arguments_not_json": _arguments_not_json,
    "unknown_tool": _unknown_tool,
    "content_parts": _content_parts,
    "context_overflow": _status(400, CONTEXT_OVERFLOW),
    "401": _unauthorized,
    "gzip_bomb": _bomb_handler("gzip"),
    "deflate_bomb": _bomb_handler("deflate"),
    "huge_body": _huge(200),
    "huge_error": _huge(500),
    "deep_body": _deep_body,
    "deep_arguments": _deep_arguments,
    "long_integer_arguments": _long_integer_arguments,
    "long_integer_usage": _long_integer_usage,
}
