"""The patterns that can run: the shipped ones and those of installed plugins, by name.

It is also an allowlist. Selecting an unregistered or empty name is refused here,
before a task is loaded or a client built, so a typo costs nothing and reaches no
endpoint (seed 001).
"""

from __future__ import annotations

from harness.patterns import builtin  # noqa: F401  (importing registers them)
from harness.patterns.registry import PatternInfo, UnknownPattern, known
from harness.plugins import PATTERN_GROUP, load_entry_points


def registered() -> dict[str, PatternInfo]:
    _load_plugins()
    return dict(sorted(known().items()))


def lookup(name: str) -> PatternInfo:
    _load_plugins()
    names = ", ".join(sorted(known()))
    if not name.strip():
        raise UnknownPattern(
            "the arm names no pattern: write PATTERN or PATTERN:key=value, "
            f"with PATTERN one of {names}"
        )
    info = known().get(name)
    if info is None:
        raise UnknownPattern(
            f"no pattern named {name!r} is registered; registered: {names}. "
            "To add one, decorate its factory with @loopbench.register_pattern(name, "
            "OptionsModel, summary) in a module of your own, then pass --plugin your.module, "
            f"or declare the module as an entry point in the group {PATTERN_GROUP!r} of your "
            "package (README: Plugins)."
        )
    return info


_plugins_loaded = False


def _load_plugins() -> None:
    """Those of installed plugins (once)."""
    global _plugins_loaded
    if not _plugins_loaded:
        load_entry_points(PATTERN_GROUP)
        _plugins_loaded = True
