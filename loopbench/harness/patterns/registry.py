"""The registry patterns add themselves to: a name -> a factory with a typed options model.
Look them up in ``loopbench.harness.patterns.catalog``, which loads the shipped ones first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from loopbench.harness.errors import UnknownName
from loopbench.harness.patterns.base import CallFloor, Pattern, PatternOptions
from loopbench.harness.patterns.prompts import Prompts
from loopbench.harness.registry import Registry

OptionsT = TypeVar("OptionsT", bound=PatternOptions)


class UnknownPattern(UnknownName):
    pass


@dataclass(frozen=True)
class PatternInfo:
    name: str
    options_model: type[PatternOptions]
    factory: Callable[[Any], Pattern]
    summary: str
    """What the pattern does and what it costs in model calls, in one line."""
    prompts: Prompts = field(default_factory=Prompts)
    """Its prompt slots, each an arm may override."""

    def build(self, options: PatternOptions) -> Pattern:
        return self.factory(options)

    def build_with_floor(self, options: PatternOptions) -> tuple[Pattern, CallFloor]:
        """The pattern, and the fewest model calls a run of it needs (a ``max_steps`` below
        is refused before any request)."""
        pattern = self.factory(options)
        return pattern, pattern.call_floor()


class _Patterns(Registry[PatternInfo]):
    def refusal(self, name: str, names: list[str]) -> str:
        listed = ", ".join(sorted(names))
        if not name.strip():
            return (
                "the arm names no pattern: write PATTERN or PATTERN:key=value, "
                f"with PATTERN one of {listed}"
            )
        return (
            f"no pattern named {name!r} is registered; registered: {listed}. "
            f"{self.how_to_add('To add one')}."
        )


PATTERNS = _Patterns(
    "pattern",
    "loopbench.patterns",
    UnknownPattern,
    "decorate its factory with @loopbench.register_pattern(name, OptionsModel, summary)",
)


def register(
    name: str, options_model: type[OptionsT], summary: str, prompts: Prompts | None = None
) -> Callable[[Callable[[OptionsT], Pattern]], Callable[[OptionsT], Pattern]]:
    """Register the decorated factory as the pattern ``name``; ``prompts``: the slots its
    prompts are rendered from, which an arm may override
    (``loopbench.harness.patterns.prompts``)."""

    def add(factory: Callable[[OptionsT], Pattern]) -> Callable[[OptionsT], Pattern]:
        info = PatternInfo(name, options_model, factory, summary, prompts or Prompts())
        PATTERNS.add(name, info)
        return factory

    return add
