"""A stdio MCP server for the tests: two tools, each call counted in a file.

    python mcp_test_server.py CALLS_FILE PIDS_FILE [--extra] [--odd] [--http PORT]

``reverse`` and ``shout`` answer at once; the text ``hang`` makes a call never end, and
``die`` ends the server mid-call (the first time only: a ``died`` file beside CALLS_FILE
says so). Every call is a JSON line in CALLS_FILE (the tool, its text, what it returned),
written before the answer; the server's process id is a line of PIDS_FILE. ``--extra``
offers a third tool, so the tool list differs; ``--odd`` one named ``odd.name``; ``--http
PORT`` serves streamable HTTP on that loopback port.
"""

import json
import os
import sys
from pathlib import Path

import anyio
from mcp.server.mcpserver import MCPServer

calls, pids = Path(sys.argv[1]), Path(sys.argv[2])
with pids.open("a") as out:
    out.write(f"{os.getpid()}\n")
server = MCPServer("counting-test-server", version="0.1.0")


async def answer(tool: str, text: str, result: str) -> str:
    died = calls.with_name("died")
    if text == "die" and not died.exists():  # once: a run made again finds it working
        died.touch()
        os._exit(1)
    with calls.open("a") as out:
        out.write(json.dumps({"tool": tool, "text": text, "result": result}) + "\n")
    if text == "hang":
        await anyio.sleep(3600)
    return result


@server.tool()
async def reverse(text: str) -> str:
    """Reverse a text."""
    return await answer("reverse", text, text[::-1])


@server.tool()
async def shout(text: str) -> str:
    """Repeat a text in capitals."""
    return await answer("shout", text, text.upper() + "!")


if "--extra" in sys.argv:

    @server.tool()
    def whisper(text: str) -> str:
        """Repeat a text in lower case."""
        return text.lower()


if "--odd" in sys.argv:

    @server.tool(name="odd.name")
    def odd(text: str) -> str:
        """A tool whose name no endpoint takes."""
        return text


if "--http" in sys.argv:  # streamable HTTP on this loopback port, instead of stdio
    port = int(sys.argv[sys.argv.index("--http") + 1])
    server.run("streamable-http", host="127.0.0.1", port=port)
else:
    server.run()
