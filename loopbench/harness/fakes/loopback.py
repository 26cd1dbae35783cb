"""A chat-completions endpoint on loopback, for tests and benchmarks: the lifecycle that
the fake server and the fault-injecting server share.

The server runs aiohttp on its own event loop in a daemon thread, bound to 127.0.0.1
on a free port, so a test's own loop (or a CLI run under test) talks to it over real
HTTP. ``stop`` ends every reply in progress at once (``closing`` is set first) and
frees the port. It can be started again after it stops.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Self

from aiohttp import web


class LoopbackServer:
    #: The path it answers a POST on.
    path = "/v1/chat/completions"

    def __init__(self) -> None:
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        #: Set when the server stops: a reply that waits on purpose waits on this.
        self.closing = asyncio.Event()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """Answer one POST to ``path``."""
        raise NotImplementedError

    def routes(self, app: web.Application) -> None:
        """What the server answers: a POST to ``path``; a server of more paths adds them."""
        app.router.add_post(self.path, self.handle)

    async def _start(self) -> None:
        app = web.Application()
        self.routes(app)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        self.port = int(self._runner.addresses[0][1])

    async def _stop(self) -> None:
        self.closing.set()
        if self._runner is not None:
            await self._runner.cleanup()

    def start(self) -> Self:
        # The loop is made here, not in __init__, so a server never started leaks none.
        self._loop = asyncio.new_event_loop()
        self.closing = asyncio.Event()  # a restarted server's replies wait again
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=10)
        return self

    def stop(self) -> None:
        if self._loop is None or self._thread is None:
            return
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()
        self._loop = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
