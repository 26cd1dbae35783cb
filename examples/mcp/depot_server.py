"""The depot set's lookup and calc, served by an MCP server over stdio.

An example of bringing tools from an MCP server (docs/tools.md): the taskset.toml beside
it offers these two tools instead of the built-in ones, and a grid run on either gives
the same tool calls and observations. It serves loopbench's own lookup and calculator, so
their answers and their errors read exactly as the built-in tools' do.

    python depot_server.py ../../loopbench/tasks/depot/encyclopedia.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent

from loopbench.harness.tools import ToolFailure
from loopbench.tasks.tools import CalcError, Encyclopedia, calculate, plain_lookup

book_file = Path(sys.argv[1] if len(sys.argv) > 1 else "encyclopedia.json")
data = json.loads(book_file.read_text(encoding="utf-8"))
book = Encyclopedia(data["entries"], data.get("related", {}))
server = MCPServer("depot-tools", version="1.0.0")


def _result(text: str, failed: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=failed)


@server.tool()
def lookup(title: str) -> CallToolResult:
    """Look up an encyclopedia entry by its title."""
    try:
        return _result(plain_lookup(book, title))
    except ToolFailure as exc:  # a miss, or several matches: the model reads why
        return _result(str(exc), failed=True)


@server.tool()
def calc(expression: str) -> CallToolResult:
    """Evaluate an arithmetic expression (numbers, + - * / and brackets)."""
    try:
        return _result(calculate(expression))
    except CalcError as exc:  # worded as loopbench words a built-in tool's failure
        return _result(f"Error: calc failed: CalcError: {exc}", failed=True)


if __name__ == "__main__":
    server.run()
