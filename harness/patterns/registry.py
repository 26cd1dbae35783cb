"""The registry: pattern names -> factories with a typed options model. Patterns register
themselves here; ``harness.patterns.catalog`` looks them up (the shipped ones and those of
installed plugins loaded first).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from harness.errors import UnknownName
from harness.patterns.base import Pattern, PatternOptions

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

    def build(self, options: PatternOptions) -> Pattern:
        return self.factory(options)


_REGISTRY: dict[str, PatternInfo] = {}


def register(
    name: str, options_model: type[OptionsT], summary: str
) -> Callable[[Callable[[OptionsT], Pattern]], Callable[[OptionsT], Pattern]]:
    def add(factory: Callable[[OptionsT], Pattern]) -> Callable[[OptionsT], Pattern]:
        if name in _REGISTRY:
            raise ValueError(f"a pattern named {name!r} is already registered")
        _REGISTRY[name] = PatternInfo(name, options_model, factory, summary)
        return factory

    return add


def known() -> dict[str, PatternInfo]:
    """Every pattern registered so far, by name (``harness.patterns.catalog`` loads the
    shipped ones and the plugins' first)."""
    return _REGISTRY
