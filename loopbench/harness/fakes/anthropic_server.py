"""A fake Anthropic Messages API on loopback, for tests and benchmarks.

It answers ``POST /v1/messages`` with the same responders as the chat-completions fake
(``loopbench.harness.fakes.fake_server``): the request is read into that API's shape, the reply
written back as Messages API blocks (text, ``tool_use``, and a ``thinking`` block, signed,
when thinking is asked for). Usage is deterministic and reports both cache fields, in the
shares ``CacheShares`` sets; every token served is counted in ``served``, so a test can
check that what loopbench recorded equals what was served.

It checks a request as the API does, answering 400 (``invalid_request_error``) otherwise:
``max_tokens`` set and above the thinking budget, no temperature or ``top_p`` with
thinking, turns alternating from a user turn, each ``tool_result`` answering a
``tool_use`` of the turn before, and, with thinking on, the thinking blocks it signed sent
back unchanged at the start of an assistant turn that called a tool. With ``api_key`` set,
any other ``x-api-key`` gets 401. ``fail_next`` scripts errors (400, 401, 429 with
``retry-after``, 500, 529) and malformed bodies for the next requests.

A request asking ``stream: true`` is answered with the Messages API's server-sent events
(``loopbench.harness.fakes.fake_stream.message_events``), as its ``StreamScript`` says, as the
chat-completions fake does: a delay before the first token, a stream cut short or one
that stalls. Its tokens are counted as served when the event reporting them is sent.

    python -m loopbench.harness.fakes.serve --anthropic   # prints its base URL
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from loopbench.harness.fakes.fake_server import NO_SCRIPT, Reply, Responder, default_responder
from loopbench.harness.fakes.fake_stream import (
    MESSAGES_WIRE,
    StreamScript,
    message_events,
    send_stream,
)
from loopbench.harness.fakes.loopback import LoopbackServer

#: Each status's error type, as the API names it.
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
THINKING = "Let me work through this step by step."
#: A message's usage counts, as the API names them.
USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
_STOP_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}


@dataclass(frozen=True)
class CacheShares:
    """The shares of a request's input tokens reported read from and written to the cache,
    once a conversation has more than one turn (a first request reads nothing)."""

    read: float = 1 / 3
    write: float = 1 / 5


@dataclass(frozen=True)
class Fault:
    """A reply scripted for a request: a status with the API's error body (``message``
    its text), or, with ``body``, exactly these bytes."""

    status: int
    message: str = "scripted failure"
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None


@dataclass
class Served:
    requests: int = 0
    messages: int = 0
    #: Every input token (fresh, cache reads and cache writes), as loopbench counts them.
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    tool_calls: int = 0
    #: The ``tool_use`` blocks served, by tool name (a pattern's structured outputs too).
    tool_uses: Counter[str] = field(default_factory=Counter)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    #: The ``x-api-key`` of every request, in order.
    keys: list[str | None] = field(default_factory=list)


class AnthropicFakeServer(LoopbackServer):
    """Runs on its own thread and event loop, so synchronous code (a CLI) can call it."""

    path = "/v1/messages"

    def __init__(
        self,
        responder: Responder = default_responder,
        api_key: str | None = None,
        cache: CacheShares = CacheShares(),
        latency_s: float = 0.0,
        stream: StreamScript = NO_SCRIPT,
    ) -> None:
        super().__init__()
        #: How a request asking ``stream: true`` is answered
        #: (``loopbench.harness.fakes.fake_stream``).
        self.stream = stream
        self.responder = responder
        self.api_key = api_key
        self.cache = cache
        self.latency_s = latency_s
        self.served = Served()
        self._faults: list[Fault] = []
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        """As ``ANTHROPIC_BASE_URL`` is written: without ``/v1``."""
        return f"http://127.0.0.1:{self.port}"

    def fail_next(self, *faults: Fault) -> None:
        """Answer the next requests with these, in order, before the responder again."""
        with self._lock:
            self._faults.extend(faults)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        key = request.headers.get("x-api-key")
        with self._lock:
            self.served.requests += 1
            self.served.bodies.append(body)
            self.served.keys.append(key)
            fault = self._faults.pop(0) if self._faults else None
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        if fault is not None:
            return _fault(fault)
        if self.api_key is not None and key != self.api_key:
            return _fault(Fault(401, f"invalid x-api-key: {key}"))
        if (problem := refusal(body)) is not None:
            return _fault(Fault(400, problem))
        reply = self.responder(as_chat(body))
        if reply.status != 200:
            return _fault(Fault(reply.status, headers=reply.headers))
        message = self._message(body, reply)
        if body.get("stream"):
            counted: dict[str, int] = {}  # what this stream has reported so far

            def on_usage(usage: dict[str, Any]) -> None:
                self._count(usage, counted)

            events = message_events(message)
            return await send_stream(
                request, events, self.stream, self.closing, on_usage, MESSAGES_WIRE
            )
        self._count(message["usage"], {})
        return web.json_response(message)

    def _count(self, usage: dict[str, Any], before: dict[str, int]) -> None:
        """The tokens ``usage`` reports served, beyond what the same message reported
        ``before`` (a stream's later count of a kind replaces its earlier one)."""
        now = before | {key: usage[key] for key in USAGE_KEYS if key in usage}
        more = {key: now.get(key, 0) - before.get(key, 0) for key in USAGE_KEYS}
        read, written = more["cache_read_input_tokens"], more["cache_creation_input_tokens"]
        with self._lock:
            self.served.input_tokens += more["input_tokens"] + read + written
            self.served.output_tokens += more["output_tokens"]
            self.served.cache_read_tokens += read
            self.served.cache_write_tokens += written
        before.update(now)

    def _message(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if "thinking" in body:
            content.append({"type": "thinking", "thinking": THINKING, "signature": sign(THINKING)})
        if reply.content:
            content.append({"type": "text", "text": reply.content})
        for call in reply.tool_calls:
            function = call["function"]
            arguments = json.loads(function["arguments"] or "{}")
            content.append(
                {"type": "tool_use", "id": call["id"], "name": function["name"], "input": arguments}
            )
        usage = self._usage(body, content)
        with self._lock:
            self.served.messages += 1
            self.served.tool_calls += len(reply.tool_calls)
            self.served.tool_uses.update(c["function"]["name"] for c in reply.tool_calls)
        return {
            "id": f"msg_{self.served.requests}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fake"),
            "content": content,
            "stop_reason": _STOP_REASONS.get(reply.finish_reason, "end_turn"),
            "stop_sequence": None,
            "usage": usage,
        }

    def _usage(self, body: dict[str, Any], content: list[dict[str, Any]]) -> dict[str, int]:
        """Deterministic counts: four characters a token, the cache's shares of them."""
        total = len(json.dumps([body.get("system", ""), body["messages"]])) // 4 + 1
        later = len(body["messages"]) > 1
        read = int(total * self.cache.read) if later else 0
        written = min(total - read, int(total * self.cache.write)) if later else 0
        return {
            "input_tokens": total - read - written,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": written,
            "output_tokens": len(json.dumps(content)) // 4 + 1,
        }


def sign(text: str) -> str:
    """The signature the fake gives a thinking block, and checks when it comes back."""
    return hashlib.sha256(f"fake:{text}".encode()).hexdigest()


def _fault(fault: Fault) -> web.Response:
    if fault.body is not None:
        return web.Response(
            body=fault.body,
            status=fault.status,
            headers=fault.headers,
            content_type="application/json",
        )
    error = {"type": ERROR_TYPES.get(fault.status, "api_error"), "message": fault.message}
    return web.json_response(
        {"type": "error", "error": error}, status=fault.status, headers=fault.headers
    )


def refusal(body: dict[str, Any]) -> str | None:
    """Why the API would refuse this request with a 400, if it would."""
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or max_tokens < 1:
        return "max_tokens: Field required"
    thinking = body.get("thinking")
    if thinking is not None:
        budget = thinking.get("budget_tokens")
        if thinking.get("type") != "enabled" or not isinstance(budget, int) or budget < 1024:
            return "thinking.budget_tokens: must be at least 1024"
        if max_tokens <= budget:
            return "max_tokens must be greater than thinking.budget_tokens"
        if "temperature" in body or "top_p" in body:
            return "temperature and top_p may not be set when thinking is enabled"
        if body.get("tool_choice", {}).get("type") in ("any", "tool"):
            return "Thinking may not be enabled when tool_choice forces tool use."
    turns = body.get("messages")
    if not isinstance(turns, list) or not turns or turns[0].get("role") != "user":
        return "messages: the first message must use the user role"
    for before, turn in itertools.pairwise(turns):
        if before["role"] == turn["role"]:
            return "messages: roles must alternate between user and assistant"
        if problem := _answers(before, turn, thinking is not None):
            return problem
    return None


def _answers(before: dict[str, Any], turn: dict[str, Any], thinking: bool) -> str | None:
    """Why ``turn`` does not follow ``before`` as the API requires, if it does not."""
    blocks = before["content"] if isinstance(before["content"], list) else []
    called = {b["id"] for b in blocks if b.get("type") == "tool_use"}
    if turn["role"] == "user" and isinstance(turn["content"], list):
        for block in turn["content"]:
            if block.get("type") == "tool_result" and block.get("tool_use_id") not in called:
                return "tool_result block(s) provided without a matching tool_use before them"
    if before["role"] == "assistant" and called and thinking:
        first = blocks[0]
        if first.get("type") != "thinking" or first.get("signature") != sign(first["thinking"]):
            return (
                "Expected `thinking` or `redacted_thinking`, but found `text`. When thinking "
                "is enabled, a final assistant message must start with a thinking block"
            )
    return None


def as_chat(body: dict[str, Any]) -> dict[str, Any]:
    """A Messages API request in the chat-completions shape the responders read."""
    messages: list[dict[str, Any]] = []
    if body.get("system"):
        messages.append({"role": "system", "content": body["system"]})
    for turn in body["messages"]:
        content = turn["content"]
        if isinstance(content, str):
            messages.append({"role": turn["role"], "content": content})
            continue
        text = "".join(b["text"] for b in content if b["type"] == "text")
        if turn["role"] == "assistant":
            message: dict[str, Any] = {"role": "assistant", "content": text or None}
            calls = [_call(b) for b in content if b["type"] == "tool_use"]
            messages.append(message | ({"tool_calls": calls} if calls else {}))
            continue
        for block in content:
            if block["type"] == "tool_result":
                result = {"role": "tool", "tool_call_id": block["tool_use_id"]}
                messages.append(result | {"content": block.get("content", "")})
        if text:
            messages.append({"role": "user", "content": text})
    chat: dict[str, Any] = {"model": body.get("model"), "messages": messages}
    if body.get("tools"):
        chat["tools"] = [
            {"type": "function", "function": {"name": t["name"], "parameters": t["input_schema"]}}
            for t in body["tools"]
        ]
    choice = body.get("tool_choice", {}).get("type")
    if choice == "tool":
        name = body["tool_choice"]["name"]
        chat["tool_choice"] = {"type": "function", "function": {"name": name}}
    elif choice is not None:
        chat["tool_choice"] = {"any": "required"}.get(choice, choice)
    return chat


def _call(block: dict[str, Any]) -> dict[str, Any]:
    arguments = json.dumps(block["input"])
    return {
        "id": block["id"],
        "type": "function",
        "function": {"name": block["name"], "arguments": arguments},
    }
