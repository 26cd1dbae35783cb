"""The tool registry: tool names -> factories with a typed options model.

A task set names its tools in taskset.toml (``tools = ["lookup", "calc"]``); an unknown
name is refused when the set loads, with the registered names and how to add one. For
each run the set's tools are built by their factories, from what the set gives them
(``ToolSource``) and the options the arm gives them (``PatternOptions.tool_options``:
``react_text:tool=improved`` gives the lookup ``variant=improved``). Plugins add tools with
``@loopbench.register_tool`` (loopbench/harness/plugins.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import ValidationError

from loopbench.harness.errors import BadInput, UnknownName
from loopbench.harness.files import describe_errors
from loopbench.harness.registry import Registry
from loopbench.harness.tools import Tool, ToolChoices, ToolOptions
from loopbench.tasks.tools import LookupOptions, ToolSource, make_calc, make_lookup

ToolFactory = Callable[[ToolSource, Any], Tool]
FactoryT = TypeVar("FactoryT", bound=ToolFactory)
#: What an OpenAI-compatible endpoint takes as a function name.
TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


class UnknownTool(UnknownName):
    pass


class ToolOptionsError(BadInput):
    pass


@dataclass(frozen=True)
class ToolInfo:
    name: str
    options_model: type[ToolOptions]
    factory: ToolFactory
    summary: str
    """What the tool does, in one line."""
    reads_encyclopedia: bool = False
    """It reads the set's encyclopedia.json, which is then read (and checked) as it loads."""

    def options(self, given: Mapping[str, str]) -> ToolOptions:
        """``given`` (an arm's options for this tool) validated by the tool's options model."""
        try:
            # guard: tool-options-checked-options-model
            return self.options_model.model_validate(dict(given))
        except ValidationError as exc:
            offered = ", ".join(self.options_model.model_fields) or "none"
            raise ToolOptionsError(
                f"tool {self.name!r}: {describe_errors(exc)}; its options: {offered}"
            ) from None

    def build(self, source: ToolSource, given: Mapping[str, str]) -> Tool:
        tool = self.factory(source, self.options(given))
        # guard: factory-makes-tool-registered-as
        if tool.name != self.name:
            raise ValueError(
                f"the factory of the tool {self.name!r} made a tool named {tool.name!r}: the "
                "model would be offered a name the task set does not give; name them alike"
            )
        return tool


TOOLS = Registry[ToolInfo](
    "tool",
    "loopbench.tools",
    UnknownTool,
    "decorate its factory with @loopbench.register_tool(name, OptionsModel, summary)",
)


def register_tool(
    name: str, options_model: type[ToolOptions], summary: str, *, reads_encyclopedia: bool = False
) -> Callable[[FactoryT], FactoryT]:
    """Register the decorated factory as the tool ``name``, which a task set then names in
    its taskset.toml (``tools = ["shout"]``).

    The factory takes what the set gives its tools (``ToolSource``: its folder, its
    encyclopedia) and the tool's options, an ``options_model`` (a ``ToolOptions``
    subclass) holding its defaults unless the arm's pattern options give others
    (``PatternOptions.tool_options``), and returns a ``Tool`` named ``name``. With
    ``reads_encyclopedia`` the set's encyclopedia.json is read, and checked, as it loads.

        class ShoutOptions(loopbench.ToolOptions):
            times: int = 1

        @loopbench.register_tool("shout", ShoutOptions, "repeats a text in capitals")
        def shout(source: loopbench.ToolSource, options: ShoutOptions) -> loopbench.Tool:
            def run(args: TextArgs) -> str:
                return " ".join([args.text.upper()] * options.times)

            return loopbench.Tool("shout", "Repeat a text in capitals.", TextArgs, run)
    """

    def add(factory: FactoryT) -> FactoryT:
        # guard: tool-name-one-endpoint-takes
        if not TOOL_NAME.fullmatch(name):
            raise ValueError(
                f"a tool name is 1 to 64 letters, digits, _ or - (what endpoints take), "
                f"not {name!r}"
            )
        TOOLS.add(name, ToolInfo(name, options_model, factory, summary, reads_encyclopedia))
        return factory

    return add


register_tool(
    "lookup",
    LookupOptions,
    "looks up an entry of the set's encyclopedia by its title",
    reads_encyclopedia=True,
)(make_lookup)
register_tool("calc", ToolOptions, "evaluates an arithmetic expression")(make_calc)


def check_tool_choices(choices: ToolChoices) -> None:
    """Refuse options for a tool that is not registered, or that its options model refuses
    (``UnknownTool``, ``ToolOptionsError``): before any run, not when a set builds it."""
    for name, given in choices.items():
        TOOLS.lookup(name).options(given)
