"""What a run leaves on disk: one ``RunRecord`` line per (arm, task, repeat) in runs.jsonl.

The full trace of the same run is one line of traces.jsonl with the same run_id.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from harness.patterns.base import Status

SCHEMA_VERSION = 1


class RunRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    schema_version: int = SCHEMA_VERSION
    run_id: str
    """Unique id; keys this run's line in traces.jsonl."""
    experiment_id: str
    """Id of the results folder's experiment (see experiment.json)."""
    arm: str
    """Canonical arm string: pattern and every option, sorted, defaults filled."""
    pattern: str
    options: dict[str, Any]
    task_set: str
    task_id: str
    slice: str | None
    repeat: int
    """0-based repeat index; (arm, task_id, repeat) identifies a run across result sets."""
    model: str
    status: Status
    """How the run ended; separate from correctness."""
    answer: str | None
    correct: bool | None
    """The grader's verdict; null when there was no answer to grade."""
    grade_reason: str
    turns: int
    """Model requests the run made (failed ones included)."""
    tool_calls: int
    parse_failures: int
    """Replies whose action or answer could not be read."""
    repeated_actions: int
    """Tool calls identical to an earlier one in the same run."""
    retries: int
    """HTTP attempts beyond the first, across the run's requests."""
    tokens_in: int
    """Input tokens as the endpoint reported them (cached ones included)."""
    tokens_out: int
    tokens_cached: int
    first_correct: bool | None = None
    """For patterns that answer more than once (reflexion): whether the first answer was
    correct; with ``correct`` it shows wrong-to-right and right-to-wrong changes."""
    metrics: dict[str, float] = {}
    """Pattern-specific measurements, e.g. agreement, candidates, nodes_expanded."""
    cost_usd: float | None
    """From the price table at run time; null when the model has no price."""
    latency_s: float
    error: str | None
    started_at: str
    """UTC, ISO 8601."""
