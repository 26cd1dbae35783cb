"""How a run ends: the statuses a record holds, and the groups the reports treat alike.

Below the patterns, the runner and the reports: a pattern returns one, the runner records
it, and every table, comparison and failure rule reads it from the record.
"""

from __future__ import annotations

from typing import Literal

Status = Literal[
    "answered",  # the pattern produced a final answer (graded)
    "step_budget",  # max_steps model calls were spent without a final answer
    "token_budget",  # max_tokens were spent without a final answer
    "truncated",  # a turn hit the output-token limit; its half-written content was not acted on
    "unparsed",  # the model's final reply held no answer in the form the pattern asks for
    "step_timeout",  # one model call took longer than the arm's step_timeout_s
    "none_accepted",  # candidates were answered but the verifier accepted none (not graded)
    "refused",  # the pattern refused its inputs (a budget too small, a plan too long...)
    "api_error",  # the endpoint failed after retries
    "pattern_error",  # the pattern itself raised: a bug, recorded instead of crashing the grid
    "tool_error",  # a tool's server crashed or did not answer in time (an MCP server)
]
STATUSES: tuple[str, ...] = Status.__args__  # type: ignore[attr-defined]
#: Statuses that say nothing about the pattern's reasoning; left out of accuracy, kept in cost.
INFRASTRUCTURE_STATUSES = frozenset({"api_error", "pattern_error", "tool_error"})
#: Statuses that mean a run limit ended the run.
LIMIT_STATUSES = frozenset({"step_budget", "token_budget", "step_timeout"})
