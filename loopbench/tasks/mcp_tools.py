"""Tools served by MCP servers, through the ``mcp`` SDK's client, as ``Tool`` objects.

A server named in a set's ``[[mcp]]`` (loopbench/tasks/mcp_settings.py) is started once in a process
and kept for every run in it (a Ray worker starts its own), on a thread of its own running
the SDK's session, so any run's event loop can call it. Its tools are ``Tool``s like the
built-in ones: every tool-using pattern offers and calls them alike, and each call is a
tool call in the record and the trace.

A call's error result (``isError``) is a failed result the model reads, as a built-in
tool's failure is. A server that crashed, or gave no result within ``timeout_s``, raises
``ToolServerFailure``: its run ends as ``tool_error``, and the server is started again for
the next call. Servers are stopped when the grid ends, and at exit (Ctrl-C, and SIGTERM,
which is made an ordinary exit while a server runs).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import hashlib
import json
import signal
import sys
import tempfile
import threading
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loopbench.harness.tools import Tool, ToolFailure, ToolServerFailure
from loopbench.tasks.mcp_settings import McpServerError, McpServerSettings
from loopbench.tasks.mcp_tool import mcp_tool

if TYPE_CHECKING:  # the SDK takes a second to import: only a set naming a server needs it
    from mcp import ClientSession
    from mcp_types import CallToolResult
    from mcp_types import Tool as ListedTool


@dataclass(frozen=True)
class ServerIdentity:
    """What a results folder records of a server: its name and version (as it says in its
    hello) and a hash of the tools offered from it."""

    entry: str
    server: str
    version: str
    tools: tuple[str, ...]
    tools_hash: str

    def recorded(self) -> dict[str, Any]:
        return {
            "name": self.entry,
            "server": self.server,
            "version": self.version,
            "tools": list(self.tools),
            "tools_hash": self.tools_hash,
        }


class _Session:
    """One live session with a server, on a thread running its own event loop."""

    def __init__(self, settings: McpServerSettings, folder: Path) -> None:
        self.settings, self.folder = settings, folder
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.failure: BaseException | None = None
        self.session: ClientSession | None = None
        self.server, self.version = "", ""
        self.listed: list[ListedTool] = []
        #: What a stdio server writes to stderr: its last line is shown when it fails to start.
        self.errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        self._task = self.loop.create_task(self._serve())  # before the thread: close() has it
        self.thread = threading.Thread(target=self._main, name=f"mcp-{settings.name}", daemon=True)
        self.thread.start()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self._task)
        except BaseException as exc:  # cancelled by close(), or the server went away
            self.failure = self.failure or exc
        finally:
            self.session = None
            self.ready.set()
            self.loop.close()

    def _transport(self) -> AbstractAsyncContextManager[Any]:
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client
        from mcp.client.streamable_http import streamable_http_client

        if self.settings.url is not None:
            return streamable_http_client(self.settings.url)
        argv = self.settings.argv(self.folder)
        params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=self.folder)
        return stdio_client(params, errlog=self.errlog)

    async def _serve(self) -> None:
        from mcp import ClientSession

        try:
            async with self._transport() as (read, write), ClientSession(read, write) as session:
                hello = await session.initialize()
                listed: list[ListedTool] = []
                cursor: str | None = None
                while True:
                    page = await session.list_tools(
                        params=None if cursor is None else _page(cursor)
                    )
                    listed += page.tools
                    cursor = page.next_cursor
                    if not cursor:
                        break
                self.server, self.version = hello.server_info.name, hello.server_info.version
                self.listed, self.session = listed, session
                self.ready.set()
                await asyncio.Event().wait()  # until close() cancels it
        except Exception as exc:
            self.failure = exc

    @property
    def alive(self) -> bool:
        return self.session is not None and self.thread.is_alive()

    def close(self) -> None:
        """Cancel the session, which stops the server (its process tree, for stdio)."""
        if self.thread.is_alive():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                self.loop.call_soon_threadsafe(self._task.cancel)
        self.thread.join(timeout=15)
        self.errlog.close()

    def said_last(self) -> str:
        """The last line the server wrote to stderr (cut to 300 characters), or ""."""
        try:
            self.errlog.seek(0)
            lines = [line.strip() for line in self.errlog.read()[-20_000:].splitlines()]
        except (OSError, ValueError):  # closed already
            return ""
        said = next((line for line in reversed(lines) if line), "")
        return said[:300]


def _page(cursor: str) -> Any:
    from mcp_types import PaginatedRequestParams

    return PaginatedRequestParams(cursor=cursor)


class McpServer:
    """A server named in a set's ``[[mcp]]``: started on first use, and again after it
    crashed or hung; its calls bounded in time and result size."""

    def __init__(self, settings: McpServerSettings, folder: Path, where: str) -> None:
        self.settings, self.folder, self.where = settings, folder, where
        self._lock = threading.Lock()
        self._session: _Session | None = None

    def live(self) -> _Session:
        """The running session, started (or started again) now if there is none; refused
        (``McpServerError``) when the server does not start and list its tools in time."""
        with self._lock:
            if self._session is not None and self._session.alive:
                return self._session
            if self._session is not None:
                self._session.close()
            _exit_on_sigterm()
            import mcp.client.session  # noqa: F401 - imported before the clock starts (1 s)

            started = _Session(self.settings, self.folder)
            self._session = started
            # guard: mcp-start-time-limit
            answered = started.ready.wait(self.settings.start_timeout_s)
            if not answered or not started.alive:
                said = started.said_last()
                started.close()
                self._session = None
                why = "no answer in time"
                if answered and started.failure is not None:
                    why = _why(started.failure)
                if said:
                    why += f"; its stderr ends: {said}"
                raise McpServerError(
                    f"{self.where}: MCP server {self.settings.name!r} did not start and list "
                    f"its tools (start_timeout_s = {self.settings.start_timeout_s:g}): {why}"
                )
            return started

    def stop(self) -> None:
        with self._lock:
            if self._session is not None:
                self._session.close()
                self._session = None

    def identity(self, offered: Sequence[ListedTool]) -> ServerIdentity:
        session = self.live()
        shown = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in offered]
        digest = hashlib.sha256(json.dumps(shown, sort_keys=True).encode()).hexdigest()
        names = tuple(t.name for t in offered)
        return ServerIdentity(self.settings.name, session.server, session.version, names, digest)

    def offered(self) -> list[ListedTool]:
        """The tools to offer: those ``tools`` names, else every one the server lists."""
        listed = {t.name: t for t in self.live().listed}
        wanted = self.settings.tools
        if wanted is None:
            return list(listed.values())
        missing = [name for name in wanted if name not in listed]
        # guard: mcp-named-tool-must-be-listed
        if missing:
            raise McpServerError(
                f"{self.where}: field 'tools' of MCP server {self.settings.name!r}: it lists "
                f"no tool {', '.join(map(repr, missing))}; it lists: {', '.join(listed) or 'none'}"
            )
        return [listed[name] for name in wanted]

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        """The tool's result as text, cut to ``max_result_chars``; ``ToolFailure`` for its
        error result, ``ToolServerFailure`` when the server crashed or hung."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED

        name, limit = self.settings.name, self.settings.timeout_s
        try:
            session = await asyncio.to_thread(self.live)
        except McpServerError as exc:
            raise ToolServerFailure(str(exc)) from None
        client = session.session
        if client is None:
            raise ToolServerFailure(
                f"MCP server {name!r} stopped before calling {tool!r}"
            ) from None
        try:
            sent = asyncio.run_coroutine_threadsafe(client.call_tool(tool, arguments), session.loop)
        except RuntimeError:  # its loop closed: the server went away just now
            raise ToolServerFailure(
                f"MCP server {name!r} stopped before calling {tool!r}"
            ) from None
        try:
            # guard: mcp-call-time-limit
            result = await asyncio.wait_for(asyncio.wrap_future(sent), limit)
        except TimeoutError:
            await asyncio.to_thread(self._drop, session)  # off the runs' event loop
            raise ToolServerFailure(
                f"MCP server {name!r}: {tool} gave no result within {limit:g} s (timeout_s); "
                "the server is started again for the next call"
            ) from None
        except MCPError as exc:
            if exc.code != CONNECTION_CLOSED:  # an error reply: the model reads it
                raise ToolFailure(f"Error: {tool} failed: {exc.error.message}") from None
            await asyncio.to_thread(self._drop, session)  # off the runs' event loop
            raise ToolServerFailure(
                f"MCP server {name!r} went away during {tool} ({exc.error.message}); it is "
                "started again for the next call"
            ) from None
        except Exception as exc:
            await asyncio.to_thread(self._drop, session)  # off the runs' event loop
            raise ToolServerFailure(
                f"MCP server {name!r} failed during {tool}: {_why(exc)}"
            ) from None
        return self._text(result)

    def _drop(self, session: _Session) -> None:
        with self._lock:
            if self._session is session:
                self._session = None
        session.close()

    def _text(self, result: CallToolResult) -> str:
        from mcp_types import TextContent

        parts = [c.text if isinstance(c, TextContent) else f"[{c.type}]" for c in result.content]
        text = "\n".join(parts)
        if not parts and result.structured_content is not None:
            text = json.dumps(result.structured_content)
        limit = self.settings.max_result_chars
        # guard: mcp-result-size-limit
        if len(text) > limit:
            text = f"{text[:limit]}\n[cut: {len(text)} characters; max_result_chars is {limit}]"
        if result.is_error:
            raise ToolFailure(text)
        return text


def _why(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_why(e) for e in exc.exceptions)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


#: Every server started in this process, by (folder, settings): one each, shared by runs.
_SERVERS: dict[tuple[str, str], McpServer] = {}
_SERVERS_LOCK = threading.Lock()


def server_for(settings: McpServerSettings, folder: Path, where: str) -> McpServer:
    key = (str(folder), settings.model_dump_json())
    with _SERVERS_LOCK:
        if key not in _SERVERS:
            _SERVERS[key] = McpServer(settings, folder, where)
        return _SERVERS[key]


def stop_servers() -> None:
    """Stop every server this process started (at the end of a grid, and at exit)."""
    with _SERVERS_LOCK:
        servers = list(_SERVERS.values())
    for server in servers:
        server.stop()


atexit.register(stop_servers)
_SIGTERM_SET = threading.Event()


def _exit_on_sigterm() -> None:
    """SIGTERM made an ordinary exit, so the servers are stopped at exit; only from the
    main thread, and only where nothing else handles it."""
    if _SIGTERM_SET.is_set() or threading.current_thread() is not threading.main_thread():
        return
    _SIGTERM_SET.set()
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))


def mcp_tools(
    entries: Sequence[McpServerSettings], folder: Path, where: str
) -> tuple[list[Tool], list[ServerIdentity]]:
    """The tools the set's servers offer, and what the folder records of each server;
    ``McpServerError`` (one line naming ``where`` and the field) when a server does not
    start, lacks a tool named in ``tools`` or offers a name another offers too."""
    tools: list[Tool] = []
    identities: list[ServerIdentity] = []
    for entry in entries:
        if entry.command is not None:
            entry.checked_command(folder, where)
        server = server_for(entry, folder, where)
        offered = server.offered()
        identities.append(server.identity(offered))
        tools += [mcp_tool(server.call, listed) for listed in offered]
    return tools, identities
