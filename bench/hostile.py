"""Hostile candidates through the grader: what each one achieved, at each isolation level.

Each candidate of ``tests/sandbox/hostile.py`` answers roman_numerals wrongly (or copies the
reference it should never see) and tries to be graded passed anyway, or to harm the machine.
Printed per level: its status and tests passed. Then two on all of HumanEval: the runner's
helpers replaced, and an object equal to everything (passes out of 164). Then files written to
/tmp, /var/tmp and /dev/shm: whether the host ever saw them, and whether they outlived the run;
and folders 3,000 deep, files in every shared folder and System V IPC objects: what of them
outlived the run (``bench/sandbox_limits.py`` has the test runner's memory too).

    .venv/bin/python bench/hostile.py                 # every level that works here
    .venv/bin/python bench/hostile.py --levels bwrap
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

from tabulate import tabulate

sys.path.append(str(Path(__file__).parents[1]))  # tests.sandbox.hostile

from loopbench.sandbox.isolation import LEVELS, probe
from loopbench.sandbox.leftovers import remove_tree
from loopbench.sandbox.limits import Limits
from loopbench.sandbox.run import Sandbox, Suite
from loopbench.tasks.humaneval import heldout_suite, load_problems, preamble
from loopbench.tasks.loading import load_taskset
from tests.sandbox.hostile import (
    CASES,
    always_equal,
    leaves_leftovers,
    replaced_helpers,
    writes_tmp,
)


def roman_heldout() -> Suite:
    task = next(t for t in load_taskset("coding").tasks if t.id == "roman_numerals")
    suites = task.suites  # type: ignore[attr-defined]
    return Suite("heldout", suites.heldout, suites.entry_point, suites.preamble)


def humaneval_passes(sandbox: Sandbox, make) -> int:  # type: ignore[no-untyped-def]
    problems = load_problems()

    async def grade_all():  # type: ignore[no-untyped-def]
        runs = [
            sandbox.run(
                make(p.entry_point),
                Suite("heldout", heldout_suite(p), p.entry_point, preamble(p)),
            )
            for p in problems
        ]
        return await asyncio.gather(*runs)

    return sum(r.status == "passed" for r in asyncio.run(grade_all()))


def tmp_files(sandbox: Sandbox, suite: Suite) -> tuple[bool, bool]:
    """(seen on the host during the run, left after it) for files written to /tmp etc."""
    token = f"loopbench-hostile-{uuid.uuid4().hex}"
    paths = [Path(folder, token) for folder in ("/tmp", "/var/tmp", "/dev/shm")]
    seen = threading.Event()
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            if any(p.exists() for p in paths):
                seen.set()
            time.sleep(0.01)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        sandbox.run_sync(writes_tmp(token), suite)
    finally:
        done.set()
        watcher.join()
    left = [p for p in paths if p.exists()]
    for path in left:
        path.unlink()
    return seen.is_set(), bool(left)


def leftovers(sandbox: Sandbox, suite: Suite) -> str:
    """What outlived a run that leaves folders 3,000 deep, shared files and IPC objects."""
    token, key = f"loopbench-hostile-{uuid.uuid4().hex}", 0x4C430000 + os.getpid() % 65536
    paths = [Path(f, f"{token}-file") for f in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")]
    paths.append(Path("/tmp", token))
    sandbox.run_sync(leaves_leftovers(token, key), suite)
    left = [str(p) for p in paths if os.path.lexists(p)]
    keys = set()
    for kind in ("shm", "msg", "sem"):
        lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()
        column = lines[0].split().index("key")
        keys |= {int(line.split()[column]) for line in lines[1:]}
    left += ["System V IPC"] if key in keys else []
    for path in paths:
        remove_tree(path)
    hexed = hex(key)
    subprocess.run(["ipcrm", "-M", hexed, "-Q", hexed, "-S", hexed], capture_output=True)
    return ", ".join(left) or "nothing"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", nargs="+", default=[lv for lv in LEVELS if not probe(lv)])
    parser.add_argument("--no-humaneval", action="store_true", help="skip the 164-problem runs")
    args = parser.parse_args()
    suite = roman_heldout()
    rows = []
    for level in args.levels:
        sandbox = Sandbox(Limits(timeout_s=10), isolation=level)
        for case in CASES:
            began = time.perf_counter()
            result = sandbox.run_sync(case.make(suite.entry_point), suite)
            took = time.perf_counter() - began
            detail = (result.detail or "") + (
                "" if result.first_failure is None else f" | {result.first_failure.actual}"
            )
            rows.append(
                [level, case.name, result.status, result.passed, f"{took:.1f}", detail[:90]]
            )
        seen, left = tmp_files(sandbox, suite)
        rows.append([level, "writes-tmp", f"seen on host: {seen}", f"left: {left}", "", ""])
        if level != "none" or os.geteuid() == 0:  # else what it leaves is this user's, and stays
            rows.append(
                [level, "leaves-leftovers", f"left: {leftovers(sandbox, suite)}", "", "", ""]
            )
        if not args.no_humaneval:
            for name, make in (
                ("replaced-helpers", replaced_helpers),
                ("always-equal", always_equal),
            ):
                passes = humaneval_passes(sandbox, make)
                rows.append([level, f"humaneval {name}", f"{passes}/164 passed", "", "", ""])
    print(f"uid {os.geteuid()}")
    header = ["level", "candidate", "status", "passed", "s", "detail / first failure"]
    print(tabulate(rows, headers=header, tablefmt="github"))


if __name__ == "__main__":
    main()
