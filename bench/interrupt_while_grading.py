"""Seconds from Ctrl-C to the end of a ``loopbench run`` (issue 37: within 2 s, whatever is
being graded): a run whose every answer meets a catastrophic regex, ``(x|x)+`` against 40
x and a "!", so each grading lasts the answer's whole time limit (loopbench/graders/answer_time.py),
against a run on a slow endpoint grading nothing slow (what ending a run costs). SIGINT is
sent a moment after the first run is recorded; each figure is the median of ``--times``.

    .venv/bin/python bench/interrupt_while_grading.py [--times 5]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT))

from loopbench.harness.fakes.fake_server import FakeServer, Reply  # noqa: E402


def seconds_to_end(folder: Path, pattern: str, reply: str, latency_s: float) -> float:
    rows = [{"id": f"t{i}", "question": f"Q{i}?", "answer": pattern} for i in range(40)]
    tasks = folder / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = folder / "out"
    server = FakeServer(lambda _body: Reply(reply), latency_s=latency_s, keep_bodies=False)
    server.start()
    command = [
        sys.executable,
        "-m",
        "loopbench.harness.cli",
        "run",
        "--tasks",
        str(tasks),
        "--quiet",
    ]
    command += ["--grader", "regex", "--arm", "direct", "--model", "fake", "--out", str(out)]
    command += ["--base-url", server.base_url, "--max-retries", "0"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LOOPBENCH_API_KEY": "k"}
    run = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        runs = out / "runs.jsonl"
        while not (runs.exists() and runs.stat().st_size):
            time.sleep(0.02)
        time.sleep(0.3)  # into the next grading
        run.send_signal(signal.SIGINT)
        sent = time.monotonic()
        run.communicate(timeout=120)
        return time.monotonic() - sent
    finally:
        run.kill()
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--times", type=int, default=5)
    times = parser.parse_args().times
    cases = {
        "grading a catastrophic regex": ("(x|x)+", "Answer: " + "x" * 40 + "!", 0.0),
        "waiting on a slow endpoint": ("x+", "Answer: xxx", 0.5),
    }
    for name, (pattern, reply, latency_s) in cases.items():
        taken = []
        for _ in range(times):
            with tempfile.TemporaryDirectory() as folder:
                taken.append(seconds_to_end(Path(folder), pattern, reply, latency_s))
        print(f"{name}: median {statistics.median(taken):.2f} s, most {max(taken):.2f} s")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
