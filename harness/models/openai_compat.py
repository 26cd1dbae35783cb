"""A client for any OpenAI-compatible ``POST {base_url}/chat/completions`` endpoint.

Works against OpenAI, vLLM, Ollama, llama.cpp's server and LiteLLM proxies. The
HTTP layer is httpx's request, response and transport API. Requests go straight
to the transport: the ``AsyncClient`` conveniences (cookie jar, redirects, URL
merging) were the largest CPU cost per call after the transport in a profile of
the runner, and a chat endpoint needs none of them. The transport is aiohttp's
(``httpx-aiohttp``) by default, because httpx's own connection pool costs several
milliseconds of CPU per call at high concurrency (see ``bench/overhead.py``).
Tests inject ``httpx.MockTransport`` instead.

Whatever goes wrong on the way is a ``ModelAPIError`` naming the cause, never another
exception: a status, a transport failure (a refused or reset connection, a reply
that outlasts ``timeout_s``, a broken HTTP message) or a body that is not a chat
completion in any way. 408, 409, 429, 5xx, transport failures and malformed 200
replies are retried within ``RetryPolicy``; other statuses are not.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import httpx

from harness.models.throttle import AdaptiveLimit, RateLimit
from harness.models.transport import default_transport
from harness.models.types import (
    ModelAPIError,
    ModelRequest,
    ModelResponse,
)
from harness.models.wire import parse_response, request_body

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


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
        adaptive: bool = True,
        rate_limit: float | None = None,
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
        #: Requests in flight: at most max_concurrency, fewer while the endpoint answers 429
        #: (AIMD, see harness.models.throttle) unless ``adaptive`` is off.
        self.concurrency = AdaptiveLimit(max_concurrency)
        self._adaptive = adaptive
        self._rate = RateLimit(rate_limit) if rate_limit else None
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
                response, started = await self._send(body)
            except TimeoutError:
                failure = f"no complete reply within --timeout {self._timeout_s:g} s"
                status = None
            except httpx.RequestError as exc:  # transport failures, and bodies that do not decode
                failure = f"{type(exc).__name__}: {exc}"
                status = None
            else:
                status = response.status_code
                if status == 200:
                    try:
                        parsed = parse_response(response, retries=attempt, redact=self._redact)
                    except ModelAPIError as exc:  # a malformed reply is retried like a 5xx
                        failure = str(exc)
                    else:
                        if self._adaptive:
                            self.concurrency.succeeded()
                        return parsed
                else:
                    if status == 429 and self._adaptive:
                        self.concurrency.throttled(started)
                    failure = f"HTTP {status}: {self._redact(response.text)[:300]}"
                    if status not in RETRYABLE_STATUS:
                        raise ModelAPIError(failure, status=status, retries=attempt)
                    retry_after = parse_retry_after(response.headers.get("retry-after"))
            if attempt >= self._retry.max_retries:
                tries = f"{attempt + 1} attempts" if attempt else "1 attempt"
                message = f"{failure} (gave up after {tries})"
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

    async def _send(self, body: bytes) -> tuple[httpx.Response, float]:
        """One attempt, in a concurrency slot and within the rate limit; when it started."""
        started = await self.concurrency.acquire()
        try:
            if self._rate is not None:
                await self._rate.wait()
            return await asyncio.wait_for(self._post(body), self._timeout_s), started
        finally:
            await self.concurrency.release()

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
