"""Ctrl-C while a run grades slow answers: the run ends promptly, the runs that finished
recorded. Grading runs on the run's event loop, which sees Ctrl-C only between gradings;
the answer's time limit (loopbench/graders/answer_time.py) keeps each grading short."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from loopbench.harness.fakes.fake_server import FakeServer, Reply

ROOT = Path(__file__).parents[2]


def _ctrl_c_heard() -> None:
    """A run started from a background job inherits Ctrl-C ignored, and Python then never
    raises KeyboardInterrupt: the run is given Ctrl-C as a terminal gives it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_ends_a_run_grading_a_catastrophic_regex(tmp_path):
    rows = [{"id": f"t{i}", "question": f"Q{i}?", "answer": "(x|x)+"} for i in range(40)]
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "out"
    server = FakeServer(lambda _body: Reply("Answer: " + "x" * 40 + "!"), keep_bodies=False)
    server.start()
    command = [sys.executable, "-m", "loopbench.harness.cli", "run", "--tasks", str(tasks)]
    command += ["--grader", "regex", "--arm", "direct", "--model", "fake", "--quiet"]
    command += ["--base-url", server.base_url, "--max-retries", "0", "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LOOPBENCH_API_KEY": "k"}
    run = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_ctrl_c_heard,  # runs before exec only
    )
    try:
        deadline, runs = time.monotonic() + 120, out / "runs.jsonl"
        while time.monotonic() < deadline and not (runs.exists() and runs.stat().st_size):
            time.sleep(0.1)
        assert runs.exists() and runs.stat().st_size, "no run recorded in 120 s"
        run.send_signal(signal.SIGINT)
        sent = time.monotonic()
        _, err = run.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        run.kill()
        server.stop()
    assert run.returncode == 130, err
    assert b"interrupted" in err and b"Traceback" not in err
    # 40 runs graded at up to a second or two each would take over a minute; a loaded
    # machine gets room, a run that ignored Ctrl-C does not.
    assert took < 20, f"the run took {took:.1f} s to end after Ctrl-C"
    records = [json.loads(line) for line in runs.read_text().splitlines()]
    assert 1 <= len(records) < 40
    assert {r["correct"] for r in records} == {False}
    assert {r["grade_reason"] for r in records} == {
        "regex '(x|x)+' took longer than 0.5 s on this answer; graded wrong"
    }
