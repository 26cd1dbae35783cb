"""What every HTTP model client does, whatever its wire: retries, request slots, the rate
limit, the time limit, the reply's size bound and the endpoint's secrets redacted.

A client (``OpenAICompatClient``, ``AnthropicClient``) says how a request is written and
a reply read (``HttpClient``'s ``wire_body``, ``wire_parse`` and ``wire_error``), and
which statuses are retried; the loop here is the same for all of them.

Whatever goes wrong on the way is a ``ModelAPIError`` naming the cause, never another
exception: a status, a transport failure (a refused or reset connection, a reply that
outlasts ``timeout_s``, a broken HTTP message), a request the transport refuses to send
(a header or URL it cannot carry) or a body that is not a reply in any way. The retried
statuses, transport failures and malformed 200 replies are retried within
``RetryPolicy``; other statuses are not, nor is a reply whose body is past
``Connection.max_response_mb`` once decompressed (the transport stops reading it there).

With ``Connection.stream`` (``--stream``) each reply is asked for as server-sent events
(the wire's ``wire_stream_fields``) and read as it comes (``loopbench.harness.models.streamed``),
its events built back by the wire's accumulator (``wire_accumulator``) into the reply the
endpoint would have sent whole, which ``wire_parse`` reads as any other: the response is
the same, with its time to first token. A stream cut short (closed early, an error event,
a stall past ``stream_idle_s``) is retried like a transport failure, and the usage it
reported before it stopped (``wire_reported_usage``) is counted.

The secrets given (a key, a user name and password) are redacted, in every form a server
could echo them (see ``loopbench.harness.redaction``), from every error text and from everything a
reply holds (its text, its tool calls and its thinking) before anything else sees it.
"""

from __future__ import annotations

import asyncio
import base64
import email.utils
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Self

import httpx

from loopbench.harness import fast_json
from loopbench.harness.models.bounded_body import MIB
from loopbench.harness.models.endpoint import credentials, without_credentials
from loopbench.harness.models.streamed import Accumulator, StreamCut, StreamLimits
from loopbench.harness.models.throttle import RUN_SLOT_WAITS, AdaptiveLimit, RateLimit
from loopbench.harness.models.transport import (
    AiohttpPost,
    Headers,
    HttpReply,
    HttpxPost,
    ReplyTooLarge,
    Transport,
    TransportFailure,
)
from loopbench.harness.models.types import (
    Message,
    ModelAPIError,
    ModelRequest,
    ModelResponse,
    ThinkingBlock,
    Usage,
)
from loopbench.harness.redaction import Redactor

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
#: Nothing spent: made once rather than twice a call (a Usage is frozen, so it is shared).
NO_USAGE = Usage()


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


@dataclass(frozen=True)
class Connection:
    """How a client talks to its endpoint."""

    timeout_s: float = 120.0
    """The limit on a whole request, connecting to its last byte."""
    max_retries: int = 3
    """Retries of a request on 408, 409, 429, 5xx, transport failures and malformed replies."""
    rate_limit: float | None = None
    """Requests started a second at most (an endpoint's published limit)."""
    concurrency: int = 64
    """Requests in flight at most: fewer while the endpoint answers 429, when ``adaptive``."""
    adaptive: bool = True
    retry: RetryPolicy | None = None
    """The back-off itself; by default ``RetryPolicy(max_retries)``."""
    max_response_mb: float = 32.0
    """The most a reply's body may hold, in MiB once decompressed: a longer one is not read
    on, and the call fails (``--max-response-mb``)."""
    stream: bool = False
    """Ask for each reply as server-sent events and read it as it comes (``--stream``), so
    the time to its first token is measured (``ModelResponse.ttft_s``)."""
    stream_idle_s: float | None = None
    """With ``stream``: the most time between one event and the next (the first counted
    from sending) before the stream is given up as stalled; by default ``timeout_s``. The
    whole request stays within ``timeout_s`` either way."""


@dataclass(frozen=True)
class Hooks:
    """What a test puts in the client's place: the transport, the clock it sleeps on, and the
    seed of its back-off's jitter."""

    transport: httpx.AsyncBaseTransport | None = None
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    seed: int | None = None


#: The defaults a client is made with, as argument defaults.
DEFAULT_CONNECTION = Connection()
NO_HOOKS = Hooks()


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


@dataclass(frozen=True)
class Secrets:
    """What the client holds that the endpoint must not see come back: every text, and the
    ``(user, password)`` pairs a Basic header carries."""

    texts: tuple[str | None, ...] = ()
    pairs: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Credentials:
    """What a base URL and a key give a client: the URL to report (without the user name and
    password it may embed), the header that authorizes its requests, the secrets to redact."""

    base_url: str
    headers: tuple[tuple[str, str], ...]
    secrets: Secrets

    @classmethod
    def of(
        cls, base_url: str, api_key: str | None, key_header: Callable[[str], tuple[str, str]]
    ) -> Credentials:
        """The key in the wire's own header; without one, the URL's user name and password
        as HTTP Basic auth."""
        user, password = credentials(base_url)
        headers = []
        if api_key:
            headers.append(key_header(api_key))
        elif user is not None:
            pair = base64.b64encode(f"{user}:{password}".encode()).decode()
            headers.append(("authorization", f"Basic {pair}"))
        # guard: secrets-url-user-name-secret
        secrets = Secrets(
            (api_key, user, password), ((user, password),) if user is not None else ()
        )
        return cls(without_credentials(base_url), tuple(headers), secrets)


class HttpClient:
    """``ModelClient`` over HTTP, a wire apart. One instance serves every run of an
    experiment."""

    #: The statuses retried (with back-off, and ``retry-after`` when the reply gives one).
    retryable: ClassVar[frozenset[int]] = RETRYABLE_STATUS
    #: The statuses that halve the requests in flight (``AdaptiveLimit``).
    throttling: ClassVar[frozenset[int]] = frozenset({429})

    def __init__(
        self,
        url: str,
        headers: Headers,
        secrets: Secrets,
        connection: Connection = Connection(),
        hooks: Hooks = Hooks(),
    ) -> None:
        httpx.URL(url)  # refused here, before any request, if it is not a URL
        self._url = url
        self._headers = list(headers)
        self._redact = Redactor(secrets.texts, secrets.pairs)
        #: Whether there is anything to redact, known once rather than asked each reply.
        self._redacts = bool(self._redact)
        #: The limit on a whole request, connect to last byte.
        timeout_s = connection.timeout_s
        self._timeout_s = timeout_s
        # guard: limit-not-size-refused
        if not connection.max_response_mb > 0:  # NaN too
            raise ValueError(
                f"max_response_mb is {connection.max_response_mb!r}; give a size above 0 (MiB)"
            )
        #: At least a byte, or every reply would fail.
        max_body = max(1, int(connection.max_response_mb * MIB))
        self._max_response_mb = connection.max_response_mb
        self._transport: Transport = (
            AiohttpPost(connection.concurrency, max_body)
            if hooks.transport is None
            else HttpxPost(hooks.transport, timeout_s, max_body)
        )
        #: Requests in flight: at most the connection's concurrency, fewer while the endpoint
        #: answers 429 (AIMD, see loopbench.harness.models.throttle) unless it is not ``adaptive``.
        self.concurrency = AdaptiveLimit(connection.concurrency)
        self._adaptive = connection.adaptive
        self._rate = RateLimit(connection.rate_limit) if connection.rate_limit else None
        self._retry = connection.retry or RetryPolicy(max_retries=connection.max_retries)
        self._sleep = hooks.sleep
        self._rng = random.Random(hooks.seed)
        #: None: replies are read whole.
        self._stream = (
            StreamLimits(timeout_s, connection.stream_idle_s or timeout_s)
            if connection.stream
            else None
        )

    # What a wire says: the request's body, a 200 reply read, an error reply quoted.

    def wire_body(self, request: ModelRequest) -> dict[str, Any]:
        raise NotImplementedError

    def wire_parse(self, reply: HttpReply, retries: int) -> ModelResponse:
        """A 200 reply as a response, or a ModelAPIError saying what is wrong with it (its
        text redacted with ``self._redact``)."""
        raise NotImplementedError

    def wire_error(self, reply: HttpReply) -> str:
        """What an error reply says, redacted and short."""
        raise NotImplementedError

    def wire_stream_fields(self) -> dict[str, Any]:
        """What a request's body adds to ask for its reply as a stream."""
        raise NotImplementedError

    def wire_accumulator(self) -> Accumulator:
        """A new builder of the whole reply from a stream's events."""
        raise NotImplementedError

    def wire_reported_usage(self, body: bytes) -> Usage:
        """The usage a reply built from a stream cut short reported (none if it cannot be
        true): billed, so counted."""
        raise NotImplementedError

    def wire_retry_after(self, headers: Mapping[str, str]) -> float | None:
        """Seconds the endpoint asked to wait before a retry, if it said."""
        return parse_retry_after(headers.get("retry-after"))

    async def aclose(self) -> None:
        await self._transport.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        run = RUN_SLOT_WAITS.get()
        if run is None:
            return await self._complete(request)
        with run.call():  # its waits for a slot are not the run's latency
            return await self._complete(request)

    async def _complete(self, request: ModelRequest) -> ModelResponse:
        wire = self.wire_body(request)
        if self._stream is not None:
            wire |= self.wire_stream_fields()
        body = fast_json.dumps(wire)
        attempt = 0
        spent = NO_USAGE  # what unusable replies reported: billed, so counted
        while True:
            retry_after: float | None = None
            try:
                response, started = await self._send(body, attempt)
            # guard: reply-past-limit-api-error
            except ReplyTooLarge as exc:
                raise ModelAPIError(
                    f"{exc} (--max-response-mb {self._max_response_mb:g})",
                    exc.status,
                    attempt,
                    usage=spent + self.wire_reported_usage(exc.partial) if exc.partial else spent,
                ) from None
            except TimeoutError:
                failure = f"no complete reply within --timeout {self._timeout_s:g} s"
                status = None
            except TransportFailure as exc:
                failure = str(exc)
                status = None
                if isinstance(exc, StreamCut):  # what it reported before it stopped was billed
                    spent = spent + self.wire_reported_usage(exc.partial)
            else:
                status = response.status
                if status == 200:
                    try:
                        parsed = self.wire_parse(response, attempt)
                    except ModelAPIError as exc:  # a malformed reply is retried like a 5xx
                        failure = str(exc)
                        spent = spent + exc.usage
                    else:
                        if self._adaptive:
                            self.concurrency.succeeded()
                        # guard: secrets-client-redacts-replies-tool
                        if self._redacts or response.ttft_s is not None:  # else as it is
                            parsed = replace(
                                parsed,
                                message=self._redacted(parsed.message),
                                ttft_s=response.ttft_s,
                            )
                        return (
                            parsed
                            if spent is NO_USAGE or spent == NO_USAGE
                            else replace(parsed, usage=parsed.usage + spent)
                        )
                else:
                    if status in self.throttling and self._adaptive:
                        self.concurrency.throttled(started)
                    failure = f"HTTP {status}: {self.wire_error(response)}"
                    if status not in self.retryable:
                        raise ModelAPIError(failure, status, attempt, usage=spent)
                    retry_after = self.wire_retry_after(response.headers)
            if attempt >= self._retry.max_retries:
                tries = f"{attempt + 1} attempts" if attempt else "1 attempt"
                message = f"{failure} (gave up after {tries})"
                raise ModelAPIError(self._redact(message), status, attempt, usage=spent)
            # guard: retry-after-beyond-cap-stops
            if retry_after is not None and retry_after > self._retry.max_delay_s:
                raise ModelAPIError(
                    f"{self._redact(failure)}; the endpoint asked to retry after "
                    f"{retry_after:.0f} s, beyond the {self._retry.max_delay_s:g} s "
                    "allowed, so the call was stopped rather than retried early",
                    status=status,
                    retries=attempt,
                    usage=spent,
                )
            await self._sleep(self._retry.delay(attempt, retry_after, self._rng))
            attempt += 1

    async def _send(self, body: bytes, attempt: int) -> tuple[HttpReply, float]:
        """One attempt, in a concurrency slot and within the rate limit; when it started.

        A transport failure is a TransportFailure (retried); anything else that stops
        the request (a header or URL the transport refuses) is a ModelAPIError naming it,
        not retried, as it would fail the same way again.
        """
        started = await self.concurrency.acquire()
        try:
            if self._rate is not None:
                await self._rate.wait()
            try:
                if self._stream is not None:  # bounded by the limits it is given
                    response = await self._transport.post_stream(
                        self._url, self._headers, body, self.wire_accumulator(), self._stream
                    )
                else:
                    # guard: timeout-bounds-whole-request
                    async with asyncio.timeout(self._timeout_s):
                        response = await self._transport.post(self._url, self._headers, body)
            except (TransportFailure, ReplyTooLarge, TimeoutError):
                raise
            except Exception as exc:
                failure = (
                    f"the request could not be sent ({type(exc).__name__}: {exc}); "
                    "check the API key and the base URL"
                )
                raise ModelAPIError(self._redact(failure), retries=attempt) from exc
        finally:
            self.concurrency.release()
        return response, started

    def _redacted(self, message: Message) -> Message:
        """A reply without the endpoint's secrets: a model can repeat what it was sent."""
        if not self._redact:
            return message
        calls = tuple(
            replace(
                call,
                id=self._redact(call.id),
                name=self._redact(call.name),
                arguments=self._redact.json_text(call.arguments),
            )
            for call in message.tool_calls
        )
        thinking = tuple(ThinkingBlock(self._redact.json_text(b.json)) for b in message.thinking)
        return replace(
            message, content=self._redact(message.content), tool_calls=calls, thinking=thinking
        )
