"""`export --format otlp` on a traced folder: wall time, CPU time and peak memory, run as
the command a person types.

Runs a small real grid against the loopback fake server (direct, react and react_text on
the depot set: model calls and tool calls), then copies its runs, each under a new
run_id, until the folder holds --runs of them, and times the export to a JSON file in its
own process (peak resident memory and CPU from ``getrusage(RUSAGE_CHILDREN)``).

    .venv/bin/python bench/otlp_export.py                  # 10,000 runs
    .venv/bin/python bench/otlp_export.py --runs 50000
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from click.testing import CliRunner

from loopbench.harness.cli.main import main as loopbench
from loopbench.harness.fakes.fake_server import FakeServer

ARMS = ["--quiet", "--arm", "direct", "--arm", "react", "--arm", "react_text"]


def seed_folder(out: Path) -> None:
    with FakeServer() as server:
        ran = CliRunner().invoke(
            loopbench,
            ["run", "--base-url", server.base_url, "--model", "fake", "--out", str(out), *ARMS],
            env={"LOOPBENCH_API_KEY": "sk-bench"},
        )
    if ran.exit_code != 0:
        raise SystemExit(ran.output)


def grow(folder: Path, runs: int) -> None:
    """Copies of the folder's runs, each with its trace under a new run_id (and repeat),
    until it holds ``runs``."""
    records = (folder / "runs.jsonl").read_text().splitlines()
    traces = {
        json.loads(t)["run_id"]: t for t in (folder / "traces.jsonl").read_text().splitlines()
    }
    with (
        (folder / "runs.jsonl").open("a") as out_runs,
        (folder / "traces.jsonl").open("a") as out_traces,
    ):
        for copy in range(1, -(-runs // len(records))):
            for line in records:
                record = json.loads(line)
                trace = json.loads(traces[record["run_id"]])
                record["run_id"] = trace["run_id"] = uuid.uuid4().hex
                record["repeat"] = copy
                out_runs.write(json.dumps(record) + "\n")
                out_traces.write(json.dumps(trace) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "results"
        seed_folder(folder)
        grow(folder, args.runs)
        count = sum(1 for _ in (folder / "runs.jsonl").open())
        size = (folder / "traces.jsonl").stat().st_size / 1e6
        out = Path(tmp) / "spans.json"
        command = [
            sys.executable,
            "-m",
            "loopbench.harness.cli",
            "export",
            str(folder),
            "--format",
            "otlp",
        ]
        started = time.perf_counter()
        done = subprocess.run([*command, "-o", str(out)], capture_output=True, text=True)
        wall = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(done.stderr)
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        print(f"{count:,} runs, traces.jsonl {size:.1f} MB: {done.stdout.strip()}")
        print(
            f"wall {wall:.1f} s, CPU {usage.ru_utime + usage.ru_stime:.1f} s, "
            f"peak {usage.ru_maxrss / 1024:.0f} MB, spans.json {out.stat().st_size / 1e6:.1f} MB"
        )


if __name__ == "__main__":
    main()
