"""How a request reaches the endpoint: one POST, its reply read whole or as a stream.

The client needs one thing of HTTP: post these bytes with these headers and give back
the status, the headers and the whole body. There are two ways, and both are needed:

- ``AiohttpPost`` is the only one loopbench itself uses, for every endpoint: an aiohttp
  session with nothing in between. Going through httpx's request API (and
  httpx-aiohttp's conversion of every request and response) cost about as much CPU per
  call as aiohttp itself in a profile of the runner (``bench/overhead.py``), and the
  client, not the endpoint, would then limit a run.
- ``HttpxPost`` exists for the tests: given an httpx transport in ``Hooks`` (not public
  API), it is what an ``httpx.MockTransport`` answers through, so a test scripts statuses,
  headers and bodies (dribbled, compressed, oversized) with no server. aiohttp has no
  such seam; its own path is tested against the fault server on loopback
  (``tests.fakes.fault_server``).

Both read the body through ``Reading`` (``loopbench.harness.models.http_reply``), so the limits and
failures are the same. A body is read a chunk at a time through ``BoundedBody``, which
decodes it (gzip, deflate) and counts it: memory never holds more than ``max_body_bytes``
of one, however well it compresses. A longer one is a ``ReplyTooLarge``, and the rest of
it is not read.

``post_stream`` (``--stream``) reads a reply of server-sent events as it comes, into the
API's accumulator (``loopbench.harness.models.streamed``): the same size limit over the whole
stream, a limit on the time between its events, and the whole request within the
client's timeout (the wait for the headers included; there the limit is a TimeoutError,
as for ``post``).

Every failure to get a reply is a ``TransportFailure`` named after its cause
(``ReadError: ServerDisconnectedError: Server disconnected``): the client retries it and
reports it as the endpoint's failure, never as a bug in loopbench. What refuses to be
sent at all (a header the library will not carry) is any other exception.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Coroutine, Sequence
from typing import TYPE_CHECKING, Protocol

from loopbench.harness.models.bounded_body import ACCEPT_ENCODING, MIB

# Re-exported: a client imports what it reads replies with from here, as before.
from loopbench.harness.models.http_reply import HttpReply as HttpReply
from loopbench.harness.models.http_reply import Reading as Reading
from loopbench.harness.models.http_reply import ReplyTooLarge as ReplyTooLarge
from loopbench.harness.models.http_reply import TransportFailure as TransportFailure
from loopbench.harness.models.streamed import Accumulator, StreamLimits, StreamRead, is_event_stream

if TYPE_CHECKING:  # imported when a transport is made: `--help` needs none of them
    from ssl import SSLContext

    import aiohttp
    import httpx

Headers = Sequence[tuple[str, str]]
#: What a body may hold once decompressed, by default (``Connection.max_response_mb``).
MAX_BODY_BYTES = 32 * MIB


class Transport(Protocol):
    async def post(self, url: str, headers: Headers, body: bytes) -> HttpReply: ...

    async def post_stream(
        self,
        url: str,
        headers: Headers,
        body: bytes,
        accumulator: Accumulator,
        limits: StreamLimits,
    ) -> HttpReply:
        """A request whose reply is server-sent events, read as they come into
        ``accumulator`` (``loopbench.harness.models.streamed``); a reply that is not a stream (an
        error status, or a server answering whole) is read whole, as by ``post``."""
        ...

    async def aclose(self) -> None: ...


class AiohttpPost:
    """Requests on one aiohttp session, made on first use (it belongs to the running
    loop), with at most ``max_connections`` open. aiohttp does not decompress: the body
    is decoded by ``BoundedBody``, the same way whatever aiohttp's version does."""

    def __init__(self, max_connections: int, max_body_bytes: int = MAX_BODY_BYTES) -> None:
        self._max_connections = max_connections
        self._max_body_bytes = max_body_bytes
        self._session: aiohttp.ClientSession | None = None
        self._checked: Headers = ()

    def _open(self, url: str) -> aiohttp.ClientSession:
        import aiohttp

        # The certificates httpx trusts (certifi's, or SSL_CERT_FILE), as before; only
        # an https endpoint needs them, and building them takes tens of milliseconds.
        ssl: SSLContext | bool = True
        if url.startswith("https:"):
            import httpx

            ssl = httpx.create_ssl_context()
        connector = aiohttp.TCPConnector(limit=self._max_connections, ssl=ssl)
        # guard: aiohttp-leaves-decoding-bounded-body
        return aiohttp.ClientSession(
            connector=connector,
            cookie_jar=aiohttp.DummyCookieJar(),  # an API keeps no cookies
            timeout=aiohttp.ClientTimeout(total=None),  # the client bounds the whole request
            auto_decompress=False,
            headers={"accept-encoding": ACCEPT_ENCODING},
        )

    def _check(self, url: str, headers: Headers) -> aiohttp.ClientSession:
        if headers is not self._checked:  # the client sends the same headers every time
            for name, value in headers:  # refused before a connection is opened for it
                if not value.isascii() or "\r" in value or "\n" in value:
                    raise ValueError(
                        f"the {name} header holds a line break or a character that is not "
                        "ASCII, which HTTP cannot carry"
                    )
            self._checked = headers
        if self._session is None:
            self._session = self._open(url)
        return self._session

    async def post(self, url: str, headers: Headers, body: bytes) -> HttpReply:
        import aiohttp

        session = self._check(url, headers)
        try:
            async with session.post(
                url, data=body, headers=headers, allow_redirects=False
            ) as response:
                return await self._whole(response)
        except aiohttp.ClientError as exc:
            raise TransportFailure(aiohttp_failure(exc)) from exc

    async def post_stream(
        self,
        url: str,
        headers: Headers,
        body: bytes,
        accumulator: Accumulator,
        limits: StreamLimits,
    ) -> HttpReply:
        import asyncio

        import aiohttp

        sent = time.monotonic()  # time to first token counts from here

        session = self._check(url, headers)
        try:
            # The request's limit bounds the wait for the headers, and a reply read whole;
            # a stream is read within StreamRead's limits (the request's among them).
            async with asyncio.timeout(limits.total_s) as whole:
                async with session.post(
                    url, data=body, headers=headers, allow_redirects=False
                ) as response:
                    if response.status != 200 or not is_event_stream(response.headers):
                        return await self._whole(response)
                    whole.reschedule(None)
                    stream = StreamRead(
                        response.headers, self._max_body_bytes, accumulator, limits, sent
                    )
                    try:
                        while not stream.done:
                            await _read_within(stream, response.content.readany())
                    except ReplyTooLarge:
                        response.close()
                        raise
                    except aiohttp.ClientError as exc:
                        raise stream.cut(aiohttp_failure(exc)) from exc
                    return stream.reply()
        except aiohttp.ClientError as exc:
            raise TransportFailure(aiohttp_failure(exc)) from exc

    async def _whole(self, response: aiohttp.ClientResponse) -> HttpReply:
        """The reply, its body read whole."""
        reading = Reading(response.status, response.headers, self._max_body_bytes)
        content = response.content
        try:
            # What ``iter_any`` yields (a body's reader ends with b"", never EofStream, which
            # only a websocket's queue raises), without its iterator and coroutine per chunk.
            while chunk := await content.readany():
                reading.feed(chunk)
        except ReplyTooLarge:
            response.close()  # the connection goes with the rest of the body
            raise
        return reading.reply()

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()


def aiohttp_failure(exc: aiohttp.ClientError) -> str:
    """The failure's text: the kind of failure, then aiohttp's own name and message."""
    import aiohttp

    if isinstance(exc, aiohttp.ClientConnectorError):
        kind = "ConnectError"
    elif isinstance(exc, aiohttp.ServerTimeoutError):
        kind = "ReadTimeout"
    elif isinstance(exc, aiohttp.ClientConnectionError | aiohttp.ClientPayloadError):
        kind = "ReadError"
    else:  # a status line or headers that are not HTTP
        kind = "RemoteProtocolError"
    return f"{kind}: {type(exc).__name__}: {exc}"


class HttpxPost:
    """Requests through an httpx transport, each phase of a request within ``timeout_s``.
    The body is read raw and decoded by ``BoundedBody`` (httpx's own decoders inflate a
    chunk whole)."""

    def __init__(
        self,
        transport: httpx.AsyncBaseTransport,
        timeout_s: float,
        max_body_bytes: int = MAX_BODY_BYTES,
    ) -> None:
        self._transport = transport
        self._timeout = dict.fromkeys(("connect", "read", "write", "pool"), timeout_s)
        self._max_body_bytes = max_body_bytes

    async def post(self, url: str, headers: Headers, body: bytes) -> HttpReply:
        import httpx

        request = httpx.Request(
            "POST",
            url,
            headers=[("accept-encoding", ACCEPT_ENCODING), *headers],
            content=body,
            extensions={"timeout": self._timeout},
        )
        try:
            response = await self._transport.handle_async_request(request)
            try:
                return await self._read(response)
            finally:
                await response.aclose()
        except httpx.RequestError as exc:  # transport failures, and bodies that do not decode
            raise TransportFailure(f"{type(exc).__name__}: {exc}") from exc

    async def _read(self, response: httpx.Response) -> HttpReply:
        if response.is_stream_consumed:
            # Built whole (``httpx.Response(content=...)`` in a test's handler), it was
            # read and decoded when made: what is left to bound is its size.
            reading = Reading(response.status_code, {}, self._max_body_bytes)
            reading.feed(response.content)
            return HttpReply(response.status_code, response.headers, reading.reply().body)
        reading = Reading(response.status_code, response.headers, self._max_body_bytes)
        async for chunk in response.aiter_raw():
            reading.feed(chunk)
        return reading.reply()

    async def post_stream(
        self,
        url: str,
        headers: Headers,
        body: bytes,
        accumulator: Accumulator,
        limits: StreamLimits,
    ) -> HttpReply:
        import asyncio

        import httpx

        sent = time.monotonic()  # time to first token counts from here

        request = httpx.Request(
            "POST",
            url,
            headers=[("accept-encoding", ACCEPT_ENCODING), *headers],
            content=body,
            extensions={"timeout": dict.fromkeys(self._timeout, None)},
        )
        try:
            async with asyncio.timeout(limits.total_s) as whole:  # as for aiohttp's
                response = await self._transport.handle_async_request(request)
                try:
                    if response.status_code != 200 or not is_event_stream(response.headers):
                        return await self._read(response)
                    whole.reschedule(None)
                    return await self._stream(response, accumulator, limits, sent)
                finally:
                    await response.aclose()
        except httpx.RequestError as exc:
            raise TransportFailure(f"{type(exc).__name__}: {exc}") from exc

    async def _stream(
        self,
        response: httpx.Response,
        accumulator: Accumulator,
        limits: StreamLimits,
        sent: float,
    ) -> HttpReply:
        import httpx

        stream = StreamRead(response.headers, self._max_body_bytes, accumulator, limits, sent)
        if response.is_stream_consumed:  # built whole by a test: one piece, then the end
            pieces = iter([response.content, b""])
            while not stream.done:
                stream.feed(next(pieces))
            return stream.reply()
        chunks = response.aiter_raw()
        try:
            while not stream.done:
                await _read_within(stream, anext(chunks, b""))
        except httpx.RequestError as exc:
            raise stream.cut(f"{type(exc).__name__}: {exc}") from exc
        return stream.reply()

    async def aclose(self) -> None:
        await self._transport.aclose()


async def _read_within(stream: StreamRead, piece: Awaitable[bytes]) -> None:
    """Feed ``stream`` the next piece of its body, if it comes within the stream's limits."""
    import asyncio

    wait = stream.wait_s()
    try:
        if wait <= 0:
            raise TimeoutError
        async with asyncio.timeout(wait):
            chunk = await piece
    except TimeoutError:
        if isinstance(piece, Coroutine):
            piece.close()
        raise stream.stalled() from None
    stream.feed(chunk)
