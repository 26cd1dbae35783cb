"""A lone surrogate (the JSON escape ``"\\ud800"`` alone: not text a UTF-8 file can hold)
in an endpoint's reply or in a task's question: the run goes on, every run is recorded,
and each replaced character is counted in the record (``replaced_characters``)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import duckdb
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.fakes.fake_server import FakeServer, Reply
from loopbench.harness.models.counting import CountingClient
from loopbench.harness.models.types import Message, ModelRequest, ModelResponse, ToolCall, ToolSpec
from loopbench.harness.models.wire import request_body
from loopbench.harness.results.columns import read_frame
from loopbench.harness.results.reading import read_records
from loopbench.harness.results.records import RunRecord
from loopbench.harness.results.store import RecordWriter, iter_traces
from loopbench.harness.trace import Trace
from loopbench.harness.valid_text import valid_text, valid_value

LONE = "\ud800"
ARMS = ("direct", "react", "react_text", "self_consistency:samples=2")


def surrogate_replies(body: dict[str, Any]) -> Reply:
    """A final answer holding a lone surrogate; a tool call whose arguments hold one, first."""
    if body.get("tools") and not any(m["role"] == "tool" for m in body["messages"]):
        arguments = json.dumps({"title": f"Paris{LONE}"}, ensure_ascii=True)
        call = {
            "id": f"c{LONE}",
            "type": "function",
            "function": {"name": "lookup", "arguments": arguments},
        }
        return Reply(content=f"thinking {LONE}", tool_calls=[call], finish_reason="tool_calls")
    return Reply(content=f"Final Answer: 84 {LONE} and \udfff")


def task_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "taskset.toml").write_text('name = "mine"\ntools = ["lookup", "calc"]\n')
    (folder / "encyclopedia.json").write_text(json.dumps({"entries": {"Paris": "A city."}}))
    rows = [
        {"id": f"t{i}", "question": "What is 80 + 4?", "expected": {"numbers": [84]}}
        for i in range(2)
    ]
    (folder / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def assert_valid(out: Path) -> None:
    """Every line of runs.jsonl and traces.jsonl is UTF-8 whose JSON holds valid text only
    (a tool call's arguments may still hold the escape as text: their JSON is the model's)."""
    for name in ("runs.jsonl", "traces.jsonl"):
        for line in (out / name).read_bytes().decode("utf-8").splitlines():
            assert valid_value(json.loads(line))[1] == 0


def run(tmp_path: Path, server: FakeServer, tasks: Path, *more: str) -> Path:
    out = tmp_path / "out"
    args = [
        *("run", "--tasks", str(tasks), "--model", "fake", "--quiet", "--out", str(out)),
        *("--base-url", server.base_url, "--max-retries", "0", *more),
        *(item for arm in ARMS for item in ("--arm", arm)),
    ]
    result = CliRunner().invoke(main, args, env={"LOOPBENCH_API_KEY": "k"})
    assert result.exit_code == 0, result.output
    return out


def test_a_reply_with_lone_surrogates_is_recorded_with_them_replaced_and_counted(tmp_path):
    with FakeServer(surrogate_replies) as server:
        out = run(tmp_path, server, task_folder(tmp_path), "--cache", str(tmp_path / "cache"))
    records = read_records(out)
    assert len(records) == len(ARMS) * 2
    assert all(r.status != "pattern_error" for r in records), [r.error for r in records]
    assert all(r.replaced_characters >= 2 for r in records)
    answered = [r for r in records if r.answer is not None]
    assert answered and all("\ufffd" in r.answer for r in answered)
    assert_valid(out)
    assert len(list(iter_traces(out))) == len(records)
    frame = read_frame(out)  # the columns read it as the records do
    assert sorted(frame["replaced_characters"]) == sorted(r.replaced_characters for r in records)


def test_a_cached_reply_with_lone_surrogates_replays_valid(tmp_path):
    with FakeServer(surrogate_replies) as server:
        tasks = task_folder(tmp_path)
        cache = ("--cache", str(tmp_path / "cache"))
        first = run(tmp_path, server, tasks, *cache)
        (first / "runs.jsonl").rename(tmp_path / "first.jsonl")
        for name in ("traces.jsonl", "experiment.json"):
            (first / name).unlink()
        again = run(tmp_path, server, tasks, *cache)
    records = read_records(again)
    assert len(records) == len(ARMS) * 2 and sum(r.cache_hits for r in records) > 0
    assert all(r.replaced_characters >= 2 for r in records)


class Echo:
    """A client answering with its request's last message, and keeping what it was sent."""

    def __init__(self) -> None:
        self.sent: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.sent.append(request)
        call = ToolCall(f"id{LONE}", "lookup", f'{{"title": "{LONE}"}}')
        return ModelResponse(Message("assistant", request.messages[-1].content, (call,)))


def test_a_request_with_a_lone_surrogate_is_sent_valid_and_counted():
    """A question (from the Python API, say) or a tool's result holding one: the request
    sent, the trace and the reply read are valid text, the replacements counted."""
    inner, trace = Echo(), Trace()
    counted = CountingClient(inner, trace)
    request = ModelRequest(
        "m",
        (Message("user", f"What is 80 + 4? {LONE}"),),
        system=f"be brief {LONE}",
        tools=(ToolSpec("lookup", f"reads {LONE}", {"title": {"description": LONE}}),),
        stop=(LONE,),
    )
    response = asyncio.run(counted.complete(request))
    sent = inner.sent[0]
    assert valid_value(request_body(sent))[1] == 0 and sent.tools[0].name == "lookup"
    assert response.message.content == "What is 80 + 4? \ufffd"
    assert response.message.tool_calls[0] == ToolCall("id\ufffd", "lookup", '{"title": "\ufffd"}')
    assert counted.replaced_characters == 5 + 2  # sent: 5; the reply: its id and arguments
    assert valid_value(trace.to_json())[1] == 0


def test_a_valid_request_is_sent_as_it_is():
    inner = Echo()
    request = ModelRequest("m", (Message("user", "Ünïcode 😀"),), system="s")
    asyncio.run(CountingClient(inner).complete(request))
    assert inner.sent[0] is request


def test_valid_text_replaces_lone_surrogates_only():
    assert valid_text("a\ud800b\udfffc") == ("a\ufffdb\ufffdc", 2)
    assert valid_text("😀 é") == ("😀 é", 0)
    shared = {"k": ["x"]}
    assert valid_value(shared) == (shared, 0) and valid_value(shared)[0] is shared
    assert valid_value({"\udc00": ("a", 1, None, f"{LONE}")}) == (
        {"\ufffd": ("a", 1, None, "\ufffd")},
        2,
    )


def test_the_writer_replaces_and_counts_what_is_left(tmp_path):
    """A text of the run's own that never passed the client (a pattern's error, an event):
    written valid, counted in the record."""
    record = RunRecord(
        run_id="r1",
        arm="direct",
        task_id="t",
        repeat=0,
        status="pattern_error",
        error=f"boom {LONE}",
        replaced_characters=3,
    )
    events = [{"t": 0.0, "kind": "pattern_error", "error": f"{LONE}{LONE}"}]
    with RecordWriter(tmp_path) as writer:
        writer.append(record, events)
    assert_valid(tmp_path)
    (written,) = read_records(tmp_path)
    assert (written.error, written.replaced_characters) == ("boom \ufffd", 3 + 1 + 2)
    assert next(iter_traces(tmp_path))["events"][0]["error"] == "\ufffd\ufffd"


def test_exports_of_a_folder_with_replaced_text(tmp_path):
    with FakeServer(surrogate_replies) as server:
        out = run(tmp_path, server, task_folder(tmp_path))
    for kind, name in (("parquet", "runs.parquet"), ("csv", "runs.csv"), ("otlp", "spans.json")):
        args = ["export", str(out), "--format", kind, "-o", str(tmp_path / name)]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        if kind != "parquet":
            (tmp_path / name).read_bytes().decode("utf-8")  # strictly UTF-8
    assert "\ufffd" in (tmp_path / "runs.csv").read_text(encoding="utf-8")
    with duckdb.connect() as db:
        answers = db.execute("SELECT answer FROM read_parquet(?)", [str(tmp_path / "runs.parquet")])
        assert any("\ufffd" in (answer or "") for (answer,) in answers.fetchall())
