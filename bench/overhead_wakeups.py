"""Whether loopbench's CPU per call is paid per call, per second or per wakeup.

``bench/overhead.py`` finds the harness's own CPU per call highest at 16 in flight. This
measures, in one process, loopbench's and the bare conversations' CPU per call (the same
``run_grid`` and bare client as ``overhead.py``) at the concurrencies and endpoint
latencies given, and, with ``--busy-cores``, again while two processes at the lowest
priority keep the machine's cores from going idle between replies:

- a cost paid per second of waiting (a timer, a thread, a poll) grows with the latency;
- a cost paid per wakeup, on caches and a core gone cold while the process slept, falls
  with the busy cores, for the bare client as for loopbench.

    .venv/bin/python bench/overhead_wakeups.py --concurrency 16 --latency 0.05 0.2
    .venv/bin/python bench/overhead_wakeups.py --concurrency 16 256 --busy-cores --rounds 3

Each line prints the load average: the figures move with what else runs on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import overhead  # beside this file


@contextlib.contextmanager
def busy_cores(on: bool) -> Iterator[None]:
    """Two spinning processes at the lowest priority: they run only when nothing else
    wants the cores, so the cores never go idle."""
    spin = [sys.executable, "-c", "while True: pass"]
    spinners = [subprocess.Popen(["nice", "-n", "19", *spin]) for _ in range(2 if on else 0)]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.terminate()
            spinner.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, nargs="*", default=[16])
    parser.add_argument("--latency", type=float, nargs="*", default=[0.05])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--tool-turns", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--busy-cores", action="store_true", help="also with the cores kept busy")
    args = parser.parse_args()
    for latency in args.latency:
        with overhead.endpoint(latency, args.tool_turns) as base_url:
            for concurrency in args.concurrency:
                for _ in range(args.rounds):
                    for busy in (False, True) if args.busy_cores else (False,):
                        with busy_cores(busy):
                            ours = asyncio.run(
                                overhead.loopbench_cpu(base_url, args.samples, concurrency)
                            )
                            overhead.served(base_url)
                            bare = overhead.bare_cpu(base_url, args, concurrency)
                        load = os.getloadavg()[0]
                        print(
                            f"C={concurrency:<4} latency {latency * 1000:4.0f} ms"
                            f"{', cores busy' if busy else '':<12}  CPU per call: loopbench "
                            f"{ours:.2f} ms, bare {bare:.2f} ms, own {ours - bare:.2f} ms"
                            f"  (load {load:.1f})",
                            flush=True,
                        )


if __name__ == "__main__":
    main()
