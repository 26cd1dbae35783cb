"""``loopbench export --format otlp`` and ``--otlp-endpoint``: a results folder written by
a real run against the fake server, sent to a loopback OTLP/HTTP receiver and read back
with ``opentelemetry-proto``, and written as OTLP JSON."""

from __future__ import annotations

import base64
import json
import shutil
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from loopbench.harness.cli.main import main
from loopbench.harness.events import ResponseEvent, ToolCallEvent, parse_events
from loopbench.harness.fakes.fake_server import FakeServer
from loopbench.harness.models.local import free_port
from loopbench.harness.results import otlp
from loopbench.harness.results.reading import read_records
from loopbench.harness.results.records import RunRecord
from loopbench.harness.results.store import iter_traces

SECRET = "sk-otlp-secret-never-exported-0001"
HEADER_SECRET = "otlp-viewer-key-never-in-a-span-0002"
#: Three tasks, each arm once: react and react_text call tools.
RUN = ["--quiet", "--limit", "3", "--arm", "direct", "--arm", "react", "--arm", "react_text"]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of real runs (tool calls among them), the key in the environment."""
    out = tmp_path_factory.mktemp("otlp") / "results"
    with FakeServer() as server:
        ran = CliRunner().invoke(
            main,
            ["run", "--base-url", server.base_url, "--model", "fake", "--out", str(out), *RUN],
            env={"LOOPBENCH_API_KEY": SECRET},
            catch_exceptions=False,
        )
    assert ran.exit_code == 0, ran.output
    return out


@dataclass
class Receiver:
    """An OTLP/HTTP receiver on loopback: keeps each POST to /v1/traces, answers ``status``."""

    status: int = 200
    bodies: list[bytes] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    url: str = ""

    def request(self) -> ExportTraceServiceRequest:
        """Every request received, merged into one."""
        merged = ExportTraceServiceRequest()
        for body in self.bodies:
            merged.MergeFrom(ExportTraceServiceRequest.FromString(body))
        return merged


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    got = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            if self.path != "/v1/traces":
                self.send_response(404)
            else:
                got.bodies.append(body)
                got.headers.append({k.lower(): v for k, v in self.headers.items()})
                self.send_response(got.status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    got.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield got
    finally:
        server.shutdown()
        server.server_close()


def export(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(
        main, ["export", *args], env={"LOOPBENCH_API_KEY": SECRET, **(env or {})}
    )


def spans_of(request: ExportTraceServiceRequest) -> list[Span]:
    return [s for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]


def value(attribute: AnyValue) -> Any:
    which = attribute.WhichOneof("value")
    if which == "array_value":
        return [value(v) for v in attribute.array_value.values]
    return getattr(attribute, which)


def attributes(span: Span) -> dict[str, Any]:
    return {a.key: value(a.value) for a in span.attributes}


def by_trace(request: ExportTraceServiceRequest) -> dict[bytes, list[Span]]:
    traces: dict[bytes, list[Span]] = {}
    for span in spans_of(request):
        traces.setdefault(span.trace_id, []).append(span)
    return traces


def test_each_run_is_a_trace_with_a_span_per_model_call_and_per_tool_call(
    results: Path, receiver: Receiver
) -> None:
    done = export(str(results), "--otlp-endpoint", receiver.url)
    assert done.exit_code == 0, done.output
    traces = by_trace(receiver.request())
    records = {r.run_id: r for r in read_records(results)}
    events = {line["run_id"]: parse_events(line["events"]) for line in iter_traces(results)}
    assert len(traces) == len(records) == 9
    assert sum(isinstance(e, ToolCallEvent) for run in events.values() for e in run) > 0
    for spans in traces.values():
        (root,) = [s for s in spans if not s.parent_span_id]
        run = attributes(root)
        record: RunRecord = records[run["loopbench.run_id"]]
        assert (run["loopbench.arm"], run["loopbench.task_id"]) == (record.arm, record.task_id)
        assert (run["loopbench.repeat"], run["loopbench.status"]) == (record.repeat, "answered")
        assert run["loopbench.correct"] is record.correct
        assert run["loopbench.model"] == "fake" and run["loopbench.pattern"] == record.pattern
        assert all(s.parent_span_id == root.span_id for s in spans if s is not root)
        calls = [attributes(s) for s in spans if attributes(s)["gen_ai.operation.name"] == "chat"]
        tools = [s for s in spans if attributes(s)["gen_ai.operation.name"] == "execute_tool"]
        assert (
            len(calls)
            == record.turns
            == sum(isinstance(e, ResponseEvent) for e in events[record.run_id])
        )
        assert sum(c["gen_ai.usage.input_tokens"] for c in calls) == record.tokens_in
        assert sum(c["gen_ai.usage.output_tokens"] for c in calls) == record.tokens_out
        assert all(c["gen_ai.request.model"] == "fake" for c in calls)
        assert all(c["gen_ai.response.finish_reasons"][0] in ("stop", "tool_calls") for c in calls)
        traced_tools = [e.tool for e in events[record.run_id] if isinstance(e, ToolCallEvent)]
        assert [attributes(s)["gen_ai.tool.name"] for s in tools] == traced_tools
        assert len(tools) == record.tool_calls
        assert all(
            root.start_time_unix_nano
            <= s.start_time_unix_nano
            <= s.end_time_unix_nano
            <= root.end_time_unix_nano
            for s in spans
        )
    assert (
        done.stdout == f"sent 9 traces, {len(spans_of(receiver.request()))} spans to "
        f"{receiver.url}/v1/traces (1 request)\n"
    )


def hex_to_base64(request: dict[str, Any]) -> dict[str, Any]:
    """OTLP JSON's hex ids as protobuf's JSON mapping writes bytes, for ``json_format``."""
    for resource in request["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for name in ("traceId", "spanId", "parentSpanId"):
                    if name in span:
                        assert len(span[name]) == (32 if name == "traceId" else 16)
                        span[name] = base64.b64encode(bytes.fromhex(span[name])).decode()
    return request


def parsed(written: dict[str, Any]) -> ExportTraceServiceRequest:
    """An OTLP JSON file's content, parsed by the protobuf classes of opentelemetry-proto."""
    return json_format.Parse(json.dumps(hex_to_base64(written)), ExportTraceServiceRequest())


def test_the_json_file_holds_what_the_receiver_got_and_is_the_same_on_every_export(
    results: Path, receiver: Receiver, tmp_path: Path
) -> None:
    out, again = tmp_path / "spans.json", tmp_path / "again.json"
    done = export(str(results), "-o", str(out), "--otlp-endpoint", receiver.url)
    assert done.exit_code == 0, done.output
    assert export(str(results), "--format", "otlp", "-o", str(again)).exit_code == 0
    assert out.read_bytes() == again.read_bytes()  # ids and times from the records alone
    written = json.loads(out.read_text())
    assert isinstance(written["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["kind"], int)
    spans = parsed(written)
    assert spans == receiver.request() and len(by_trace(spans)) == 9


def test_in_several_requests_the_file_is_their_merge(
    results: Path, receiver: Receiver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(otlp, "SPANS_PER_REQUEST", 7)
    out = tmp_path / "spans.json"
    done = export(str(results), "-o", str(out), "--otlp-endpoint", receiver.url)
    assert done.exit_code == 0, done.output
    sent = receiver.request()
    assert len(receiver.bodies) == -(-len(spans_of(sent)) // 7) > 1
    assert f"({len(receiver.bodies)} requests)" in done.stdout
    written = json.loads(out.read_text())
    assert len(written["resourceSpans"]) == len(receiver.bodies)
    assert parsed(written) == sent and len(by_trace(sent)) == 9


def test_a_folder_without_traces_gives_root_spans_and_says_so_once(
    results: Path, tmp_path: Path
) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copy(results / "runs.jsonl", bare / "runs.jsonl")
    out = tmp_path / "spans.json"
    done = export(str(bare), "--format", "otlp", "-o", str(out))
    assert done.exit_code == 0, done.output
    assert done.stderr.count("note:") == 1 and "has no traces.jsonl" in done.stderr
    spans = spans_of(parsed(json.loads(out.read_text())))
    assert len(spans) == 9 and not any(s.parent_span_id for s in spans)


def test_runs_without_a_trace_line_are_counted_and_said(results: Path, tmp_path: Path) -> None:
    partly = tmp_path / "partly"
    shutil.copytree(results, partly)
    lines = (partly / "traces.jsonl").read_text().splitlines(keepends=True)
    (partly / "traces.jsonl").write_text("".join(lines[1:]))
    out = tmp_path / "spans.json"
    done = export(str(partly), "--format", "otlp", "-o", str(out))
    assert done.exit_code == 0, done.output
    assert done.stderr.count("note:") == 1 and "1 of 9 runs have no line" in done.stderr
    traces = by_trace(parsed(json.loads(out.read_text())))
    lone = [spans for spans in traces.values() if len(spans) == 1]
    assert len(traces) == 9 and len(lone) == 1
    (root,) = lone[0]
    assert attributes(root)["loopbench.run_id"] == json.loads(lines[0])["run_id"]


def test_a_key_in_the_environment_never_reaches_the_spans(
    results: Path, receiver: Receiver, tmp_path: Path
) -> None:
    out = tmp_path / "spans.json"
    header = {"OTEL_EXPORTER_OTLP_TRACES_HEADERS": f"authorization=Bearer {HEADER_SECRET}"}
    done = export(str(results), "-o", str(out), "--otlp-endpoint", receiver.url, env=header)
    assert done.exit_code == 0, done.output
    assert receiver.headers[0]["authorization"] == f"Bearer {HEADER_SECRET}"  # sent as asked
    for secret in (SECRET, HEADER_SECRET):
        assert secret not in out.read_text() and secret not in done.output
        assert all(secret.encode() not in body for body in receiver.bodies)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--format", "otlp", "-o", "/nonexistent/folder/spans.json"], "cannot be written"),
        (["--otlp-endpoint", "localhost:4318"], "not an http:// or https:// URL"),
        (["--otlp-endpoint", "http://127.0.0.1:9", "--format", "csv"], "cannot go with"),
        (["--format", "otlp"], "give -o FILE"),
    ],
    ids=["unwritable", "no-scheme", "endpoint-with-csv", "no-output"],
)
def test_bad_input_is_one_line_and_exit_2(results: Path, args: list[str], said: str) -> None:
    done = export(str(results), *args)
    assert done.exit_code == 2 and said in done.stderr, done.output
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.output


def test_an_unreachable_endpoint_is_one_line_and_exit_2(results: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    # Two seconds: the exporter retries once (logging the system's error), then gives up.
    done = export(
        str(results), "--otlp-endpoint", url, env={"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "2"}
    )
    assert done.exit_code == 2, done.output
    assert done.stderr.startswith(f"Error: --otlp-endpoint {url}/v1/traces: the spans were not")
    assert "Connection refused" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_a_receiver_refusing_the_spans_is_exit_2(results: Path, receiver: Receiver) -> None:
    receiver.status = 400
    done = export(str(results), "--otlp-endpoint", receiver.url)
    assert done.exit_code == 2 and "400" in done.stderr, done.output
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_without_the_extra_it_says_what_to_install(
    results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)
    done = export(str(results), "--format", "otlp", "-o", str(tmp_path / "s.json"))
    assert done.exit_code == 2 and "pip install 'loopbench[otlp]'" in done.stderr, done.output
    assert not (tmp_path / "s.json").exists()


def test_a_damaged_trace_line_is_named(results: Path, tmp_path: Path) -> None:
    damaged = tmp_path / "damaged"
    shutil.copytree(results, damaged)
    lines = (damaged / "traces.jsonl").read_text().splitlines(keepends=True)
    run_id = json.loads(lines[1])["run_id"]
    lines[1] = json.dumps({"run_id": run_id, "events": [{"kind": "response", "call": "x"}]}) + "\n"
    (damaged / "traces.jsonl").write_text("".join(lines))
    done = export(str(damaged), "--format", "otlp", "-o", str(tmp_path / "s.json"))
    assert done.exit_code == 2 and f"{damaged / 'traces.jsonl'}:2: damaged" in done.stderr


def test_a_trace_line_a_kill_cut_short_ends_the_reading(results: Path, tmp_path: Path) -> None:
    killed = tmp_path / "killed"
    shutil.copytree(results, killed)
    with (killed / "traces.jsonl").open("a") as traces:
        traces.write('{"run_id": "cut-short", "events": [{"t": 0.1, "ki')
    done = export(str(killed), "--format", "otlp", "-o", str(tmp_path / "s.json"))
    assert done.exit_code == 0 and "wrote" in done.stdout, done.output


def test_a_failed_call_and_a_failed_run_carry_an_error_status(tmp_path: Path) -> None:
    folder = tmp_path / "failed"
    folder.mkdir()
    record = RunRecord(
        run_id="r1", arm="react", model="m", task_id="t1", repeat=0, status="api_error",
        turns=1, started_at="2026-01-01T00:00:00+00:00", latency_s=2.0,
    )  # fmt: skip
    request = {
        "model": "m", "system": "", "messages": [], "tools": [], "temperature": None,
        "max_output_tokens": None, "stop": [],
    }  # fmt: skip
    events = [
        {"t": 0.5, "kind": "request", "call": 1, "request": request},
        {"t": 1.5, "kind": "api_error", "call": 1, "error": "HTTP 500", "status": 500},
    ]
    (folder / "runs.jsonl").write_text(record.model_dump_json() + "\n")
    (folder / "traces.jsonl").write_text(json.dumps({"run_id": "r1", "events": events}) + "\n")
    out = tmp_path / "spans.json"
    assert export(str(folder), "--format", "otlp", "-o", str(out)).exit_code == 0
    root, call = spans_of(parsed(json.loads(out.read_text())))
    assert (root.status.code, root.status.message) == (2, "api_error")  # STATUS_CODE_ERROR
    assert (call.status.code, call.status.message) == (2, "HTTP 500")
    assert attributes(call)["error.type"] == "500"
    assert "gen_ai.usage.input_tokens" not in attributes(call)  # no usage was reported
    start = 1_767_225_600 * 10**9  # 2026-01-01T00:00:00Z
    assert (root.start_time_unix_nano, root.end_time_unix_nano) == (start, start + 2 * 10**9)
    assert (call.start_time_unix_nano, call.end_time_unix_nano) == (
        start + 5 * 10**8,
        start + 15 * 10**8,
    )
