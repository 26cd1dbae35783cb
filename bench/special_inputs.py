"""How long a command takes to refuse a special file where an input file should be.

Every case of ``tests/hostile/special_inputs.py`` (a FIFO, a link to a FIFO, to /dev/zero
or /dev/null, a socket, in each place an input file is read) runs as its test runs it, one
at a time, in a fresh interpreter; printed per kind: the exit codes, the median and the
longest wall time, and beside them the wall time of ``--help`` (the interpreter's start
and the command group's imports, which every refusal pays too).

    .venv/bin/python bench/special_inputs.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

from tabulate import tabulate

sys.path.append(str(Path(__file__).parents[1]))

from tests.hostile.special_inputs import CASES, CHILD, KINDS, fixtures, prepare, refuse


def help_seconds() -> float:
    began = time.monotonic()
    subprocess.run([sys.executable, "-c", CHILD, "--help"], capture_output=True, check=True)
    return time.monotonic() - began


def main() -> None:
    seconds: dict[str, list[float]] = defaultdict(list)
    codes: dict[str, set[int | None]] = defaultdict(set)
    slowest: dict[str, str] = {}
    with fixtures() as root:
        for case in CASES:
            refusal = refuse(prepare(root, case), case)
            if not seconds[case.kind] or refusal.seconds > max(seconds[case.kind]):
                slowest[case.kind] = case.position.name
            seconds[case.kind].append(refusal.seconds)
            codes[case.kind].add(refusal.returncode)
    rows = [
        [
            kind,
            len(seconds[kind]),
            " ".join(str(code) for code in sorted(codes[kind], key=str)),
            round(statistics.median(seconds[kind]), 2),
            round(max(seconds[kind]), 2),
            slowest[kind],
        ]
        for kind in KINDS
    ]
    headers = ["special file", "places", "exit codes", "median s", "longest s", "longest at"]
    print(tabulate(rows, headers=headers))
    print(f"\n--help alone: {statistics.median(help_seconds() for _ in range(5)):.2f} s")


if __name__ == "__main__":
    main()
