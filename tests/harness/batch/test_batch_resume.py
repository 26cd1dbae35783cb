"""A run killed while its batch is pending resumes by polling that batch: no request is
sent twice, and every run is recorded once."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.fakes.batch_server import BatchScript, FakeBatchServer
from loopbench.harness.results.reading import read_records

ROOT = Path(__file__).resolve().parents[3]
ARMS = ("direct", "react")


def args(server: FakeBatchServer, out: Path) -> list[str]:
    flags = ["run", "--model", "gpt-4o-mini", "--base-url", server.base_url, "--out", str(out)]
    flags += ["--limit", "2", "--repeats", "2", "--quiet", "--batch", "--batch-poll", "0.02"]
    for arm in ARMS:
        flags += ["--arm", arm]
    return flags


def wait_for(done, what: str, within_s: float = 60.0) -> None:
    deadline = time.monotonic() + within_s
    while not done():
        assert time.monotonic() < deadline, f"no {what} within {within_s:g} s"
        time.sleep(0.05)


def journaled(folder: Path) -> list[dict]:
    path = folder / "batches.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]


@pytest.mark.parametrize("kill", [signal.SIGKILL, signal.SIGTERM])
def test_a_run_killed_while_its_batch_is_pending_resumes_by_polling_it(tmp_path, kill):
    out = tmp_path / "results"
    script = BatchScript(pending_polls=10**9)
    with FakeBatchServer(script=script) as server:
        env = os.environ | {"LOOPBENCH_API_KEY": "k", "PYTHONPATH": str(ROOT)}
        command = [sys.executable, "-m", "loopbench.harness.cli", *args(server, out)]
        killed = subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE)  # fmt: skip
        try:
            # The first round's batch made, journaled, and polled a few times.
            wait_for(lambda: any(e["state"] == "created" for e in journaled(out)), "batch")
            wait_for(lambda: server.batches["batch_1"].polls >= 3, "polls")
        finally:
            killed.send_signal(kill)
            killed.communicate(timeout=30)
        assert not (out / "runs.jsonl").exists() or not read_records(out)
        pending = len(server.lines)
        assert server.created == 1 and pending == 2 * 2 * len(ARMS)
        script.pending_polls = 0  # the batch finishes while no one polls it
        result = CliRunner().invoke(main, args(server, out), env={"LOOPBENCH_API_KEY": "k"})
        assert result.exit_code == 0, result.output
        sent = [line["body"] for line in server.lines]
        answered = server.served.requests
    records = read_records(out)
    assert len(records) == 2 * 2 * len(ARMS)
    keys = {(r.arm, r.task_id, r.repeat) for r in records}
    assert len(keys) == len(records)  # every run once
    assert {r.status for r in records} == {"answered"}
    # Each request sent once: the first round's were read from the batch made before the
    # kill; the resumed process sent only the turns after them.
    assert len(sent) == answered == sum(r.turns for r in records)
    assert sum(r.batched_calls or 0 for r in records) == len(sent)
    states = [e["state"] for e in journaled(out)]
    assert states.count("submitting") == states.count("created") == server.created
