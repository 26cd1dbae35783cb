"""Importing this module registers every pattern that ships with loopbench."""

from harness.patterns import (
    best_of_n,
    cot,
    direct,
    goal_decomposition,
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

__all__ = [
    "best_of_n",
    "cot",
    "direct",
    "goal_decomposition",
    "plan",
    "plan_execute",
    "react",
    "react_text",
    "reflection",
    "reflexion",
    "rewoo",
    "self_consistency",
    "tot",
]
