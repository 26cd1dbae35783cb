"""A client for any OpenAI-compatible ``POST {base_url}/chat/completions`` endpoint.

Works against OpenAI, vLLM, Ollama, llama.cpp's server and LiteLLM proxies. The
HTTP layer is httpx's request, response and transport API. Requests go straight
to the transport: the ``AsyncClient`` conveniences (cookie jar, redirects, URL
merging) were the largest CPU cost per call after the transport in a profile of
the runner, and a chat endpoint needs none of them. The transport is aiohttp's
(``httpx-aiohttp``) by default, because httpx's own connection pool costs several
milliseconds of CPU per call at high concurrency (see ``bench/overhead.py``).
Tests inject ``httpx.MockTransport`` instead.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx

from harness.models.types import (
    FinishReason,
    Message,
    ModelAPIError,
    ModelRequest,
    ModelResponse,
    ToolCall,
    Usage,
)

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
_FINISH_REASONS: dict[str | None, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
    None: "stop",
}


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded retries with exponential back-off and jitter."""

    max_retries: int = 3
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        backoff = min(self.max_delay_s, self.base_delay_s * 2.0**attempt)
        jittered = backoff * (0.5 + rng.random() / 2)
        if retry_after is not None:
            return min(self.max_delay_s, max(retry_after, jittered))
        return jittered


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def default_transport(max_connections: int) -> httpx.AsyncBaseTransport:
    from httpx_aiohttp import AiohttpTransport

    limits = httpx.Limits(
        max_connections=max_connections, max_keepalive_connections=max_connections
    )
    transport: httpx.AsyncBaseTransport = AiohttpTransport(limits=limits)
    return transport


class OpenAICompatClient:
    """``ModelClient`` over HTTP. One instance serves every run of an experiment."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout_s: float = 120.0,
        max_concurrency: int = 64,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        seed: int | None = None,
    ) -> None:
        self._headers = [("content-type", "application/json")]
        if api_key:
            self._headers.append(("authorization", f"Bearer {api_key}"))
        self._secret = api_key
        self._url = httpx.URL(base_url.rstrip("/") + "/chat/completions")
        #: The limit on a whole request, connect to last byte; the phases below each have it too.
        self._timeout_s = timeout_s
        self._timeout = {
            "connect": timeout_s,
            "read": timeout_s,
            "write": timeout_s,
            "pool": timeout_s,
        }
        self._transport = transport or default_transport(max_concurrency)
        self._slots = asyncio.Semaphore(max_concurrency)
        self._retry = retry or RetryPolicy()
        self._sleep = sleep
        self._rng = random.Random(seed)

    async def aclose(self) -> None:
        await self._transport.aclose()

    async def __aenter__(self) -> OpenAICompatClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        body = json.dumps(request_body(request)).encode()
        attempt = 0
        while True:
            retry_after: float | None = None
            try:
                async with self._slots:
                    response = await asyncio.wait_for(self._post(body), self._timeout_s)
            except TimeoutError:
                failure = f"no complete reply within --timeout {self._timeout_s:g} s"
                status = None
            except httpx.TransportError as exc:
                failure = f"{type(exc).__name__}: {exc}"
                status = None
            else:
                status = response.status_code
                if status == 200:
                    try:
                        return parse_response(response, retries=attempt, redact=self._redact)
                    except ModelAPIError as exc:  # a malformed reply is retried like a 5xx
                        failure = str(exc)
                else:
                    failure = f"HTTP {status}: {self._redact(response.text)[:300]}"
                    if status not in RETRYABLE_STATUS:
                        raise ModelAPIError(failure, status=status, retries=attempt)
                    retry_after = parse_retry_after(response.headers.get("retry-after"))
            if attempt >= self._retry.max_retries:
                message = f"{failure} (gave up after {attempt + 1} attempts)"
                raise ModelAPIError(self._redact(message), status=status, retries=attempt)
            if retry_after is not None and retry_after > self._retry.max_delay_s:
                raise ModelAPIError(
                    f"{self._redact(failure)}; the endpoint asked to retry after "
                    f"{retry_after:.0f} s, beyond the {self._retry.max_delay_s:g} s "
                    "allowed, so the call was stopped rather than retried early",
                    status=status,
                    retries=attempt,
                )
            await self._sleep(self._retry.delay(attempt, retry_after, self._rng))
            attempt += 1

    async def _post(self, body: bytes) -> httpx.Response:
        request = httpx.Request(
            "POST",
            self._url,
            headers=self._headers,
            content=body,
            extensions={"timeout": self._timeout},
        )
        response = await self._transport.handle_async_request(request)
        try:
            await response.aread()
        finally:
            await response.aclose()
        return response

    def _redact(self, text: str) -> str:
        return text.replace(self._secret, "[redacted]") if self._secret else text


def request_body(request: ModelRequest) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    messages.extend(message_to_wire(m) for m in request.messages)
    body: dict[str, Any] = {"model": request.model, "messages": messages}
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                },
            }
            for t in request.tools
        ]
    if request.tool_choice in ("auto", "none", "required"):
        body["tool_choice"] = request.tool_choice
    elif request.tool_choice is not None:
        body["tool_choice"] = {"type": "function", "function": {"name": request.tool_choice}}
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.max_output_tokens is not None:
        body["max_tokens"] = request.max_output_tokens
    if request.stop:
        body["stop"] = list(request.stop)
    return body


def message_to_wire(message: Message) -> dict[str, Any]:
    wire: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        wire["content"] = message.content or None
        wire["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            }
            for c in message.tool_calls
        ]
    if message.tool_call_id is not None:
        wire["tool_call_id"] = message.tool_call_id
    return wire


def parse_response(
    response: httpx.Response, retries: int = 0, redact: Callable[[str], str] = str
) -> ModelResponse:
    try:
        data = response.json()
        choice = data["choices"][0]
        wire = choice["message"]
        calls = tuple(
            ToolCall(
                id=str(c.get("id") or f"call_{i}"),
                name=str(c["function"]["name"]),
                arguments=_arguments_text(c["function"].get("arguments")),
            )
            for i, c in enumerate(wire.get("tool_calls") or ())
        )
        message = Message("assistant", wire.get("content") or "", tool_calls=calls)
        usage = parse_usage(data.get("usage"))
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        # Redacted before it is cut short, so no part of a key survives at the cut.
        text = redact(f"the endpoint's reply is not a chat completion ({exc!r}): {response.text}")
        raise ModelAPIError(text[:400], status=response.status_code, retries=retries) from exc
    finish = _FINISH_REASONS.get(choice.get("finish_reason"), "other")
    return ModelResponse(message=message, finish_reason=finish, usage=usage, retries=retries)


def parse_usage(usage: dict[str, Any] | None) -> Usage:
    """The reply's token counts; a reply without them is counted as missing, never as zero.

    Counts that cannot be true (negative, not whole numbers, more cached than input
    tokens) make the reply unusable: a ValueError, reported as a response error.
    """
    if not usage:
        return Usage(missing=1)
    details = usage.get("prompt_tokens_details") or {}
    counts = {
        "prompt_tokens": usage.get("prompt_tokens") or 0,
        "completion_tokens": usage.get("completion_tokens") or 0,
        "cached_tokens": details.get("cached_tokens") or 0,
    }
    for name, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"usage {name} is {value!r}, not a whole number of tokens >= 0")
    if counts["cached_tokens"] > counts["prompt_tokens"]:
        raise ValueError(
            f"usage reports {counts['cached_tokens']} cached of {counts['prompt_tokens']} "
            "input tokens"
        )
    return Usage(counts["prompt_tokens"], counts["completion_tokens"], counts["cached_tokens"])


def _arguments_text(arguments: object) -> str:
    # Some servers send arguments as an object rather than the JSON text the API specifies.
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments if arguments is not None else {})
