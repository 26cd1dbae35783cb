"""Hostile endpoints against a real ``loopbench run``: its peak memory and what it recorded.

Each case starts a fault server on loopback that answers every call with one hostile reply
(a gzip or deflate bomb of about 1 MB that inflates to 1 GiB without usage, a 1 GiB body
sent uncompressed, a 500 as long, a body nested 100,000 deep, usage of 5,000 digits, tool
arguments nested 100,000 deep or holding a 5,000-digit integer, a reply a byte a second)
and runs ``loopbench run`` in a process of its own on 16 tasks, 8 requests in flight, so
eight bombs are read at once. Printed per case: the statuses recorded, the peak resident
memory of the ``run`` process (``os.wait4``'s ``ru_maxrss``), its wall time, and the start
of one recorded error.

    .venv/bin/python bench/hostile_endpoints.py
    .venv/bin/python bench/hostile_endpoints.py --cases gzip_bomb,dribble --tasks 4
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tabulate import tabulate

sys.path.append(str(Path(__file__).parents[1]))

from loopbench.harness.results.reading import read_records
from tests.fakes.fault_server import HOSTILE, FaultServer

CASES = [*HOSTILE, "dribble"]


def task_folder(root: Path, tasks: int) -> Path:
    folder = root / "tasks"
    folder.mkdir()
    (folder / "taskset.toml").write_text('name = "hostile"\ntools = ["lookup", "calc"]\n')
    (folder / "encyclopedia.json").write_text(json.dumps({"entries": {"Paris": "A city."}}))
    lines = [
        json.dumps(
            {"id": f"t{i}", "question": f"What is 80 + {i}?", "expected": {"numbers": [80 + i]}}
        )
        for i in range(tasks)
    ]
    (folder / "tasks.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def run_case(case: str, tasks: int, root: Path) -> list[object]:
    """One ``loopbench run`` against an endpoint answering every call with ``case``."""
    folder = root / case
    folder.mkdir()
    dribble = case == "dribble"
    with FaultServer(lambda n, body: case, dribble_s=1.0, hang_s=60) as server:  # type: ignore[arg-type,return-value]
        command = [
            sys.executable,
            *("-m", "loopbench.harness.cli", "run", "--tasks", str(task_folder(folder, tasks))),
            *("--arm", "react", "--model", "hostile", "--base-url", server.base_url),
            *("--out", str(folder / "out"), "--quiet", "--concurrency", "8"),
            *("--max-retries", "1", "--timeout", "5" if dribble else "120"),
        ]
        env = {**os.environ, "LOOPBENCH_API_KEY": "k"}
        began = time.perf_counter()
        child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - began
        assert child.stdout is not None and child.stderr is not None
        child.stdout.close()
        stderr = child.stderr.read().decode(errors="replace")
        child.stderr.close()
        requests = len(server.hits)
    records = read_records(folder / "out") if (folder / "out" / "runs.jsonl").exists() else []
    statuses = collections.Counter(r.status for r in records)
    errors = [r.error for r in records if r.error]
    return [
        case,
        os.waitstatus_to_exitcode(status),
        ", ".join(f"{s} {n}" for s, n in sorted(statuses.items())) or stderr.strip()[-120:],
        requests,
        round(usage.ru_maxrss / 1024),  # KiB on Linux
        round(seconds, 1),
        (errors[0][:90] if errors else ""),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(CASES), help="Comma-separated cases.")
    parser.add_argument("--tasks", type=int, default=16, help="Tasks, one run each.")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as root:
        for case in args.cases.split(","):
            rows.append(run_case(case, args.tasks, Path(root)))
            print(*rows[-1][:6], sep="  ", flush=True)
    headers = ["endpoint", "exit", "statuses", "requests", "peak RSS MiB", "wall s", "an error"]
    print(tabulate(rows, headers=headers))


if __name__ == "__main__":
    main()
