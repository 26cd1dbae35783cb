"""The sandbox's own limits, at each isolation level: the trusted test runner's peak memory
when the candidate's worker sends 16 MiB of nested lists as each reply; what is read of 60 MB
printed past sys.stdout; and what a run that leaves folders 3,000 deep, files in the shared
folders and System V IPC objects leaves behind.

The runner's peak is its maximum resident set size, as the kernel reports it when it is
reaped (``wait4``), against the box's memory limit (512 MB) that bounds the candidate.

    .venv/bin/python bench/sandbox_limits.py                  # every level that works here
    .venv/bin/python bench/sandbox_limits.py --levels none --repeats 3
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from tabulate import tabulate

sys.path.append(str(Path(__file__).parents[1]))  # tests.sandbox.hostile

from loopbench.sandbox import run as sandbox_run
from loopbench.sandbox.isolation import LEVELS, probe
from loopbench.sandbox.limits import Limits
from loopbench.sandbox.processes import readable
from loopbench.sandbox.run import Sandbox, Suite
from loopbench.tasks.loading import load_taskset
from tests.sandbox.hostile import floods_output, floods_the_pipe, leaves_leftovers

PEAKS_KB: list[int] = []


async def measured_end(proc: subprocess.Popen[bytes], exited: int) -> None:
    """Ends the trusted test runner as the sandbox does, reaping it with wait4 to read its
    peak resident size."""
    with contextlib.suppress(ProcessLookupError):
        signal.pidfd_send_signal(exited, signal.SIGKILL)
    await readable(exited)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    PEAKS_KB.append(usage.ru_maxrss)


def roman_heldout() -> Suite:
    task = next(t for t in load_taskset("coding").tasks if t.id == "roman_numerals")
    suites: Any = task.suites  # type: ignore[attr-defined]
    return Suite("heldout", suites.heldout, suites.entry_point, suites.preamble)


def ipc_keys() -> set[int]:
    keys = set()
    for kind in ("shm", "msg", "sem"):
        lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()
        column = lines[0].split().index("key")
        keys |= {int(line.split()[column]) for line in lines[1:]}
    return keys


def leftovers(sandbox: Sandbox, suite: Suite) -> tuple[str, str]:
    """(what of the run was left, the next run's status: the reference's)."""
    token, key = f"loopbench-bench-{uuid.uuid4().hex}", 0x4C420000 + os.getpid() % 65536
    paths = [Path(f, f"{token}-file") for f in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")]
    paths.append(Path("/tmp", token))
    try:
        first = sandbox.run_sync(leaves_leftovers(token, key), suite)
    except Exception as exc:  # what the sweep of a deep tree once raised
        first = None
        print(f"  {sandbox.isolation}: the run raised {type(exc).__name__}")
    left = [str(p) for p in paths if os.path.lexists(p)] + (["ipc"] if key in ipc_keys() else [])
    reference = (
        Path(__file__).parents[1] / "loopbench/tasks/coding/suites/roman_numerals/reference.py"
    )
    try:
        again: str = sandbox.run_sync(reference.read_text(), suite).status
    except Exception as exc:
        again = f"raised {type(exc).__name__}"
    subprocess.run(["rm", "-rf", "--", *map(str, paths)], check=False)
    hexed = hex(key)
    subprocess.run(["ipcrm", "-M", hexed, "-Q", hexed, "-S", hexed], capture_output=True)
    said = ", ".join(left) or "nothing"
    return (said if first is not None else f"run raised; {said}"), again


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", nargs="+", default=[lv for lv in LEVELS if not probe(lv)])
    parser.add_argument("--repeats", type=int, default=2, help="runs of the pipe flood per level")
    args = parser.parse_args()
    vars(sandbox_run)["end_trusted"] = measured_end  # how the sandbox ends the runner
    suite = roman_heldout()
    rows = []
    for level in args.levels:
        sandbox = Sandbox(Limits(timeout_s=30), isolation=level)
        peaks, statuses = [], set()
        for _ in range(args.repeats):
            PEAKS_KB.clear()
            result = sandbox.run_sync(floods_the_pipe(suite.entry_point), suite)
            peaks.append(max(PEAKS_KB) / 1024)
            statuses.add(f"{result.status}: {result.detail[:70]}")
        began = time.perf_counter()
        flood = sandbox.run_sync(floods_output(suite.entry_point), suite)
        took = time.perf_counter() - began
        cut = getattr(flood, "output_cut", "n/a")
        read = getattr(flood, "output_bytes", "n/a")
        left, again = leftovers(sandbox, suite)
        rows.append(
            [
                level,
                f"{min(peaks):.0f}-{max(peaks):.0f}",
                "; ".join(sorted(statuses)),
                f"{flood.status} (cut: {cut}, read: {read} B, {took:.1f} s)",
                left,
                again,
            ]
        )
    print(f"uid {os.geteuid()}")
    header = [
        "level",
        "runner peak MB",
        "16 MiB reply",
        "60 MB printed",
        "left behind",
        "next run",
    ]
    print(tabulate(rows, headers=header, tablefmt="github"))


if __name__ == "__main__":
    main()
