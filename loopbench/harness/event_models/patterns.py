"""Each pattern's own events: plans and their steps, checks, critiques, verdicts, votes, the
tree of thought's levels and proposals, goal decomposition's phases and tasks, and where
each stage of a pipeline starts."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import with_config
from typing_extensions import TypedDict

from loopbench.harness.event_models.base import STRICT, TraceEvent


@with_config(STRICT)
class PlannedCall(TypedDict):
    tool: str
    args: dict[str, Any]
    why: str


@with_config(STRICT)
class PlannedStep(TypedDict):
    id: int
    description: str
    depends_on: list[int]


class PlanEvent(TraceEvent):
    """A plan: plan's text (``plan``), rewoo's tool calls or plan_execute's steps (``steps``)."""

    kind: Literal["plan"] = "plan"
    step: int | None = None
    """The call that made it (plan, rewoo)."""
    plan: str | None = None
    steps: list[PlannedCall] | list[PlannedStep] | None = None


class ReplanEvent(TraceEvent):
    """plan_execute's revised plan: the steps left, in dependency order."""

    kind: Literal["replan"] = "replan"
    steps: list[PlannedStep]


StepStatus = Literal["pending", "running", "done", "failed", "skipped"]


class StepStatusEvent(TraceEvent):
    """A plan_execute step changed state."""

    kind: Literal["step_status"] = "step_status"
    id: int
    status: StepStatus
    reason: str | None = None
    """Why it failed or was skipped."""
    result: str | None = None
    """What it found (done)."""
    description: str | None = None
    """What it is to do (pending)."""


class ReplanFailedEvent(TraceEvent):
    """plan_execute's replan gave no usable plan; the old one goes on."""

    kind: Literal["replan_failed"] = "replan_failed"
    status: str
    error: str | None


class StepFailedEvent(TraceEvent):
    """A rewoo step failed: its tool failed, or it refers to a step that did."""

    kind: Literal["step_failed"] = "step_failed"
    step: int
    error: str


class CheckEvent(TraceEvent):
    """Reflexion's check of an attempt."""

    kind: Literal["check"] = "check"
    attempt: int
    failure: str | None
    """What failed, None when the attempt passed."""
    tests: int | None = None
    """0 when the model wrote no tests of its own to check against (check=self_tests)."""
    result: dict[str, Any] | None = None
    """The test suite's result on code, as
    ``loopbench.sandbox.suite_result.SuiteResult.to_json``."""


class OwnTestsEvent(TraceEvent):
    """The tests reflexion had the model write (check=self_tests)."""

    kind: Literal["own_tests"] = "own_tests"
    tests: int
    truncated: bool


class AttemptUnfinishedEvent(TraceEvent):
    """A reflexion retry that gave no answer; the last answer stands."""

    kind: Literal["attempt_unfinished"] = "attempt_unfinished"
    attempt: int
    status: str


class CritiqueEvent(TraceEvent):
    """Reflection's critique of the answer."""

    kind: Literal["critique"] = "critique"
    cycle: int
    needs_refinement: bool
    critique: str


class RevisionUnfinishedEvent(TraceEvent):
    """A critique or rewrite of code that did not finish; the last code stands."""

    kind: Literal["revision_unfinished"] = "revision_unfinished"
    status: str
    error: str | None


class VerdictEvent(TraceEvent):
    """best_of_n's verifier on a candidate."""

    kind: Literal["verdict"] = "verdict"
    candidate: int
    accepted: bool
    reason: str


class VoteEvent(TraceEvent):
    """self_consistency's vote over its samples' answers."""

    kind: Literal["vote"] = "vote"
    answers: list[str]
    winner: str
    agreement: float
    """The winner's votes over the samples drawn."""


class LevelEvent(TraceEvent):
    """A tot level searched: the paths kept for the next."""

    kind: Literal["level"] = "level"
    level: int
    kept: list[list[str]]


class ProposalEvent(TraceEvent):
    """A tot proposal and its score (None: the evaluation could not be read)."""

    kind: Literal["proposal"] = "proposal"
    path: list[str]
    proposal: str
    score: float | None


class ProposalDroppedEvent(TraceEvent):
    """A tot proposal dropped before it was scored."""

    kind: Literal["proposal_dropped"] = "proposal_dropped"
    path: list[str]
    reason: str = ""
    """truncated, duplicate or empty; absent in older traces, which wrote ``truncated``."""
    text: str = ""
    truncated: bool | None = None
    """What was written before ``reason``: whether the proposal was truncated."""


@with_config(STRICT)
class PlannedPhase(TypedDict):
    name: str
    description: str
    tasks: list[str]


class DecompositionEvent(TraceEvent):
    """goal_decomposition's goal and phases."""

    kind: Literal["decomposition"] = "decomposition"
    goal: str
    phases: list[PlannedPhase]


class PhasePlanEvent(TraceEvent):
    """The tasks planned for a phase that came without any."""

    kind: Literal["phase_plan"] = "phase_plan"
    phase: str
    tasks: list[str]
    failure: str | None
    """Why no tasks came back (truncated, unparsed)."""


class PhaseStatusEvent(TraceEvent):
    """A phase not run: it had no tasks and no call was left to plan them."""

    kind: Literal["phase_status"] = "phase_status"
    phase: str
    status: Literal["skipped"]


class TaskStatusEvent(TraceEvent):
    """A goal_decomposition task done or failed."""

    kind: Literal["task_status"] = "task_status"
    phase: str
    task: str
    status: Literal["done", "failed"]


class StageEvent(TraceEvent):
    """A pipeline's stage starts: the events up to the next stage event are its."""

    kind: Literal["stage"] = "stage"
    stage: int
    """Its number, from 1."""
    arm: str
    """The stage as an arm: its pattern and the options it sets (``react_text:guard=on``)."""
