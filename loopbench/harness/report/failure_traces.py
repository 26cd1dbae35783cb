"""Each run's trace read back from ``traces.jsonl`` as a ``RunTrace``: what the rules read.

The events are read through ``loopbench.harness.events``, the models the harness writes them with;
a traces file that does not hold them is refused, naming the line and the event. Apart
from the rules (``loopbench.harness.report.failures``) because reading the harness's trace format
is one job and judging a run another; the report's run list reads traces without the rules.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from loopbench.harness.events import (
    CUT,
    Event,
    RequestEvent,
    ResponseEvent,
    ToolCallEvent,
    TraceError,
    parse_events,
)
from loopbench.harness.results.reading import TRACES, ResultsError, json_line, run_id_in

__all__ = ["CUT", "Reply", "RunTrace", "TraceError", "read_traces"]


@dataclass(frozen=True)
class Reply:
    """One model reply: its text and the tool calls it asked for (ids left out)."""

    text: str
    calls: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class RunTrace:
    """What the rules read of one run's trace events."""

    question: str
    """The question of the run's first request."""
    actions: tuple[ToolCallEvent, ...]
    replies: tuple[Reply, ...]

    @classmethod
    def of(cls, events: Sequence[Event]) -> RunTrace:
        requests = [e for e in events if isinstance(e, RequestEvent)]
        replies = []
        for event in events:
            if isinstance(event, ResponseEvent):
                message = event.response["message"]
                calls = tuple(
                    (function["name"], function["arguments"])
                    for call in message.get("tool_calls", [])
                    if (function := call.get("function")) is not None
                )
                replies.append(Reply(message["content"] or "", calls))
        return cls(
            requests[0].question if requests else "",
            tuple(e for e in events if isinstance(e, ToolCallEvent)),
            tuple(replies),
        )

    @property
    def cut(self) -> bool:
        """Whether the question or a tool result was cut on disk: numbers may be missing."""
        return any(CUT.search(text) for text in (self.question, *(a.result for a in self.actions)))


def read_traces(folder: Path | str, wanted: Collection[str] | None = None) -> dict[str, RunTrace]:
    """Every run's trace in a results folder, by run id, or only those of ``wanted`` run
    ids; none when it has no traces.jsonl.

    A line cut short by a kill ends the reading, as for records; any other line that is not
    a trace is refused, naming it. With ``wanted``, a line that names another run as the
    harness writes it is skipped unread.
    """
    path = Path(folder) / TRACES
    if not path.is_file():
        return {}
    traces: dict[str, RunTrace] = {}
    try:
        with path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                if not raw.endswith(b"\n"):
                    break
                if not raw.strip() or (wanted is not None and _names_another(raw, wanted)):
                    continue
                run_id, trace = _trace_line(path, number, raw)
                if wanted is None or run_id in wanted:
                    traces[run_id] = trace
    except OSError as exc:
        raise ResultsError(f"{path}: cannot be read ({exc.strerror})") from None
    return traces


def _names_another(raw: bytes, wanted: Collection[str]) -> bool:
    found = run_id_in(raw)
    # guard: only-traces-runs-not-correct
    return found is not None and found not in wanted


def _trace_line(path: Path, number: int, raw: bytes) -> tuple[str, RunTrace]:
    try:
        line = json_line(raw)
        if not isinstance(line, dict) or not isinstance(line.get("run_id"), str):
            raise TraceError("not a JSON object with a run_id")
        return line["run_id"], RunTrace.of(parse_events(line.get("events")))
    except (ValueError, RecursionError) as exc:  # JSON, UTF-8 and TraceError alike; too deep
        raise ResultsError(
            f"{path}:{number}: damaged trace line ({exc}); repair or remove that line, or "
            f"move {TRACES} aside to label the runs from their records alone"
        ) from None
