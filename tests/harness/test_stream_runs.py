"""``run --stream`` end to end against the fake server on loopback: what a streamed run
records equals an unstreamed one apart from its timings, and a stream that is cut short or
stalls is a recorded api_error, never a hang."""

import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.fakes.fake_server import FakeServer
from loopbench.harness.fakes.fake_stream import StreamScript
from loopbench.harness.results.reading import read_records

ARMS = ("direct", "cot", "react")
FIRST_TOKEN_S = 0.1


def run(server: FakeServer, out: Path, *flags: str, expect: int = 0) -> str:
    """The grid's output; ``expect`` 3 where every run of an arm fails (nothing graded)."""
    args = ["run", "--model", "fake", "--base-url", server.base_url, "--out", str(out)]
    args += ["--limit", "2", "--quiet", *flags]
    for arm in ARMS:
        args += ["--arm", arm]
    result = CliRunner().invoke(main, args, env={"LOOPBENCH_API_KEY": "k"})
    assert result.exit_code == expect, result.output
    return result.output


def by_run(folder: Path) -> dict[tuple[str, str], dict]:
    """What a run recorded, less what differs between any two runs (ids, times)."""
    kept = {}
    for record in read_records(folder):
        fields = record.model_dump(
            exclude={"run_id", "experiment_id", "started_at", "latency_s", "ttft_s"}
        )
        kept[record.arm, record.task_id] = fields
    return kept


def test_a_streamed_grid_records_what_an_unstreamed_one_does_and_its_ttft(tmp_path):
    with FakeServer(stream=StreamScript(first_token_s=FIRST_TOKEN_S)) as server:
        table = run(server, tmp_path / "streamed", "--stream")
        streamed_served = server.served.prompt_tokens, server.served.completion_tokens
        bodies = list(server.served.bodies)
        run(server, tmp_path / "whole")
    assert all(b["stream"] and b["stream_options"] == {"include_usage": True} for b in bodies)
    assert by_run(tmp_path / "streamed") == by_run(tmp_path / "whole")
    records = read_records(tmp_path / "streamed")
    assert len(records) == 2 * len(ARMS) and {r.status for r in records} == {"answered"}
    assert any(r.tool_calls for r in records)  # react's tool loop was streamed too
    assert sum(r.tokens_in for r in records) == streamed_served[0]
    assert sum(r.tokens_out for r in records) == streamed_served[1]
    for record in records:
        assert FIRST_TOKEN_S <= record.ttft_s < record.latency_s
    assert all(r.ttft_s is None for r in read_records(tmp_path / "whole"))
    assert "p50 ttft" in table
    assert "p50 ttft" not in CliRunner().invoke(main, ["table", str(tmp_path / "whole")]).output
    meta = json.loads((tmp_path / "streamed" / "experiment.json").read_text())
    assert meta["stream"] is True
    assert "stream" not in json.loads((tmp_path / "whole" / "experiment.json").read_text())
    trace = json.loads((tmp_path / "streamed" / "traces.jsonl").read_text().splitlines()[0])
    answered = [e for e in trace["events"] if e.get("kind") == "response"]
    assert answered and all(e["response"]["ttft_s"] >= FIRST_TOKEN_S for e in answered), answered


def test_a_stream_cut_short_is_an_api_error_with_the_usage_it_reported(tmp_path):
    # Every chunk of the first reply (its usage last) and then the end, without [DONE].
    with FakeServer(stream=StreamScript(cut_after=99)) as server:
        run(server, tmp_path / "cut", "--stream", "--max-retries", "1", expect=3)
        served = server.served
    records = read_records(tmp_path / "cut")
    assert {r.status for r in records} == {"api_error"}
    assert all("closed before the stream ended" in (r.error or "") for r in records)
    assert sum(r.tokens_in for r in records) == served.prompt_tokens > 0
    assert sum(r.tokens_out for r in records) == served.completion_tokens
    assert all(r.ttft_s is None for r in records)


def test_a_stream_that_stalls_ends_as_an_api_error(tmp_path):
    began = time.monotonic()
    with FakeServer(stream=StreamScript(stall_s=120)) as server:
        flags = ("--stream", "--stream-idle-timeout", "0.3", "--max-retries", "0")
        run(server, tmp_path / "stalled", *flags, expect=3)
    assert time.monotonic() - began < 60
    records = read_records(tmp_path / "stalled")
    assert {r.status for r in records} == {"api_error"}
    assert all("stalled: no event within 0.3 s" in (r.error or "") for r in records)


def test_stream_from_an_experiment_file(tmp_path):
    (tmp_path / "exp.toml").write_text('arms = ["direct"]\nstream = true\nlimit = 1\n')
    with FakeServer(stream=StreamScript(first_token_s=FIRST_TOKEN_S)) as server:
        args = ["run", "--experiment", str(tmp_path / "exp.toml"), "--model", "fake"]
        args += ["--base-url", server.base_url, "--out", str(tmp_path / "out"), "--quiet"]
        result = CliRunner().invoke(main, args, env={"LOOPBENCH_API_KEY": "k"})
    assert result.exit_code == 0, result.output
    assert read_records(tmp_path / "out")[0].ttft_s >= FIRST_TOKEN_S


def test_the_embedded_model_refuses_stream_in_one_line(tmp_path):
    result = CliRunner().invoke(
        main, ["run", "--arm", "direct", "--stream", "--limit", "1", "--out", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "Error: --stream: the embedded model's server reports no usage in a stream, so every "
        "run's tokens would be unknown; run it without --stream"
    ]


def test_stream_idle_timeout_without_stream_is_refused(tmp_path):
    args = ["run", "--arm", "direct", "--stream-idle-timeout", "1", "--out", str(tmp_path)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and "applies only with --stream" in result.output


def test_a_reply_replayed_from_the_cache_has_no_ttft(tmp_path):
    with FakeServer(stream=StreamScript(first_token_s=FIRST_TOKEN_S)) as server:
        run(server, tmp_path / "first", "--stream", "--cache", str(tmp_path / "cache"))
        run(server, tmp_path / "replayed", "--stream", "--cache", str(tmp_path / "cache"))
    replayed = read_records(tmp_path / "replayed")
    assert replayed and all(r.cache_hits == r.turns and r.ttft_s is None for r in replayed)
    assert all(r.ttft_s is not None for r in read_records(tmp_path / "first"))


def test_otlp_spans_carry_the_time_to_first_chunk(tmp_path):
    pytest.importorskip("opentelemetry.sdk")
    from loopbench.harness.results.otlp import folder_spans

    with FakeServer(stream=StreamScript(first_token_s=FIRST_TOKEN_S)) as server:
        run(server, tmp_path / "streamed", "--stream")
    spans = folder_spans(tmp_path / "streamed").spans
    roots = [s for s in spans if s.attributes["gen_ai.operation.name"] == "invoke_agent"]
    calls = [s for s in spans if s.attributes["gen_ai.operation.name"] == "chat"]
    assert roots and all(s.attributes["loopbench.ttft_s"] >= FIRST_TOKEN_S for s in roots)
    assert calls
    assert all(s.attributes["gen_ai.response.time_to_first_chunk"] >= FIRST_TOKEN_S for s in calls)


def test_a_dropped_connection_mid_stream_is_an_api_error_with_the_usage_it_reported(tmp_path):
    with FakeServer(stream=StreamScript(cut_after=99, abort=True)) as server:
        run(server, tmp_path / "dropped", "--stream", "--max-retries", "0", expect=3)
        served = server.served
    records = read_records(tmp_path / "dropped")
    assert {r.status for r in records} == {"api_error"}
    assert sum(r.tokens_in for r in records) == served.prompt_tokens > 0


def test_stream_through_the_api(tmp_path, monkeypatch):
    from loopbench.harness.api import Experiment
    from loopbench.harness.config import ModelEntry, RunConfig

    monkeypatch.setenv("LOOPBENCH_API_KEY", "k")
    with FakeServer(stream=StreamScript(first_token_s=FIRST_TOKEN_S)) as server:
        config = RunConfig(arms=["react"], limit=1, stream=True, base_urls=[server.base_url],
                           models=[ModelEntry(name="fake")], out=str(tmp_path / "api"))  # fmt: skip
        Experiment.from_config(config).run()
    (record,) = read_records(tmp_path / "api")
    assert record.status == "answered" and record.ttft_s >= FIRST_TOKEN_S
