"""The registry: pattern names -> factories with a typed options model.

It is also an allowlist. Selecting an unregistered or empty name is refused here,
before a task is loaded or a client built, so a typo costs nothing and reaches no
endpoint (seed 001).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from harness.patterns.base import Pattern, PatternOptions
from harness.plugins import PATTERN_GROUP, load_entry_points

OptionsT = TypeVar("OptionsT", bound=PatternOptions)


class UnknownPattern(ValueError):
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


def registered() -> dict[str, PatternInfo]:
    _load_builtins()
    return dict(sorted(_REGISTRY.items()))


def lookup(name: str) -> PatternInfo:
    _load_builtins()
    if not name.strip():
        raise UnknownPattern(
            "the arm names no pattern: write PATTERN or PATTERN:key=value, "
            f"with PATTERN one of {', '.join(sorted(_REGISTRY))}"
        )
    info = _REGISTRY.get(name)
    if info is None:
        raise UnknownPattern(
            f"no pattern named {name!r} is registered; registered: {', '.join(sorted(_REGISTRY))}. "
            "To add one, decorate its factory with @loopbench.register_pattern(name, "
            "OptionsModel, summary) in a module of your own, then pass --plugin your.module, "
            f"or declare the module as an entry point in the group {PATTERN_GROUP!r} of your "
            "package (README: Plugins)."
        )
    return info


_plugins_loaded = False


def _load_builtins() -> None:
    """The shipped patterns, then those of installed plugins (once)."""
    global _plugins_loaded
    from harness.patterns import builtin  # noqa: F401  (importing registers them)

    if not _plugins_loaded:
        load_entry_points(PATTERN_GROUP)
        _plugins_loaded = True
