"""``run --batch`` on Anthropic's Message Batches, end to end against the loopback fake:
the records a batched grid writes are the direct grid's (answers, statuses, tokens), at
the batch price; the key reaches neither the journal nor the records."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.fakes.anthropic_batch_server import AnthropicBatchServer, BatchScript
from loopbench.harness.results.columns import read_frame
from loopbench.harness.results.frames import Pricing
from loopbench.harness.results.prices import load_prices
from loopbench.harness.results.reading import read_records

ARMS = ("direct", "cot", "react", "self_consistency")
#: Priced in the shipped table, whose batch share is a half.
MODEL = "claude-haiku-4-5"
KEY = "sk-ant-batch-0123456789abcdefghij"


def env(server: AnthropicBatchServer) -> dict[str, str]:
    return {"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": KEY}


def run(server: AnthropicBatchServer, out: Path, *flags: str, expect: int = 0) -> str:
    """The grid's output; ``expect`` 3 where every run of an arm fails (nothing graded)."""
    args = ["run", "--provider", "anthropic", "--model", MODEL, "--out", str(out)]
    args += ["--limit", "2", "--repeats", "2", "--quiet", *flags]
    for arm in ARMS:
        args += ["--arm", arm]
    result = CliRunner().invoke(main, args, env=env(server))
    assert result.exit_code == expect, result.output
    return result.output


def by_run(folder: Path, *also: str) -> dict[tuple[str, str, int], dict]:
    """What a run recorded, less what differs between any two runs (ids, times, cost) and
    ``also``."""
    kept = {}
    for record in read_records(folder):
        fields = record.model_dump(
            exclude={
                "run_id",
                "experiment_id",
                "started_at",
                "latency_s",
                "cost_usd",
                "batched_calls",
                *also,
            }
        )
        kept[record.arm, record.task_id, record.repeat] = fields
    return kept


def test_a_batched_grid_on_anthropic_records_what_a_direct_one_does_at_the_batch_price(tmp_path):
    with AnthropicBatchServer(api_key=KEY, script=BatchScript(pending_polls=2)) as server:
        run(server, tmp_path / "direct")
        direct_served = server.served.requests
        run(server, tmp_path / "batched", "--batch", "--batch-poll", "0.01")
        batched_served = server.served.requests - direct_served
        lines, created = len(server.lines), server.created
        keys = set(server.batch_keys) | set(server.served.keys)
    assert keys == {KEY}  # every call, the batches' included, carried the key
    assert by_run(tmp_path / "batched") == by_run(tmp_path / "direct")
    direct = {(r.arm, r.task_id, r.repeat): r for r in read_records(tmp_path / "direct")}
    batched = read_records(tmp_path / "batched")
    assert len(batched) == 2 * 2 * len(ARMS)
    assert {r.status for r in batched} == {"answered"}
    assert any(r.turns > 1 for r in batched)  # react's tool loop went round by round
    assert any(r.tokens_cached for r in batched)  # both cache counts came through
    assert lines == batched_served == direct_served == sum(r.turns for r in batched)
    assert created <= max(r.turns for r in batched) + 1
    for record in batched:
        assert record.batched_calls == record.turns
        twin = direct[record.arm, record.task_id, record.repeat]
        assert twin.batched_calls is None
        assert record.cost_usd == pytest.approx(twin.cost_usd / 2)
    for name in ("batched", "direct"):
        frame = read_frame(tmp_path / name, Pricing(load_prices())).set_index("run_id")
        for record in read_records(tmp_path / name):
            assert frame.loc[record.run_id, "cost_usd"] == pytest.approx(record.cost_usd)
    for path in (tmp_path / "batched").rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text(encoding="utf-8", errors="replace"), path


def test_an_expired_and_a_partly_failed_batch_lose_no_run(tmp_path):
    """The first batch expires whole, and in the next some requests expire and some error:
    each is sent again in a later round, and every run is answered once."""
    script = BatchScript(expire=1, expire_lines=2, fail_lines=2)
    with AnthropicBatchServer(api_key=KEY, script=script) as server:
        run(server, tmp_path / "direct")
        direct_served = server.served.requests
        run(server, tmp_path / "batched", "--batch", "--batch-poll", "0.01")
        answered = server.served.requests - direct_served
    records = read_records(tmp_path / "batched")
    assert len(records) == 2 * 2 * len(ARMS)
    assert {r.status for r in records} == {"answered"}
    # The same answers and tokens; the requests sent again are counted as retries.
    assert by_run(tmp_path / "batched", "retries") == by_run(tmp_path / "direct", "retries")
    assert sum(r.retries for r in records) >= len(records)  # the whole first batch, and more
    assert answered == sum(r.turns for r in records)  # the expired ones were not answered


def test_requests_that_expire_past_the_retry_limit_are_recorded_as_api_errors(tmp_path):
    with AnthropicBatchServer(api_key=KEY, script=BatchScript(expire=100)) as server:
        run(
            server, tmp_path / "out", "--batch", "--batch-poll", "0.01", "--max-retries", "1",
            expect=3,
        )  # fmt: skip
        created, answered = server.created, server.served.requests
    records = read_records(tmp_path / "out")
    assert len(records) == 2 * 2 * len(ARMS) and answered == 0
    assert {r.status for r in records} == {"api_error"}
    assert all("expired" in (r.error or "") for r in records)
    assert created == 2  # the first try and one retry, every run's request in each
