"""A results folder's runs as OpenTelemetry spans (``loopbench export --format otlp``).

Each run is a trace: a root span carrying what identifies the run and how it ended, a
child span per model call with the GenAI semantic conventions' ``gen_ai.*`` attributes,
and a child span per tool call. The spans are the SDK's own ``ReadableSpan``s, encoded
by the OTLP exporter's encoder and sent by its OTLP/HTTP exporter: nothing here writes
OTLP by hand.

Ids are digests of the run's id, so exporting the same folder twice gives the same
traces (a viewer replaces them rather than doubling them). Times are the run's
``started_at`` plus each event's ``t`` (seconds from the run's start).

What goes out is what records and traces hold, nothing else: no message texts, no tool
results, no environment. The OpenTelemetry packages are the ``otlp`` extra, imported
only here, so no other command pays for them.
"""

from __future__ import annotations

import base64
import json
import logging
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from loopbench.harness.errors import BadInput
from loopbench.harness.events import Event, TraceError, parse_events
from loopbench.harness.install_hints import install_command
from loopbench.harness.results.reading import EXPERIMENT, ResultsError, json_line, read_records
from loopbench.harness.results.reading import TRACES as TRACES  # named in what export says
from loopbench.harness.results.records import RunRecord

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan

#: What to install when the extra is missing.
INSTALL = install_command("otlp")
#: The package of the ``otlp`` extra a module comes in, by the module's name (or a
#: package above it), to name the one missing.
PACKAGES = {
    "google": "protobuf",
    "opentelemetry": "opentelemetry-sdk",
    "opentelemetry.sdk": "opentelemetry-sdk",
    "opentelemetry.exporter": "opentelemetry-exporter-otlp-proto-http",
}
#: The instrumentation scope every span is reported under.
SCOPE = "loopbench"
#: The most spans one OTLP/HTTP request carries (and one part of the JSON file): receivers
#: cap a request's size (4 MiB by default in the OpenTelemetry Collector), and a span here
#: is under 1 kB.
SPANS_PER_REQUEST = 2_000


class OtlpError(BadInput):
    """An export as OpenTelemetry traces that cannot be done as asked."""


class OtlpMissing(OtlpError):
    """The ``otlp`` extra is not installed: what to install."""


def require_otlp() -> None:
    """Import the OpenTelemetry packages once; ``OtlpMissing`` saying what to install."""
    try:
        import google.protobuf.json_format  # noqa: F401
        import opentelemetry.exporter.otlp.proto.http.trace_exporter
        import opentelemetry.sdk.trace  # noqa: F401
    # guard: otlp-without-extra-says-what
    except ImportError as exc:
        raise OtlpMissing(
            f"--format otlp: loopbench's otlp extra is not installed "
            f"({missing_package(exc.name)} is missing); {INSTALL}"
        ) from None


def missing_package(module: str | None) -> str:
    """The package to install for a module that did not import: the ``otlp`` extra's that
    provides it, else the module itself (a dependency of theirs)."""
    name = module or ""
    while name and name not in PACKAGES:
        name = name.rpartition(".")[0]
    return PACKAGES[name] if name else f"the module {module or '(unnamed)'}"


@dataclass
class FolderSpans:
    """A results folder's spans, and what its runs had to make them of."""

    spans: list[ReadableSpan]
    runs: int
    """Runs as ``table`` counts them (records superseded by ``--retry-errors`` left out)."""
    traced: bool
    """Whether the folder has a traces.jsonl."""
    untraced: int
    """Runs without a trace line: a root span each, alone."""


def folder_spans(folder: Path) -> FolderSpans:
    """Every counted run's spans: the traced runs in traces.jsonl's order, then the others.
    Each trace line is read, turned into spans and dropped, so a large folder's traces
    are never held whole."""
    records = read_records(folder)
    make = _span_maker(_experiment(folder))
    spans: list[ReadableSpan] = []
    done = [False] * len(records)
    path = folder / TRACES
    if path.is_file():
        at = {record.run_id: index for index, record in enumerate(records) if record.run_id}
        for number, line in _trace_lines(path):
            index = at.pop(line["run_id"], None)
            if index is None:
                continue  # a superseded run's, or a run this folder no longer counts
            try:
                events = parse_events(line.get("events"))
            # guard: otlp-damaged-trace-line-named
            except TraceError as exc:
                raise ResultsError(f"{path}:{number}: damaged trace line ({exc})") from None
            spans += make(records[index], events)
            done[index] = True
    for index, record in enumerate(records):
        if not done[index]:
            spans += make(record, [])
    return FolderSpans(spans, len(records), path.is_file(), done.count(False))


def _experiment(folder: Path) -> dict[str, Any]:
    """experiment.json's fields, for the spans' resource; none when it cannot be read (the
    runs' own records are what the spans carry)."""
    try:
        meta = json.loads((folder / EXPERIMENT).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def _trace_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each complete line of traces.jsonl and its number; a line a kill cut short ends it."""
    try:
        with path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                # guard: otlp-trace-line-kill-cut
                if not raw.endswith(b"\n"):
                    return
                if not raw.strip():
                    continue
                try:
                    line = json_line(raw)
                # guard: trace-line-nested-too-deep-2
                except (ValueError, RecursionError) as exc:
                    raise ResultsError(f"{path}:{number}: not a JSON line ({exc})") from None
                if not isinstance(line, dict) or not isinstance(line.get("run_id"), str):
                    raise ResultsError(f"{path}:{number}: not a JSON object with a run_id")
                yield number, line
    except OSError as exc:
        raise ResultsError(f"{path}: cannot be read ({exc.strerror})") from None


def _span_maker(
    experiment: dict[str, Any],
) -> Callable[[RunRecord, list[Event]], list[ReadableSpan]]:
    """What turns a run into its spans, under one resource naming the experiment."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope

    from loopbench.harness.results.otlp_spans import nanoseconds, run_spans

    resource = Resource(
        {
            "service.name": "loopbench",
            "loopbench.experiment_id": str(experiment.get("experiment_id", "")),
            "loopbench.task_set": str(experiment.get("task_set", "")),
        }
    )
    scope = InstrumentationScope(SCOPE)
    created = nanoseconds(str(experiment.get("created_at", "")))
    return lambda record, events: run_spans(record, events, resource, scope, created)


def encode(spans: Sequence[ReadableSpan]) -> Any:
    """The ExportTraceServiceRequest of ``spans``, as the OTLP exporter encodes it."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    return encode_spans(spans)


def write_json(spans: Sequence[ReadableSpan], handle: IO[str]) -> None:
    """OTLP JSON (the OTLP specification's JSON encoding) of the ExportTraceServiceRequest
    of ``spans``, on one line: protobuf's JSON mapping, but for what OTLP/JSON says
    otherwise: trace and span ids as hex, not base64, and enums as integers.

    Encoded ``SPANS_PER_REQUEST`` at a time, as ``send`` sends them, and written as the
    merge of those requests (their ``resourceSpans`` one after the other, as protobuf
    merges a repeated field), so a large folder is never held encoded whole."""
    from google.protobuf.json_format import MessageToDict

    handle.write('{"resourceSpans":[')
    for start in range(0, len(spans), SPANS_PER_REQUEST):
        request = encode(spans[start : start + SPANS_PER_REQUEST])
        for index, resource in enumerate(request.resource_spans):
            part = MessageToDict(resource, use_integers_for_enums=True)
            for scope in part.get("scopeSpans", ()):
                for span in scope.get("spans", ()):
                    _hex_ids(span)
                    for link in span.get("links", ()):
                        _hex_ids(link)
            handle.write("," if start or index else "")
            handle.write(json.dumps(part, ensure_ascii=False, separators=(",", ":")))
    handle.write("]}\n")


#: The fields protobuf's JSON mapping writes as base64 and OTLP/JSON as hex.
ID_FIELDS = ("traceId", "spanId", "parentSpanId")


def _hex_ids(message: dict[str, Any]) -> None:
    for name in ID_FIELDS:
        if name in message:
            message[name] = base64.b64decode(message[name]).hex()


def traces_url(endpoint: str) -> str:
    """The URL spans are posted to: ``endpoint`` as given, or with OTLP/HTTP's
    ``/v1/traces`` when it names no path (``http://localhost:4318``)."""
    scheme, _, rest = endpoint.partition("://")
    # guard: otlp-endpoint-not-http-s
    if scheme not in ("http", "https") or not rest.strip("/"):
        raise OtlpError(
            f"--otlp-endpoint {endpoint}: not an http:// or https:// URL, "
            "e.g. http://localhost:4318"
        )
    return endpoint if "/" in rest.rstrip("/") else f"{endpoint.rstrip('/')}/v1/traces"


class SendFailed(OtlpError):
    """The receiver could not be reached, or refused the spans."""


def send(spans: Sequence[ReadableSpan], url: str, timeout: float | None = None) -> int:
    """Post ``spans`` to an OTLP/HTTP receiver with the SDK's exporter, in requests of at
    most ``SPANS_PER_REQUEST``; how many requests. ``SendFailed`` with the exporter's
    reason when one is not accepted (after the exporter's own retries); the exporter's
    timeout is ``timeout`` or ``OTEL_EXPORTER_OTLP_TRACES_TIMEOUT``, and its headers
    (a viewer's key) come from ``OTEL_EXPORTER_OTLP_TRACES_HEADERS``."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    reasons = _Reasons()
    logger = logging.getLogger("opentelemetry.exporter")
    logger.addHandler(reasons)
    propagated, logger.propagate = logger.propagate, False  # its errors are said once, below
    exporter = OTLPSpanExporter(endpoint=url, timeout=timeout)
    try:
        for sent, start in enumerate(range(0, len(spans), SPANS_PER_REQUEST)):
            batch = spans[start : start + SPANS_PER_REQUEST]
            reasons.said.clear()  # what an earlier, accepted request went through
            # guard: otlp-spans-receiver-did-not
            if exporter.export(batch) is not SpanExportResult.SUCCESS:
                earlier = f" ({sent} earlier requests were accepted)" if sent else ""
                raise SendFailed(
                    f"--otlp-endpoint {url}: the spans were not accepted: {reasons.reason}"
                    f"{earlier}; give the URL of a running OTLP/HTTP receiver "
                    "(e.g. http://localhost:4318)"
                )
        return -(-len(spans) // SPANS_PER_REQUEST)
    finally:
        exporter.shutdown()  # type: ignore[no-untyped-call]  # the SDK leaves it unannotated
        logger.removeHandler(reasons)
        logger.propagate = propagated


class _Reasons(logging.Handler):
    """What the exporter logged while sending: why a send failed, in its words."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.said: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.said.append(record.getMessage().splitlines()[0])

    @property
    def reason(self) -> str:
        """The system's error when one was logged (its retries log it, then only "timeout"),
        else the exporter's last message."""
        for message in reversed(self.said):
            if found := _OS_ERROR.search(message):
                return found.group(0)
        return self.said[-1].rstrip(".") if self.said else "the exporter gave no reason"


#: An operating system's error as requests words it: ``[Errno 111] Connection refused``.
_OS_ERROR = re.compile(r"\[Errno -?\d+\] [^'\")]+")
