"""``run --batch`` end to end against the fake Batch API on loopback: the records a batched
grid writes are the direct grid's (answers, statuses, tokens), at the batch price."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.config import load_experiment
from loopbench.harness.fakes.batch_server import BatchScript, FakeBatchServer
from loopbench.harness.results.columns import read_frame
from loopbench.harness.results.frames import Pricing
from loopbench.harness.results.prices import load_prices
from loopbench.harness.results.reading import read_records

ARMS = ("direct", "cot", "react", "self_consistency")
#: Priced in the shipped table, whose batch share is a half.
MODEL = "gpt-4o-mini"


def run(server: FakeBatchServer, out: Path, *flags: str) -> str:
    args = ["run", "--model", MODEL, "--base-url", server.base_url, "--out", str(out)]
    args += ["--limit", "2", "--repeats", "2", "--quiet", *flags]
    for arm in ARMS:
        args += ["--arm", arm]
    result = CliRunner().invoke(main, args, env={"LOOPBENCH_API_KEY": "k"})
    assert result.exit_code == 0, result.output
    return result.output


def by_run(folder: Path) -> dict[tuple[str, str, int], dict]:
    """What a run recorded, less what differs between any two runs (ids, times, cost)."""
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
            }
        )
        kept[record.arm, record.task_id, record.repeat] = fields
    return kept


def test_a_batched_grid_records_what_a_direct_one_does_at_the_batch_price(tmp_path):
    with FakeBatchServer(script=BatchScript(pending_polls=2)) as server:
        run(server, tmp_path / "direct")
        direct_served = server.served.requests
        run(server, tmp_path / "batched", "--batch", "--batch-poll", "0.01")
        batched_served = server.served.requests - direct_served
        lines = len(server.lines)
        created = server.created
    assert by_run(tmp_path / "batched") == by_run(tmp_path / "direct")
    direct = {(r.arm, r.task_id, r.repeat): r for r in read_records(tmp_path / "direct")}
    batched = read_records(tmp_path / "batched")
    assert len(batched) == 2 * 2 * len(ARMS)
    assert {r.status for r in batched} == {"answered"}
    assert any(r.turns > 1 for r in batched)  # react's tool loop went round by round
    assert lines == batched_served == direct_served == sum(r.turns for r in batched)
    # As many rounds as the longest run has turns, not a batch per request.
    assert created <= max(r.turns for r in batched) + 1
    for record in batched:
        assert record.batched_calls == record.turns
        twin = direct[record.arm, record.task_id, record.repeat]
        assert twin.batched_calls is None
        assert record.cost_usd == pytest.approx(twin.cost_usd / 2)
    # The table prices the tokens again, from the price table: at the batch price too.
    for name in ("batched", "direct"):
        frame = read_frame(tmp_path / name, Pricing(load_prices())).set_index("run_id")
        for record in read_records(tmp_path / name):
            assert frame.loc[record.run_id, "cost_usd"] == pytest.approx(record.cost_usd)


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--batch", "--stream"], "batch: a batch's replies come whole"),
        (["--batch", "--executor", "ray"], "batch: a batch's replies come whole"),
        (["--batch-poll", "5"], "--batch-poll applies only with --batch"),
    ],
)
def test_batch_settings_that_cannot_go_together_are_refused_in_one_line(tmp_path, flags, said):
    args = ["run", "--model", MODEL, "--base-url", "http://127.0.0.1:9/v1", "--arm", "direct"]
    args += ["--out", str(tmp_path / "out"), "--limit", "1", *flags]
    result = CliRunner().invoke(main, args, env={"LOOPBENCH_API_KEY": "k"})
    assert result.exit_code == 2, result.output
    assert said in result.output and "Traceback" not in result.output


def test_the_embedded_model_is_refused_a_batch_before_it_starts(tmp_path):
    args = ["run", "--model", "local", "--arm", "direct", "--limit", "1", "--batch"]
    result = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "out")], env={})
    assert result.exit_code == 2, result.output
    assert "--batch needs an endpoint with a Batch API" in result.output
    assert "starting it" not in result.output


def test_the_response_cache_replays_a_batched_grid_without_a_batch(tmp_path):
    cache = str(tmp_path / "cache")
    with FakeBatchServer() as server:
        run(server, tmp_path / "first", "--batch", "--batch-poll", "0.01", "--cache", cache)
        made = server.created
        run(server, tmp_path / "again", "--batch", "--batch-poll", "0.01", "--cache", cache)
        assert server.created == made > 0  # every request replayed: no batch made
    again = read_records(tmp_path / "again")
    assert all(r.cache_hits == r.turns and r.batched_calls is None for r in again)
    assert by_run(tmp_path / "again").keys() == by_run(tmp_path / "first").keys()


def test_an_experiment_file_asks_for_batches(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text('arms = ["direct"]\nbatch = true\nbatch_poll_s = 5\n')
    config = load_experiment(path)
    assert config.batch and config.batch_poll_s == 5
