"""How long `loopbench` takes to start, and which heavy modules each command loads.

Each command runs as a person types it (the ``loopbench`` script beside this Python), in
a fresh process, ``--runs`` times; the median wall time is printed beside the time
``python -X importtime`` counts for all imports and the heavy modules loaded. The goal
(issue 21): ``--help`` under 0.3 s without matplotlib, pandas or DuckDB; ``patterns``,
``grade`` and ``table`` without matplotlib.

    .venv/bin/python bench/startup.py                       # median of 10
    .venv/bin/python bench/startup.py --runs 20 --folder results/some-run

``table`` reads ``--folder`` (default: the committed reference run, one run per task and
arm, so its table needs no t quantile). ``--module`` runs ``python -m loopbench.harness.cli`` from
this file's checkout instead of the installed script, to measure another checkout (an
older commit unpacked elsewhere) with the same interpreter.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from tabulate import tabulate

ROOT = Path(__file__).parents[1]
#: Third-party modules slow enough to import that a command should load them only when
#: it uses them.
HEAVY = ("matplotlib", "pandas", "duckdb", "scipy", "numpy", "pyarrow", "rich", "httpx")
HEAVY += ("aiohttp", "pydantic", "jinja2", "ray", "statsmodels")


def commands(folder: Path) -> list[list[str]]:
    return [["--help"], ["patterns"], ["grade", "--self-test"], ["table", str(folder)]]


def wall_seconds(entry: list[str], args: list[str]) -> float:
    began = time.perf_counter()
    subprocess.run([*entry, *args], cwd=ROOT, capture_output=True, check=True)
    return time.perf_counter() - began


def imports(entry: list[str], args: list[str]) -> tuple[float, list[str]]:
    """All import time (seconds, from -X importtime's top-level entries) and the heavy
    top-level packages imported."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", *entry[1:], *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    total_us = 0
    loaded = set()
    for line in result.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line.removeprefix("import time:").split("|")
        if not name.startswith("  "):  # a top-level import (nested ones are indented)
            total_us += int(cumulative)
        loaded.add(name.strip().split(".")[0])
    return total_us / 1e6, [module for module in HEAVY if module in loaded]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="runs of each command")
    parser.add_argument(
        "--folder",
        type=Path,
        default=ROOT / "results/reference/local-smollm2",
        help="the results folder `table` reads",
    )
    parser.add_argument(
        "--module",
        action="store_true",
        help="run `python -m loopbench.harness.cli` from this checkout",
    )
    args = parser.parse_args()
    script = str(Path(sys.executable).parent / "loopbench")
    # The script is Python: `python -X importtime SCRIPT` imports as the script does.
    entry = (
        [sys.executable, "-m", "loopbench.harness.cli"] if args.module else [sys.executable, script]
    )
    floor = [wall_seconds([sys.executable, "-c", "pass"], []) for _ in range(args.runs)]
    rows = [["python -c pass (the floor)", f"{statistics.median(floor):.3f}", f"{min(floor):.3f}"]]
    for command in commands(args.folder.resolve()):
        walls = [wall_seconds(entry, command) for _ in range(args.runs)]
        import_s, heavy = imports(entry, command)
        shown = " ".join(command).replace(str(args.folder.resolve()), "FOLDER")
        rows.append(
            [
                f"loopbench {shown}",
                f"{statistics.median(walls):.3f}",
                f"{min(walls):.3f}",
                f"{import_s:.3f}",
                " ".join(heavy) or "-",
            ]
        )
    print(
        tabulate(
            rows,
            headers=["command", "median s", "min s", "imports s", "heavy modules loaded"],
            disable_numparse=True,
        )
    )
    print(f"\n{args.runs} runs each of `{' '.join(entry)}`; FOLDER = {args.folder}")


if __name__ == "__main__":
    main()
