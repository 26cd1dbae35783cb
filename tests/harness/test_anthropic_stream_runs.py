"""``run --stream`` on Anthropic's Messages API, end to end against its fake on loopback:
a streamed run records what an unstreamed one does apart from its timings (every token
kind as served), its time to first token is measured, thinking goes back signed within a
streamed tool loop, and a stream cut short or stalled is a recorded api_error, never a
hang."""

import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.fakes.anthropic_server import THINKING, AnthropicFakeServer
from loopbench.harness.fakes.fake_stream import StreamScript
from loopbench.harness.results.reading import read_records

KEY = "sk-ant-test-0123456789abcdefghij"
ARMS = ("direct", "cot", "react", "react_text")
FIRST_TOKEN_S = 0.1


def run(fake: AnthropicFakeServer, out: Path, *flags: str, arms=ARMS, expect=0) -> str:
    """The grid's output; ``expect`` 3 where every run of an arm fails (nothing graded)."""
    args = ["run", "--tasks", "depot", "--limit", "2", "--out", str(out), "--quiet"]
    args += ["--model", "claude-fake"]  # ANTHROPIC_BASE_URL chooses the API, and the key's host
    for arm in arms:
        args += ["--arm", arm]
    env = {"ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": KEY}
    result = CliRunner().invoke(main, [*args, *flags], env=env)
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


def served_tokens(fake: AnthropicFakeServer) -> tuple[int, int, int, int]:
    s = fake.served
    return s.input_tokens, s.output_tokens, s.cache_read_tokens, s.cache_write_tokens


def recorded_tokens(folder: Path) -> tuple[int, int, int, int]:
    records = read_records(folder)
    return (
        sum(r.tokens_in for r in records),
        sum(r.tokens_out for r in records),
        sum(r.tokens_cached or 0 for r in records),
        sum(r.tokens_cache_write or 0 for r in records),
    )


def test_a_streamed_grid_records_what_an_unstreamed_one_does_and_its_ttft(tmp_path):
    with AnthropicFakeServer(api_key=KEY, stream=StreamScript(first_token_s=FIRST_TOKEN_S)) as fake:
        run(fake, tmp_path / "streamed", "--stream")
        streamed = served_tokens(fake)
        bodies = list(fake.served.bodies)
    with AnthropicFakeServer(api_key=KEY) as fake:
        run(fake, tmp_path / "whole")
        whole = served_tokens(fake)
    assert bodies and all(b["stream"] is True for b in bodies)
    assert by_run(tmp_path / "streamed") == by_run(tmp_path / "whole")
    assert streamed == whole == recorded_tokens(tmp_path / "streamed")
    assert streamed[2] > 0 and streamed[3] > 0  # cache reads and writes both served
    records = read_records(tmp_path / "streamed")
    assert len(records) == 2 * len(ARMS) and {r.status for r in records} == {"answered"}
    assert any(r.tool_calls for r in records if r.pattern == "react")  # tool_use streamed
    for record in records:
        assert FIRST_TOKEN_S <= record.ttft_s < record.latency_s
    assert all(r.ttft_s is None for r in read_records(tmp_path / "whole"))


@pytest.mark.parametrize("abort", [False, True], ids=["ended", "dropped"])
def test_a_stream_cut_mid_way_is_an_api_error_with_the_usage_it_reported(tmp_path, abort):
    # message_start (the input and cache counts), a ping, a block's start and one delta.
    began = time.monotonic()
    with AnthropicFakeServer(api_key=KEY, stream=StreamScript(cut_after=4, abort=abort)) as fake:
        run(
            fake,
            tmp_path / "cut",
            "--stream",
            "--max-retries",
            "1",
            arms=("direct", "react"),
            expect=3,
        )
        served = served_tokens(fake)
    assert time.monotonic() - began < 60
    records = read_records(tmp_path / "cut")
    assert {r.status for r in records} == {"api_error"}
    # Ended: "the connection closed before the stream ended"; dropped: the HTTP body cut.
    assert all((r.error or "").startswith("ReadError: ") for r in records), records
    assert recorded_tokens(tmp_path / "cut") == served
    assert served[0] > 0 and served[1] > 0
    assert all(r.ttft_s is None for r in records)


def test_a_stream_that_stalls_ends_as_an_api_error(tmp_path):
    began = time.monotonic()
    with AnthropicFakeServer(api_key=KEY, stream=StreamScript(stall_s=120)) as fake:
        flags = ("--stream", "--stream-idle-timeout", "0.3", "--max-retries", "0")
        run(fake, tmp_path / "stalled", *flags, arms=("direct",), expect=3)
    assert time.monotonic() - began < 60
    records = read_records(tmp_path / "stalled")
    assert {r.status for r in records} == {"api_error"}
    assert all("stalled: no event within 0.3 s" in (r.error or "") for r in records)


def test_thinking_streamed_goes_back_signed_within_a_tool_loop(tmp_path):
    script = StreamScript(first_token_s=FIRST_TOKEN_S)
    with AnthropicFakeServer(api_key=KEY, stream=script) as fake:
        run(fake, tmp_path / "o", "--stream", "--thinking-budget", "2048", arms=("react",))
        served = served_tokens(fake)
        bodies = list(fake.served.bodies)
    records = read_records(tmp_path / "o")
    assert {r.status for r in records} == {"answered"}  # the fake checks each signature
    assert sum(r.tool_calls for r in records) > 0
    assert all(b["stream"] and b["thinking"]["budget_tokens"] == 2048 for b in bodies)
    sent_back = [
        turn["content"][0]
        for b in bodies
        for turn in b["messages"]
        if turn["role"] == "assistant" and isinstance(turn["content"], list)
    ]
    assert sent_back and all(block["type"] == "thinking" for block in sent_back)
    assert all(block["thinking"] == THINKING and block["signature"] for block in sent_back)
    assert recorded_tokens(tmp_path / "o") == served
    # Thinking comes before the delay; the first token is the text or tool call after it.
    assert all(FIRST_TOKEN_S <= r.ttft_s < r.latency_s for r in records)
    traces = (tmp_path / "o" / "traces.jsonl").read_text(encoding="utf-8")
    responses = [
        e["response"]
        for line in traces.splitlines()
        for e in json.loads(line)["events"]
        if e["kind"] == "response"
    ]
    assert responses and all(r["thinking"] == THINKING for r in responses)
