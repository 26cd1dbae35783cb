"""One run's spans: the run, its model calls and its tool calls, as ``ReadableSpan``s.

Names and attributes follow the OpenTelemetry GenAI semantic conventions where they
define one (``invoke_agent``, ``chat``, ``execute_tool``, ``gen_ai.*``); what only
loopbench has is under ``loopbench.*``. Imported only by ``loopbench.harness.results.otlp``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from loopbench.harness.events import (
    ApiErrorEvent,
    Event,
    RequestEvent,
    ResponseEvent,
    ToolCallEvent,
)
from loopbench.harness.results.reading import run_key
from loopbench.harness.results.records import RunRecord

NS = 1_000_000_000
SAMPLED = TraceFlags(TraceFlags.SAMPLED)


def nanoseconds(iso: str) -> int:
    """An ISO 8601 time as nanoseconds since the epoch; 0 when there is none."""
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return 0
    return int(moment.timestamp() * 1_000_000) * 1000


def identity(record: RunRecord) -> str:
    """What a run's ids are digests of: its run_id, or what identifies it without one."""
    return record.run_id or json.dumps(run_key(record))


def trace_id(run: str) -> int:
    """A trace id (16 bytes, never 0) from a run's identity: the same on every export."""
    return int.from_bytes(hashlib.sha256(f"{run}/trace".encode()).digest()[:16], "big") or 1


def span_id(run: str, part: str) -> int:
    """A span id (8 bytes, never 0) from a run's identity and the span's place in it."""
    return int.from_bytes(hashlib.sha256(f"{run}/{part}".encode()).digest()[:8], "big") or 1


@dataclass(frozen=True)
class _Span:
    """A span of the run before it is placed in its trace: ``part`` is its place in the run
    (what its id is a digest of), ``begin`` and ``finish`` are seconds from the run's start."""

    name: str
    part: str
    begin: float
    finish: float
    attributes: dict[str, Any]
    kind: SpanKind = SpanKind.INTERNAL
    status: Status | None = None


def run_spans(
    record: RunRecord,
    events: list[Event],
    resource: Resource,
    scope: InstrumentationScope,
    created: int,
) -> list[ReadableSpan]:
    """The run's root span, then a span per model call and per tool call, in trace order.

    ``created`` (the experiment's creation) stands for the start of a run recorded
    without ``started_at``."""
    run = identity(record)
    trace = trace_id(run)
    start = nanoseconds(record.started_at) or created
    last = max((event.t for event in events), default=0.0)
    ended = None if record.status == "answered" else Status(StatusCode.ERROR, record.status)
    root = _Span(
        f"invoke_agent {record.arm}",
        "run",
        0.0,
        max(record.latency_s, last),
        _run_attributes(record),
        status=ended,
    )

    def placed(span: _Span, parent: SpanContext | None) -> ReadableSpan:
        return ReadableSpan(
            name=span.name,
            context=SpanContext(trace, span_id(run, span.part), False, SAMPLED),
            parent=parent,
            resource=resource,
            attributes=span.attributes,
            kind=span.kind,
            status=span.status or Status(StatusCode.UNSET),
            start_time=start + int(span.begin * NS),
            end_time=start + int(max(span.begin, span.finish) * NS),
            instrumentation_scope=scope,
        )

    root_span = placed(root, None)
    return [
        root_span,
        *(placed(child, root_span.context) for child in _children(record, events, last)),
    ]


def _children(record: RunRecord, events: list[Event], last: float) -> list[_Span]:
    """A span per model call, from its request to its response or error, and per tool call,
    from the event before it; a call never answered (the run ended first) ends at ``last``,
    the run's last event."""
    children: list[_Span] = []
    requests: dict[int, RequestEvent] = {}
    before = 0.0  # when the event before this one happened: a tool call's start
    for event in events:
        if isinstance(event, RequestEvent):
            requests[event.call] = event
        elif isinstance(event, ResponseEvent | ApiErrorEvent):
            asked = requests.pop(event.call, None)
            begin = asked.t if asked else before
            children.append(_model_call(record.model, event.call, asked, event, begin, event.t))
        elif isinstance(event, ToolCallEvent):
            children.append(_tool_call(event, f"tool/{len(children)}", before))
        before = event.t
    for call, asked in requests.items():
        children.append(_model_call(record.model, call, asked, None, asked.t, last))
    return children


def _model_call(
    model: str,
    call: int,
    asked: RequestEvent | None,
    answered: ResponseEvent | ApiErrorEvent | None,
    begin: float,
    finish: float,
) -> _Span:
    attributes = _call_attributes(asked, answered, model)
    failed = None
    if isinstance(answered, ApiErrorEvent):
        failed = Status(StatusCode.ERROR, answered.error)
    name = f"chat {attributes['gen_ai.request.model']}"
    return _Span(name, f"call/{call}", begin, finish, attributes, SpanKind.CLIENT, failed)


def _tool_call(event: ToolCallEvent, part: str, begin: float) -> _Span:
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": event.tool,
        "loopbench.step": event.step,
        "loopbench.tool.ok": event.ok,
    }
    failed = None if event.ok else Status(StatusCode.ERROR, "the tool failed")
    return _Span(f"execute_tool {event.tool}", part, begin, event.t, attributes, status=failed)


def _run_attributes(record: RunRecord) -> dict[str, Any]:
    """What identifies the run and how it ended; a value the record does not have is left
    out (OpenTelemetry attributes have no null)."""
    values: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": record.arm,
        "gen_ai.request.model": record.model,
        "loopbench.run_id": record.run_id,
        "loopbench.arm": record.arm,
        "loopbench.pattern": record.pattern,
        "loopbench.model": record.model,
        "loopbench.task_set": record.task_set,
        "loopbench.task_id": record.task_id,
        "loopbench.repeat": record.repeat,
        "loopbench.status": record.status,
        "loopbench.correct": record.correct,
        "loopbench.cost_usd": record.cost_usd,
        "loopbench.turns": record.turns,
        "loopbench.tool_calls": record.tool_calls,
        "loopbench.tokens_in": record.tokens_in,
        "loopbench.tokens_out": record.tokens_out,
        "loopbench.tokens_reasoning": record.tokens_reasoning,
        "loopbench.tokens_cache_write": record.tokens_cache_write,
        "loopbench.latency_s": record.latency_s,
        "loopbench.ttft_s": record.ttft_s,
        # Only a judge's runs hold these (the judge's own calls, apart from the run's).
        "loopbench.grade_status": record.grade_status,
        "loopbench.judge_tokens_in": record.judge_tokens_in,
        "loopbench.judge_tokens_out": record.judge_tokens_out,
        "loopbench.judge_cost_usd": record.judge_cost_usd,
    }
    return {key: value for key, value in values.items() if value is not None}


def _call_attributes(
    asked: RequestEvent | None, answered: ResponseEvent | ApiErrorEvent | None, model: str
) -> dict[str, Any]:
    """A model call's GenAI attributes: the request's settings, the response's usage and
    finish reason, or the error the endpoint gave."""
    request = asked.request if asked else None
    values: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": request["model"] if request else model,
    }
    if request:
        values["gen_ai.request.temperature"] = request["temperature"]
        values["gen_ai.request.top_p"] = request.get("top_p")
        values["gen_ai.request.seed"] = request.get("seed")
        values["gen_ai.request.max_tokens"] = request["max_output_tokens"]
        # The GenAI conventions name no reasoning setting yet: loopbench's own names.
        values["loopbench.request.reasoning_effort"] = request.get("reasoning_effort")
        values["loopbench.request.thinking_budget"] = request.get("thinking_budget")
    if isinstance(answered, ResponseEvent):
        response = answered.response
        values["gen_ai.usage.input_tokens"] = response["usage"]["input"]
        values["gen_ai.usage.output_tokens"] = response["usage"]["output"]
        values["gen_ai.response.finish_reasons"] = [response["finish_reason"]]
        values["loopbench.tokens_cached"] = response["usage"]["cached"]
        # The GenAI conventions' names for the shares; absent when none was reported.
        values["gen_ai.usage.cache_read.input_tokens"] = response["usage"]["cached"] or None
        values["gen_ai.usage.cache_creation.input_tokens"] = response["usage"].get("cache_write")
        values["gen_ai.usage.reasoning.output_tokens"] = response["usage"].get("reasoning")
        values["loopbench.retries"] = response["retries"]
        values["loopbench.from_cache"] = response.get("from_cache", False)
        # The GenAI conventions' name (experimental): seconds to the first chunk streamed.
        values["gen_ai.response.time_to_first_chunk"] = response.get("ttft_s")
    elif isinstance(answered, ApiErrorEvent):
        values["error.type"] = str(answered.status) if answered.status else "api_error"
        values["loopbench.retries"] = answered.retries
    if answered is not None:
        values["loopbench.call"] = answered.call
    return {key: value for key, value in values.items() if value is not None}
