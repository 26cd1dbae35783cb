"""One tool an MCP server lists, as a ``Tool``: offered with the server's own input schema,
its arguments checked by a model made from that schema, its call sent to the server."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from loopbench.harness.models.types import ToolSpec
from loopbench.harness.tools import Tool

if TYPE_CHECKING:
    from mcp_types import Tool as ListedTool

#: Sends one call to the server: the tool's name and its arguments -> the result's text.
Call = Callable[[str, dict[str, Any]], Awaitable[str]]

#: JSON schema types checked as pydantic checks a built-in tool's fields; others as given.
_KINDS: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool}


@dataclass(frozen=True)
class McpTool(Tool):
    """A ``Tool`` whose schema is the server's, not one pydantic makes from its model."""

    schema: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "spec", ToolSpec(self.name, self.description, self.schema))

    @property
    def text_argument(self) -> str:
        """The first property of the schema: what ``tool[argument]`` fills in text ReAct."""
        properties = self.schema.get("properties") or {}
        return next(iter(properties), "input")


def args_model(name: str, schema: dict[str, Any]) -> type[BaseModel]:
    """A model checking arguments against ``schema``'s properties (a field each, by alias,
    so any property name works); properties the schema does not list are passed on."""
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    fields: dict[str, Any] = {}
    for number, (prop, spec) in enumerate(properties.items()):
        kind = _KINDS.get(str(spec.get("type")), Any) if isinstance(spec, dict) else Any
        default = ... if prop in required else None
        fields[f"field_{number}"] = (kind, Field(default, alias=prop))
    config = ConfigDict(extra="allow", populate_by_name=False)
    made: type[BaseModel] = create_model(f"{name}_arguments", __config__=config, **fields)
    return made


def mcp_tool(call: Call, listed: ListedTool) -> McpTool:
    """``listed`` as a Tool whose calls ``call`` sends."""
    schema = dict(listed.input_schema)
    schema.pop("title", None)
    model = args_model(listed.name, schema)

    async def run(args: BaseModel) -> str:
        return await call(listed.name, args.model_dump(by_alias=True, exclude_unset=True))

    description = listed.description or listed.title or listed.name
    return McpTool(listed.name, description, model, run, schema=schema)
