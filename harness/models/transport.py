"""The default HTTP transport: aiohttp's, under httpx's request API, every failure an
``httpx.TransportError``.

httpx's own connection pool costs several milliseconds of CPU per call at high
concurrency (see ``bench/overhead.py``), so the client uses ``httpx-aiohttp``. That
transport lets some aiohttp errors through as they are (a bad status line, a broken
chunk) and renames others; here every one becomes an ``httpx.TransportError`` that
keeps aiohttp's name in its text, so the client retries it and reports it as an
endpoint failure, never as a bug in loopbench.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator

import httpx


def default_transport(max_connections: int) -> httpx.AsyncBaseTransport:
    from httpx_aiohttp import AiohttpTransport

    limits = httpx.Limits(
        max_connections=max_connections, max_keepalive_connections=max_connections
    )
    return AiohttpErrorsMapped(AiohttpTransport(limits=limits))


class AiohttpErrorsMapped(httpx.AsyncBaseTransport):
    """An httpx-aiohttp transport whose every aiohttp error is an ``httpx.TransportError``.

    httpx-aiohttp lets some through as they are (a bad status line, a broken chunk),
    and would make them escape the client as a bug; others it renames (a dropped
    connection becomes ``ConnectTimeout``). Here each keeps aiohttp's name in its text.
    """

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        with _aiohttp_errors():
            response = await self._inner.handle_async_request(request)
        if isinstance(response.stream, httpx.AsyncByteStream):
            response.stream = _MappedStream(response.stream)
        return response

    async def aclose(self) -> None:
        with _aiohttp_errors():
            await self._inner.aclose()


class _MappedStream(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream) -> None:
        self._inner = inner

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _aiohttp_errors():
            async for chunk in self._inner:
                yield chunk

    async def aclose(self) -> None:
        with _aiohttp_errors():
            await self._inner.aclose()


@contextlib.contextmanager
def _aiohttp_errors() -> Iterator[None]:
    import aiohttp

    try:
        yield
    except (aiohttp.ClientError, httpx.TransportError) as exc:
        original = exc.__cause__ if isinstance(exc.__cause__, aiohttp.ClientError) else exc
        if not isinstance(original, aiohttp.ClientError):
            raise
        text = f"{type(original).__name__}: {original}"
        if isinstance(original, aiohttp.ClientConnectorError):
            raise httpx.ConnectError(text) from original
        if isinstance(original, aiohttp.ServerTimeoutError):
            raise httpx.ReadTimeout(text) from original
        if isinstance(original, aiohttp.ClientConnectionError | aiohttp.ClientPayloadError):
            raise httpx.ReadError(text) from original
        raise httpx.RemoteProtocolError(text) from original
