"""A task set's ``[[mcp]]`` entries: the MCP servers whose tools it offers, and their limits.

    [[mcp]]
    name = "depot"                        # what errors and the folder's identity call it
    command = ["python", "server.py"]     # stdio, run in the set's folder; or url = "..."
    tools = ["lookup", "calc"]            # which of its tools to offer; all by default
    timeout_s = 30                        # the limit on one call
    max_result_chars = 20000              # a longer result is cut, and says so

What a server offers is read when the set loads (loopbench/tasks/mcp_tools.py).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, FiniteFloat, model_validator
from pydantic_core import PydanticCustomError

from loopbench.graders.task_models import TaskSetError

#: A command starting with one of these runs the interpreter loopbench runs on, which has
#: the ``mcp`` SDK a Python server imports (the ``python`` on PATH may not).
THIS_PYTHON = ("python", "python3")


class McpServerError(TaskSetError):
    """A server named in ``[[mcp]]`` that cannot be used: no such command, no hello within
    its time limit, a tool name that clashes. Said in one line before any model request."""


def _named(name: str) -> str:
    if not name.strip():
        raise PydanticCustomError("blank_name", "must name the server, not be blank")
    return name


def _http_url(url: str) -> str:
    # guard: mcp-url-is-http
    if not url.startswith(("http://", "https://")):
        raise PydanticCustomError("mcp_url", "must be an http:// or https:// URL")
    return url


class McpServerSettings(BaseModel):
    """One ``[[mcp]]`` entry of taskset.toml."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    name: Annotated[str, AfterValidator(_named)]
    """What errors, ``tasks list`` and the folder's identity call the server."""
    command: list[str] | None = Field(default=None, min_length=1)
    """A stdio server: the command starting it, run in the set's folder."""
    url: Annotated[str, AfterValidator(_http_url)] | None = None
    """A streamable HTTP server: its endpoint."""
    tools: list[str] | None = None
    """The tools of the server to offer, by name; all it lists by default."""
    timeout_s: FiniteFloat = Field(default=30.0, gt=0, le=3600)
    """The limit on one call: a call past it ends its run as tool_error."""
    max_result_chars: int = Field(default=20_000, ge=1)
    """A result longer than this is cut to it, with a note saying so."""
    start_timeout_s: FiniteFloat = Field(default=30.0, gt=0, le=600)
    """The limit on starting the server and listing its tools."""

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerSettings:
        # guard: mcp-one-transport
        if (self.command is None) == (self.url is None):
            raise PydanticCustomError(
                "mcp_transport", 'give either command = [...] (stdio) or url = "..." (HTTP)'
            )
        return self

    def argv(self, folder: Path) -> list[str]:
        """The stdio command as run: ``python`` as this interpreter, a program that is not
        on PATH looked for in the set's folder."""
        command = list(self.command or [])
        if command[0] in THIS_PYTHON:
            return [sys.executable, *command[1:]]
        beside = folder / command[0]  # not resolved: a venv's python is a link to keep
        if "/" in command[0] and not Path(command[0]).is_absolute() and beside.is_file():
            return [str(beside.absolute()), *command[1:]]
        return command

    def in_folder(self, folder: Path) -> McpServerSettings:
        """These settings with a command a path from ``folder`` names made absolute (an
        experiment file's, whose task set is elsewhere)."""
        if self.command is None:
            return self
        return self.model_copy(update={"command": self.argv(folder)})

    def checked_command(self, folder: Path, where: str) -> list[str]:
        """``argv``, refused (``McpServerError``) when its program does not exist."""
        argv = self.argv(folder)
        # guard: mcp-command-must-exist
        if shutil.which(argv[0]) is None and not (folder / argv[0]).is_file():
            raise McpServerError(
                f"{where}: field 'command': no such command {argv[0]!r} (server "
                f"{self.name!r}); give a program on PATH or a path from the set's folder"
            )
        return argv
