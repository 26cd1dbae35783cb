"""Tools: a name, a description, a pydantic arguments model (the JSON schema) and a callable.

A tool is built for a run from the options its task set and arm give it (``ToolOptions``;
the registry of tools a task set can name is loopbench/tasks/tool_registry.py).

``ToolSet.invoke`` never raises. Invalid JSON (JSON nested deeper than Python parses, or
holding an integer longer than it converts, included), an unknown tool, a schema
violation or an exception inside the tool all come back as a failed ``ToolResult`` whose
text the model can read and recover from (seed 003: a failed tool is a result).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from loopbench.harness.errors import HarnessFault
from loopbench.harness.models.types import ToolSpec
from loopbench.harness.quick_init import quick_init

ToolFn = Callable[[Any], str | Awaitable[str]]

#: Options for tools by tool name, as an arm gives them: ``{"lookup": {"variant": "improved"}}``.
#: Each tool's options model validates its own (a value given as text is converted).
ToolChoices = Mapping[str, Mapping[str, str]]


class ToolOptions(BaseModel):
    """A tool's options (e.g. the lookup's ``variant``); unknown keys are refused."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class ToolFailure(HarnessFault):
    """Raised by a tool to fail with exactly this text (a lookup miss): the model reads the
    text as it is, and patterns see a failed result, never an output to build on."""


class ToolServerFailure(HarnessFault):
    """The server behind a tool crashed or did not answer within its time limit: not the
    model's doing, so not an observation; the run ends as ``tool_error`` and the grid goes
    on (loopbench/tasks/mcp_tools.py)."""


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    args_model: type[BaseModel]
    fn: ToolFn
    spec: ToolSpec = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        schema = self.args_model.model_json_schema()
        schema.pop("title", None)
        object.__setattr__(self, "spec", ToolSpec(self.name, self.description, schema))

    @property
    def text_argument(self) -> str:
        """The field a text action's bracketed argument fills: ``lookup[Paris]`` -> title."""
        return next(iter(self.args_model.model_fields))


@quick_init
@dataclass(frozen=True, slots=True)
class ToolResult:
    ok: bool
    content: str
    #: The validated arguments, canonical JSON; None when they did not validate.
    args_key: str | None = None
    #: The repeated-action guard replaced the result: ``content`` is its warning, not output.
    guarded: bool = False


class ToolSet:
    """The tools on offer in one run, by name."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools = {t.name: t for t in tools}
        self.specs = tuple(t.spec for t in self._tools.values())

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Any:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def with_tools(self, *extra: Tool) -> ToolSet:
        """A new set with ``extra`` added; this one is left untouched."""
        return ToolSet([*self._tools.values(), *extra])

    async def invoke(self, name: str, arguments: str | dict[str, Any]) -> ToolResult:
        tool = self._tools.get(name)
        if tool is None:
            offered = ", ".join(self._tools) or "none"
            return ToolResult(False, f"Error: there is no tool named {name!r}. Tools: {offered}.")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            # guard: tool-arguments-nested-too-deep
            except (ValueError, RecursionError) as exc:  # nested too deep, a number too long
                return ToolResult(
                    False,
                    f"Error: the arguments to {name} are not valid JSON ({_why(exc)}). "
                    f"Send an object matching {json.dumps(tool.spec.parameters)}.",
                )
        if not isinstance(arguments, dict):
            return ToolResult(False, f"Error: the arguments to {name} must be a JSON object.")
        try:
            args = tool.args_model.model_validate(arguments)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
                for e in exc.errors()
            )
            return ToolResult(False, f"Error: invalid arguments to {name}: {problems}.")
        try:
            key = _CANONICAL.encode(args.model_dump())
        except (ValueError, RecursionError) as exc:  # a tool's own field may hold any value
            return ToolResult(False, f"Error: invalid arguments to {name}: {_why(exc)}.")
        try:
            result = tool.fn(args)
            if type(result) is not str and inspect.isawaitable(result):  # most tools: text
                result = await result
        except ToolFailure as exc:
            return ToolResult(False, str(exc), key)
        except ToolServerFailure:  # the run ends as tool_error: no observation to show
            raise
        except Exception as exc:  # a tool's failure is the model's observation, not a crash
            return ToolResult(False, f"Error: {name} failed: {type(exc).__name__}: {exc}", key)
        return ToolResult(True, str(result), key)


#: What ``json.dumps(value, sort_keys=True)`` writes, without an encoder made for every
#: call as ``json.dumps`` makes one for any argument it is given.
_CANONICAL = json.JSONEncoder(sort_keys=True)


def _why(exc: ValueError | RecursionError) -> str:
    """Why arguments did not parse, in a few words."""
    if isinstance(exc, json.JSONDecodeError):
        return exc.msg
    if isinstance(exc, RecursionError):
        return "nested too deep"
    return str(exc).split(":")[0]  # "Exceeds the limit (4300 digits) for integer string ..."
