"""The pattern contract: ``name``, typed options, and ``async run(ctx) -> Outcome``.

A pattern's only contact with the world is ``ctx.model`` (already counted) and
``ctx.tools``. It knows nothing of scheduling, records or printing, and it never
totals usage: the counting client does that, on every path (seed 001).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from harness.models.counting import CountedClient
from harness.models.types import Message
from harness.tools import ToolSet
from harness.trace import Trace

Status = Literal[
    "answered",  # the pattern produced a final answer (graded)
    "step_budget",  # max_steps model calls were spent without a final answer
    "token_budget",  # max_tokens were spent without a final answer
    "truncated",  # a turn hit the output-token limit; its half-written content was not acted on
    "unparsed",  # the model's final reply held no answer in the form the pattern asks for
    "step_timeout",  # one model call took longer than the arm's step_timeout_s
    "refused",  # the pattern refused its inputs (a budget too small, a plan too long...)
    "api_error",  # the endpoint failed after retries
    "pattern_error",  # the pattern itself raised: a bug, recorded instead of crashing the grid
]
STATUSES: tuple[str, ...] = Status.__args__  # type: ignore[attr-defined]
#: Statuses that say nothing about the pattern's reasoning; left out of accuracy, kept in cost.
INFRASTRUCTURE_STATUSES = frozenset({"api_error", "pattern_error"})


class PatternOptions(BaseModel):
    """Options given on an arm, e.g. ``react_text:guard=on``. Unknown keys are refused."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class ToolLoopOptions(PatternOptions):
    """Options every tool-using pattern takes: the ablation axes and the budgets."""

    guard: bool = False
    """Repeated-action guard: a repeated identical call gets 'you have been round this loop'."""
    tool: Literal["plain", "improved"] = "plain"
    """Which lookup tool the task set offers."""
    max_steps: int = Field(default=8, ge=0)
    """Ceiling on model calls; reaching it is the status step_budget."""
    max_tokens: int = Field(default=20_000, ge=0)
    """Ceiling on input plus output tokens; reaching it is the status token_budget."""
    step_timeout_s: float = Field(default=0, ge=0)
    """Wall-clock limit on one model call, 0 for none; exceeding it is step_timeout."""


@dataclass
class RunContext:
    question: str
    model: CountedClient
    model_name: str
    tools: ToolSet
    trace: Trace = field(default_factory=Trace)

    def emit(self, kind: str, **data: Any) -> None:
        self.trace.emit(kind, **data)


@dataclass
class Outcome:
    status: Status
    answer: str | None = None
    #: The conversation the pattern was given, extended with what it produced.
    messages: list[Message] = field(default_factory=list)
    steps: int = 0
    error: str | None = None
    #: What this pattern measures of itself: agreement, candidates drawn, nodes expanded...
    metrics: dict[str, float] = field(default_factory=dict)


class Pattern(Protocol):
    @property
    def name(self) -> str: ...

    async def run(self, ctx: RunContext) -> Outcome: ...


def budget_hit(ctx: RunContext, steps: int, max_steps: int, max_tokens: int) -> Status | None:
    """The budget status to stop with before the next call, if any."""
    if steps >= max_steps:
        return "step_budget"
    if ctx.model.tokens_used >= max_tokens:
        return "token_budget"
    return None
