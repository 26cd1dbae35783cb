"""Each run's trace read back from ``traces.jsonl`` as a typed ``RunTrace``.

The events read back are typed models (``ToolCallEvent``, ``Reply``); a traces file that
does not hold them is refused, naming the line. Apart from the rules
(``harness.report.failures``) because reading the harness's trace format is one job and
judging a run another; the report's run list reads traces without the rules.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from harness.store import TRACES, ResultsError, run_id_in
from tasks.tools import fold

#: The marker ``harness.trace.cut`` leaves where a long text was cut on disk.
CUT = re.compile(r"\[\.\.\. \d+ more characters cut on disk\]$")


class TraceError(ValueError):
    """A trace line that does not hold the events the harness writes."""


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True)


class ToolCallEvent(_Event):
    """A ``tool_call`` event: one action and what it returned (the real result, even when
    the repeated-action guard showed the model its warning instead)."""

    tool: str
    arguments: str | dict[str, Any] = ""
    ok: bool
    result: str = ""

    @property
    def args(self) -> dict[str, Any] | str:
        """The arguments as an object when they are one (as JSON text or as written)."""
        if isinstance(self.arguments, dict):
            return self.arguments
        try:
            parsed = json.loads(self.arguments)
        except json.JSONDecodeError:
            return self.arguments.strip()
        return parsed if isinstance(parsed, dict) else self.arguments.strip()

    @property
    def key(self) -> tuple[str, str]:
        """The action as compared for repeats: the tool and its arguments, canonical."""
        args = self.args
        return (self.tool, json.dumps(args, sort_keys=True, default=str))

    @property
    def entity(self) -> str:
        """What a look-up asked for: its argument values as text, folded."""
        args = self.args
        text = " ".join(str(v) for v in args.values()) if isinstance(args, dict) else args
        return fold(text)


class _Function(_Event):
    name: str
    arguments: str


class _Call(_Event):
    function: _Function | None = None  # None: the marker of tool calls cut on disk


class _Message(_Event):
    role: str
    content: str | None = None
    tool_calls: list[_Call] = []


class _Request(_Event):
    messages: list[_Message] = []


class _Response(_Event):
    message: _Message


@dataclass(frozen=True)
class Reply:
    """One model reply: its text and the tool calls it asked for (ids left out)."""

    text: str
    calls: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class RunTrace:
    """What the rules read of one run's trace events."""

    question: str
    actions: tuple[ToolCallEvent, ...]
    replies: tuple[Reply, ...]

    @classmethod
    def of(cls, events: Sequence[Mapping[str, Any]]) -> RunTrace:
        """Read ``events`` as ``traces.jsonl`` holds them; ``TraceError`` if they are not."""
        question: str | None = None
        actions: list[ToolCallEvent] = []
        replies: list[Reply] = []
        for number, event in enumerate(events, start=1):
            kind = event.get("kind") if isinstance(event, Mapping) else None
            try:
                if kind == "tool_call":
                    actions.append(ToolCallEvent.model_validate(event))
                elif kind == "response":
                    message = _Response.model_validate(event["response"]).message
                    calls = tuple(
                        (c.function.name, c.function.arguments)
                        for c in message.tool_calls
                        if c.function
                    )
                    replies.append(Reply(message.content or "", calls))
                elif kind == "request" and question is None:
                    question = _question(_Request.model_validate(event["request"]).messages)
                elif not isinstance(kind, str):
                    raise TraceError(f"event {number} has no kind")
            except (ValidationError, KeyError, TypeError) as exc:
                raise TraceError(
                    f"event {number} ({kind}) is not as the harness writes it: {_why(exc)}"
                ) from None
        return cls(question or "", tuple(actions), tuple(replies))

    @property
    def cut(self) -> bool:
        """Whether the question or a tool result was cut on disk: numbers may be missing."""
        return any(CUT.search(text) for text in (self.question, *(a.result for a in self.actions)))


def _question(messages: list[_Message]) -> str:
    """The run's question: the first request's last user message that is not an observation
    (what comes before it, such as a worked example, is not this run's)."""
    asked = [m.content or "" for m in messages if m.role == "user"]
    asked = [text for text in asked if not text.startswith("Observation:")]
    return asked[-1] if asked else ""


def _why(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        return f"{'.'.join(str(p) for p in first['loc']) or 'the event'}: {first['msg']}"
    return f"missing {exc}" if isinstance(exc, KeyError) else str(exc)


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
    return found is not None and found not in wanted


def _trace_line(path: Path, number: int, raw: bytes) -> tuple[str, RunTrace]:
    try:
        line = json.loads(raw)
        if not isinstance(line, dict) or not isinstance(line.get("run_id"), str):
            raise TraceError("not a JSON object with a run_id")
        if not isinstance(line.get("events"), list):
            raise TraceError("its events are not a list")
        return line["run_id"], RunTrace.of(line["events"])
    except ValueError as exc:  # JSON, UTF-8 and TraceError alike
        raise ResultsError(
            f"{path}:{number}: damaged trace line ({exc}); repair or remove that line, or "
            f"move {TRACES} aside to label the runs from their records alone"
        ) from None
