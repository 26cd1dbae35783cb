"""Wall time and peak memory of reading the big hostile task files (issue 37): a Parquet
file of 10^7 rows and JSONL and CSV files of 10^6 run with ``--limit 1`` and listed whole,
YAML billion laughs, JSON, YAML and a CSV choices cell nested 100,000 deep, and the largest
file read whole (50,000 JSONL rows, the row bound). Each command runs in a fresh
interpreter, as a user runs it, and says its own peak resident memory on exit. A run
is sent to a closed port: its one request fails at once and is recorded.

    .venv/bin/python bench/hostile_readers.py [--parquet-rows 10000000] [--jsonl-rows 1000000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tabulate import tabulate

sys.path.append(str(Path(__file__).parents[1]))

from tests.hostile_inputs import generate_readers as make

CLOSED = ["--model", "fake", "--base-url", "http://127.0.0.1:9/v1", "--max-retries", "0"]


#: The command line in a fresh interpreter, saying its own peak memory (KiB) on exit.
CHILD = """
import atexit, resource, sys
atexit.register(lambda: print("peak", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                              file=sys.stderr))
from loopbench.harness.cli.main import main
main(sys.argv[1:], prog_name="loopbench")
"""


def measure(args: list[str], folder: Path) -> tuple[int, float, float, str]:
    """The command's exit code, wall seconds, peak MiB and its last line of stderr."""
    env = {**os.environ, "LOOPBENCH_API_KEY": "k"}
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *args],
        cwd=folder,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    seconds = time.monotonic() - began
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    peak = float(lines.pop().split()[1]) / 1024 if lines and lines[-1].startswith("peak ") else 0
    return done.returncode, seconds, peak, (lines[-1] if lines else "")[:90]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parquet-rows", type=int, default=10_000_000)
    parser.add_argument("--jsonl-rows", type=int, default=1_000_000)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        files: dict[str, Callable[[Path], None]] = {
            "big.parquet": lambda p: make.readers_parquet_rows(p, options.parquet_rows),
            "big.jsonl": lambda p: make.readers_jsonl_rows(p, options.jsonl_rows),
            "big.csv": lambda p: make.readers_csv_rows(p, options.jsonl_rows),
            "bound.jsonl": lambda p: make.readers_jsonl_rows(p, 50_000),
            "small.jsonl": lambda p: make.readers_jsonl_rows(p, 3),
            "laughs.yaml": make.readers_billion_laughs,
            "deep.yaml": make.readers_deep_yaml,
            "deep.json": make.readers_deep_json,
            "deep.csv": make.readers_deep_csv_choices,
        }
        for name, write in files.items():
            write(folder / name)
        parquet, jsonl = f"{options.parquet_rows:,}-row", f"{options.jsonl_rows:,}-row"
        cases: list[tuple[str, str | list[str]]] = [
            ("--help", ["--help"]),
            ("3-row JSONL, tasks list (the fixed cost)", "small.jsonl"),
            (f"{parquet} Parquet, run --limit 1", "big.parquet"),
            (f"{parquet} Parquet, tasks list", "big.parquet"),
            (f"{jsonl} JSONL, run --limit 1", "big.jsonl"),
            (f"{jsonl} JSONL, tasks list", "big.jsonl"),
            (f"{jsonl} CSV, run --limit 1", "big.csv"),
            ("50,000-row JSONL, tasks list", "bound.jsonl"),
            ("YAML billion laughs, tasks list", "laughs.yaml"),
            ("YAML 100,000 deep, tasks list", "deep.yaml"),
            ("JSON 100,000 deep, tasks list", "deep.json"),
            ("CSV choices 100,000 deep, run --limit 1", "deep.csv"),
        ]
        rows = []
        for n, (what, given) in enumerate(cases):
            if isinstance(given, list):
                args = given
            elif "run" in what:
                args = ["run", "--tasks", given, "--limit", "1", "--arm", "direct", "--quiet"]
                args += [*CLOSED, "--out", f"out{n}"]
            else:
                args = ["tasks", "list", "--tasks", given]
            size = (folder / given).stat().st_size / 2**20 if isinstance(given, str) else 0
            code, seconds, peak, said = measure(args, folder)
            rows.append([what, f"{size:.1f}", code, f"{seconds:.2f}", f"{peak:.0f}", said])
    headers = ["input and command", "MiB", "exit", "wall s", "peak MiB", "last line said"]
    print(tabulate(rows, headers=headers))


if __name__ == "__main__":
    main()
