"""Reasoning patterns, one per module, behind a registry."""

from harness.patterns.base import (
    INFRASTRUCTURE_STATUSES,
    STATUSES,
    Outcome,
    Pattern,
    PatternOptions,
    RunContext,
    Status,
    ToolLoopOptions,
)
from harness.patterns.registry import PatternInfo, UnknownPattern, lookup, register, registered

__all__ = [
    "INFRASTRUCTURE_STATUSES",
    "STATUSES",
    "Outcome",
    "Pattern",
    "PatternInfo",
    "PatternOptions",
    "RunContext",
    "Status",
    "ToolLoopOptions",
    "UnknownPattern",
    "lookup",
    "register",
    "registered",
]
