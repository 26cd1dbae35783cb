"""Trace events: every kind of event a run's trace holds, one typed model each.

The counting client, the patterns, their wrappers and the runner emit these models
(``RunContext.emit``); the runner counts them by type; the failure rules and the report
read ``traces.jsonl`` back through the same models, with ``parse_event``. ``Event`` is
their union, told apart by ``kind``.

On disk (docs/records.md) an event is ``t``, ``kind``, then the fields its emitter set,
in the order declared here; a field the emitter left at its default is not written, so
every kind is written as it always was. Long texts are cut there, and only there (with
``cut``'s marker): a check that reads the live trace (the evidence check) sees whole
tool results.

Older traces read. A field added later has a default (``api_error``'s ``retries``,
``proposal_dropped``'s ``reason`` and ``text``; a request's ``tool_choice``, ``top_p``
and ``seed`` and a response's ``from_cache`` may be absent; a request's ``reasoning_effort``
and ``thinking_budget`` are written only when set), a field no longer written
is still declared (``proposal_dropped``'s ``truncated``), and a kind this version does
not write reads as an ``OtherEvent`` keeping every field: one no longer written
(reflexion's ``attempt``, tot's ``expand``) or one a later version added. A field this
version does not know on a kind it knows is refused, as in records.

Cheap while live: request and response events hold the chat-completions wire JSON of
their messages, built once a run per message by the counting client (requests that repeat
the conversation share it) and made without validation (``TraceEvent.trusted``), since our
own code built them; the small events of patterns are validated as they are made, which
costs less than ``model_construct``. What is read from disk is validated whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Union, get_args

from pydantic import Discriminator, Tag, TypeAdapter, ValidationError

from loopbench.harness.errors import BadInput
from loopbench.harness.event_models.base import (
    CUT,
    MAX_TOOL_CALLS,
    OBSERVATION,
    OtherEvent,
    TracedRequest,
    TracedResponse,
    TracedUsage,
    TraceEvent,
    WireFunction,
    WireMessage,
    WireToolCall,
    cut,
    cut_message,
    question_at,
)
from loopbench.harness.event_models.patterns import (
    AttemptUnfinishedEvent,
    CheckEvent,
    CritiqueEvent,
    DecompositionEvent,
    LevelEvent,
    OwnTestsEvent,
    PhasePlanEvent,
    PhaseStatusEvent,
    PlanEvent,
    PlannedCall,
    PlannedPhase,
    PlannedStep,
    ProposalDroppedEvent,
    ProposalEvent,
    ReplanEvent,
    ReplanFailedEvent,
    RevisionUnfinishedEvent,
    StageEvent,
    StepFailedEvent,
    StepStatus,
    StepStatusEvent,
    TaskStatusEvent,
    VerdictEvent,
    VoteEvent,
)
from loopbench.harness.event_models.run import (
    FINAL_ANSWER,
    AnswerEvent,
    AnswerRole,
    ApiErrorEvent,
    FinishEvent,
    GradingEvent,
    LimitReachedEvent,
    ParseFailureEvent,
    PatternErrorEvent,
    RepeatedActionEvent,
    RequestEvent,
    ResponseEvent,
    ToolCallEvent,
)

__all__ = [
    "CUT",
    "FINAL_ANSWER",
    "KINDS",
    "MAX_TOOL_CALLS",
    "OBSERVATION",
    "AnswerEvent",
    "AnswerRole",
    "ApiErrorEvent",
    "AttemptUnfinishedEvent",
    "CheckEvent",
    "CritiqueEvent",
    "DecompositionEvent",
    "Event",
    "FinishEvent",
    "GradingEvent",
    "LevelEvent",
    "LimitReachedEvent",
    "OtherEvent",
    "OwnTestsEvent",
    "ParseFailureEvent",
    "PatternErrorEvent",
    "PhasePlanEvent",
    "PhaseStatusEvent",
    "PlanEvent",
    "PlannedCall",
    "PlannedPhase",
    "PlannedStep",
    "ProposalDroppedEvent",
    "ProposalEvent",
    "RepeatedActionEvent",
    "ReplanEvent",
    "ReplanFailedEvent",
    "RequestEvent",
    "ResponseEvent",
    "RevisionUnfinishedEvent",
    "StageEvent",
    "StepFailedEvent",
    "StepStatus",
    "StepStatusEvent",
    "TaskStatusEvent",
    "ToolCallEvent",
    "TraceError",
    "TraceEvent",
    "TracedRequest",
    "TracedResponse",
    "TracedUsage",
    "VerdictEvent",
    "VoteEvent",
    "WireFunction",
    "WireMessage",
    "WireToolCall",
    "cut",
    "cut_message",
    "parse_event",
    "parse_events",
    "question_at",
]

Event = (
    RequestEvent
    | ResponseEvent
    | ApiErrorEvent
    | ToolCallEvent
    | RepeatedActionEvent
    | ParseFailureEvent
    | FinishEvent
    | AnswerEvent
    | LimitReachedEvent
    | PatternErrorEvent
    | GradingEvent
    | PlanEvent
    | ReplanEvent
    | StepStatusEvent
    | ReplanFailedEvent
    | StepFailedEvent
    | CheckEvent
    | OwnTestsEvent
    | AttemptUnfinishedEvent
    | CritiqueEvent
    | RevisionUnfinishedEvent
    | VerdictEvent
    | VoteEvent
    | LevelEvent
    | ProposalEvent
    | ProposalDroppedEvent
    | DecompositionEvent
    | PhasePlanEvent
    | PhaseStatusEvent
    | TaskStatusEvent
    | StageEvent
    | OtherEvent
)
#: Each kind this version writes, and its model.
KINDS: dict[str, type[TraceEvent]] = {
    cls.model_fields["kind"].default: cls for cls in get_args(Event) if cls is not OtherEvent
}


def _kind(value: Any) -> str:
    kind = value.get("kind") if isinstance(value, Mapping) else getattr(value, "kind", None)
    # guard: unknown-kind-reads-as-generic
    return kind if isinstance(kind, str) and kind in KINDS else "other"


def _adapter() -> TypeAdapter[Event]:
    """A pydantic union of the event models, each tagged with its kind; any other kind is
    told ``other`` and read as an ``OtherEvent``."""
    tagged = [Annotated[cls, Tag(kind)] for kind, cls in KINDS.items()]
    tagged.append(Annotated[OtherEvent, Tag("other")])
    union: Any = Union[tuple(tagged)]  # noqa: UP007  # built at run time, from Event's members
    return TypeAdapter(Annotated[union, Discriminator(_kind)])


_EVENT = _adapter()


def parse_event(data: Mapping[str, Any]) -> Event:
    """An event as ``traces.jsonl`` holds it, validated into its model (``OtherEvent`` for a
    kind this version does not write); a ``pydantic.ValidationError`` if it is not one."""
    return _EVENT.validate_python(data)


class TraceError(BadInput):
    """A trace line that does not hold the events the harness writes."""


def parse_events(data: object) -> list[Event]:
    """A trace line's ``events``, validated; ``TraceError`` naming the first event that is
    not one, and what is wrong with it."""
    if not isinstance(data, list):
        raise TraceError("its events are not a list")
    events = []
    for number, event in enumerate(data, start=1):
        kind = event.get("kind") if isinstance(event, Mapping) else None
        if not isinstance(kind, str):
            raise TraceError(f"event {number} has no kind")
        try:
            events.append(parse_event(event))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"][1:]) or "the event"
            raise TraceError(
                f"event {number} ({kind}) is not as the harness writes it: {where}: {first['msg']}"
            ) from None
    return events
