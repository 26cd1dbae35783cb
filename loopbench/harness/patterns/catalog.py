"""The patterns that can run: the shipped ones, imported here, and those of installed
plugins, by name.

It is also an allowlist. Selecting an unregistered or empty name is refused here,
before a task is loaded or a client built, so a typo costs nothing and reaches no
endpoint (seed 001).
"""

from __future__ import annotations

from loopbench.harness.patterns import (  # noqa: F401  (importing a pattern registers it)
    best_of_n,
    cot,
    direct,
    goal_decomposition,
    pipeline,
    plan,
    plan_execute,
    react,
    react_text,
    reflection,
    reflexion,
    rewoo,
    self_consistency,
    tot,
)
from loopbench.harness.patterns.registry import PATTERNS, PatternInfo


def registered() -> dict[str, PatternInfo]:
    return dict(sorted(PATTERNS.registered().items()))


#: A pattern by name; an unknown or empty name is refused (``UnknownPattern``).
lookup = PATTERNS.lookup
