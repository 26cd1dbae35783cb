"""How a request reaches the endpoint: one POST, its reply read whole.

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

Both read the body through ``Reading`` below, so the limits and failures are the same.

A body is read a chunk at a time through ``BoundedBody``, which decodes it (gzip,
deflate) and counts it: memory never holds more than ``max_body_bytes`` of one, however
well it compresses. A longer one is a ``ReplyTooLarge``, and the rest of it is not read.

Every failure to get a reply is a ``TransportFailure`` named after its cause
(``ReadError: ServerDisconnectedError: Server disconnected``): the client retries it and
reports it as the endpoint's failure, never as a bug in loopbench. What refuses to be
sent at all (a header the library will not carry) is any other exception.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from harness.errors import ModelError
from harness.models.bounded_body import (
    ACCEPT_ENCODING,
    MIB,
    BodyTooLarge,
    BodyUndecodable,
    BoundedBody,
)

if TYPE_CHECKING:  # imported when a transport is made: `--help` needs none of them
    from ssl import SSLContext

    import aiohttp
    import httpx

Headers = Sequence[tuple[str, str]]
#: What a body may hold once decompressed, by default (``Connection.max_response_mb``).
MAX_BODY_BYTES = 32 * MIB


@dataclass(frozen=True)
class HttpReply:
    status: int
    #: Looked up without regard to case (aiohttp's and httpx's headers both are).
    headers: Mapping[str, str]
    body: bytes

    def json(self) -> object:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        """The body as text, in the charset its content-type names (else UTF-8)."""
        return self.opening(len(self.body))

    def opening(self, size: int) -> str:
        """The first ``size`` bytes of the body as text (what an error message quotes: a
        body may be megabytes long)."""
        charset = "utf-8"
        for parameter in self.headers.get("content-type", "").split(";")[1:]:
            key, _, value = parameter.strip().partition("=")
            if key.lower() == "charset" and value:
                charset = value.strip('"')
        start = self.body[:size]
        try:
            return start.decode(charset, errors="replace")
        except LookupError:
            return start.decode("utf-8", errors="replace")


class TransportFailure(ModelError):
    """No reply, or not a whole one: a refused or dropped connection, a broken HTTP
    message, a body that does not decode. Its text names the cause."""


class ReplyTooLarge(ModelError):
    """A reply whose body is past the limit: the endpoint's failure, not retried (the same
    request would most likely bring the same reply, and each one is billed)."""

    def __init__(self, status: int, limit: int) -> None:
        super().__init__(
            f"the reply (HTTP {status}) is {BodyTooLarge(limit)}, the most a reply may hold; "
            "the rest of it was not read"
        )
        self.status = status


class Transport(Protocol):
    async def post(self, url: str, headers: Headers, body: bytes) -> HttpReply: ...

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

    async def post(self, url: str, headers: Headers, body: bytes) -> HttpReply:
        import aiohttp

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
        try:
            async with self._session.post(
                url, data=body, headers=headers, allow_redirects=False
            ) as response:
                reading = Reading(response.status, response.headers, self._max_body_bytes)
                try:
                    async for chunk in response.content.iter_any():
                        reading.feed(chunk)
                except ReplyTooLarge:
                    response.close()  # the connection goes with the rest of the body
                    raise
                return reading.reply()
        except aiohttp.ClientError as exc:
            raise TransportFailure(aiohttp_failure(exc)) from exc

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


class Reading:
    """A reply being read: its status and headers, and its body so far, bounded."""

    def __init__(self, status: int, headers: Mapping[str, str], max_body_bytes: int) -> None:
        self.status, self.headers = status, headers
        try:
            self._body = BoundedBody(headers.get("content-encoding"), max_body_bytes)
            self._body.expect(headers.get("content-length"))
        except BodyUndecodable as exc:
            raise TransportFailure(f"DecodingError: {exc}") from None
        except BodyTooLarge:
            raise ReplyTooLarge(status, max_body_bytes) from None

    def feed(self, chunk: bytes) -> None:
        try:
            self._body.feed(chunk)
        except BodyUndecodable as exc:
            raise TransportFailure(f"DecodingError: {exc}") from None
        except BodyTooLarge:
            raise ReplyTooLarge(self.status, self._body.limit) from None

    def reply(self) -> HttpReply:
        try:
            return HttpReply(self.status, self.headers, self._body.finish())
        except BodyUndecodable as exc:
            raise TransportFailure(f"DecodingError: {exc}") from None
        except BodyTooLarge:
            raise ReplyTooLarge(self.status, self._body.limit) from None


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

    async def aclose(self) -> None:
        await self._transport.aclose()
