"""The trace of one run: every request, response, tool call and pattern event, in order.

Events are the typed models of ``loopbench.harness.events``, kept as they were emitted while the
run is live and written as JSON once, when the runner writes the run's trace line; long
texts are cut then (``max_text``), never in what the run itself reads.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, TypeVar

from loopbench.harness.event_models.base import MessageCuts
from loopbench.harness.events import AnswerEvent, AnswerRole, Event, TraceEvent, cut

__all__ = ["MAX_TEXT", "Trace", "cut"]

E = TypeVar("E", bound=TraceEvent)

#: The most characters of one message's text (or one tool call's arguments) a trace keeps.
MAX_TEXT = 100_000


@dataclass
class Trace:
    started: float = field(default_factory=time.perf_counter)
    events: list[Event] = field(default_factory=list)
    #: Longer texts are cut in the trace, with a marker; what is graded is never cut.
    max_text: int = MAX_TEXT

    def emit(self, event: Event) -> None:
        """Add ``event``, stamped with the time since the run started."""
        # Into the field itself: pydantic's assignment hook would cost more than the rest of
        # tracing a call, and ``t`` is written whether or not it was set (``on_disk``).
        event.__dict__["t"] = time.perf_counter() - self.started
        self.events.append(event)

    def answer(self, role: AnswerRole, answer: str, accepted: bool | None = None) -> AnswerEvent:
        """Trace an answer given on the way; a check that judges it later sets ``accepted``."""
        event = AnswerEvent(role=role, answer=answer, accepted=accepted)
        self.emit(event)
        return event

    def of(self, kind: type[E]) -> list[E]:
        """Every event of type ``kind``, in order."""
        return [event for event in self.events if isinstance(event, kind)]

    def count(self, kind: type[TraceEvent]) -> int:
        return sum(isinstance(event, kind) for event in self.events)

    def answers(self) -> list[AnswerEvent]:
        """Every answer traced with ``answer``, in order."""
        return self.of(AnswerEvent)

    def to_json(self) -> list[dict[str, Any]]:
        """The events as ``traces.jsonl`` holds them."""
        max_text = self.max_text
        cuts = MessageCuts(max_text)
        return [event.on_disk(max_text, cuts) for event in self.events]
