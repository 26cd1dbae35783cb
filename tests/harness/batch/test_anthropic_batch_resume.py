"""A run on Anthropic's Message Batches killed while its batch is pending resumes by
polling that batch: no request is sent twice, every run is recorded once, and the key is
in no file of the folder."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.fakes.anthropic_batch_server import AnthropicBatchServer, BatchScript
from loopbench.harness.results.reading import read_records
from tests.harness.batch.test_batch_resume import journaled, wait_for

ROOT = Path(__file__).resolve().parents[3]
ARMS = ("direct", "react")
KEY = "sk-ant-resume-0123456789abcdefghij"


def args(out: Path) -> list[str]:
    flags = ["run", "--provider", "anthropic", "--model", "claude-haiku-4-5", "--out", str(out)]
    flags += ["--limit", "2", "--repeats", "2", "--quiet", "--batch", "--batch-poll", "0.02"]
    for arm in ARMS:
        flags += ["--arm", arm]
    return flags


@pytest.mark.parametrize("kill", [signal.SIGKILL, signal.SIGTERM])
def test_a_run_killed_while_its_message_batch_is_pending_resumes_by_polling_it(tmp_path, kill):
    out = tmp_path / "results"
    script = BatchScript(pending_polls=10**9)
    with AnthropicBatchServer(api_key=KEY, script=script) as server:
        keys = {"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": KEY}
        env = os.environ | keys | {"PYTHONPATH": str(ROOT)}
        command = [sys.executable, "-m", "loopbench.harness.cli", *args(out)]
        killed = subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE)  # fmt: skip
        try:
            wait_for(lambda: any(e["state"] == "created" for e in journaled(out)), "batch")
            wait_for(lambda: server.batches["msgbatch_0001"].polls >= 3, "polls")
        finally:
            killed.send_signal(kill)
            killed.communicate(timeout=30)
        assert not (out / "runs.jsonl").exists() or not read_records(out)
        assert server.created == 1 and len(server.lines) == 2 * 2 * len(ARMS)
        script.pending_polls = 0  # the batch ends while no one polls it
        result = CliRunner().invoke(main, args(out), env=keys)
        assert result.exit_code == 0, result.output
        sent = [line["params"] for line in server.lines]
        answered = server.served.requests
    records = read_records(out)
    assert len(records) == 2 * 2 * len(ARMS)
    assert len({(r.arm, r.task_id, r.repeat) for r in records}) == len(records)
    assert {r.status for r in records} == {"answered"}
    assert len(sent) == answered == sum(r.turns for r in records)
    assert sum(r.batched_calls or 0 for r in records) == len(sent)
    entries = journaled(out)
    states = [e["state"] for e in entries]
    assert states.count("submitting") == states.count("created") == server.created
    assert all(e["submission"].startswith("sub_") for e in entries if "submission" in e)
    journal = (out / "batches.jsonl").read_text(encoding="utf-8")
    assert KEY not in journal and "params" not in journal  # ids and digests, not requests
    assert json.loads(journal.splitlines()[0])["state"] == "submitting"
