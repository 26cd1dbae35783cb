"""Where loopbench's CPU per call goes at high concurrency, in figures load does not move.

``bench/overhead.py`` measures CPU seconds, which the machine's load moves by a third.
This runs the same grid (``overhead.loopbench_cpu``'s react grid on the depot set,
``--concurrency`` requests and twice as many runs in flight) or the same bare
conversations against ``overhead.py``'s endpoint in a process of its own, and counts:

- ``--callgrind``: the instructions per call under ``valgrind --tool=callgrind``, of the
  grid (or the bare client) at two sizes, differenced, so start-up, imports and the
  warm-up fall out; loopbench's figure less the bare client's is its own work.
- ``--cprofile``: the functions that take most of one grid's time (under cProfile, so
  Python functions cost more than they do unprofiled: read it for where, not how much).

    .venv/bin/python bench/overhead_profile.py --callgrind              # C=256
    .venv/bin/python bench/overhead_profile.py --cprofile --samples 1200
    .venv/bin/python bench/overhead_profile.py --callgrind --concurrency 16 --sizes 100 300
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import overhead  # beside this file


async def grid(base_url: str, samples: int, concurrency: int) -> None:
    """``overhead.loopbench_cpu``'s grids, with nothing read back after them: reading the
    records is no part of a call's cost."""
    with tempfile.TemporaryDirectory() as tmp:
        await overhead.loopbench_grids(base_url, samples, concurrency, Path(tmp))


def one_grid(base_url: str, args: argparse.Namespace) -> None:
    """One grid (after its warm-up) or one set of bare conversations, of ``args.samples``."""
    if args.client == "bare":
        turns = args.tool_turns + 1
        asyncio.run(overhead.bare(base_url, args.samples, turns, args.concurrency[0], True))
    else:
        asyncio.run(grid(base_url, args.samples, args.concurrency[0]))


def instructions(args: argparse.Namespace, client: str, samples: int) -> int:
    """Instructions this script's process runs for one grid (the endpoint not counted)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = f"{args.keep or tmp}/callgrind.{client}.{samples}.out"
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
        command += [sys.executable, __file__, "--client", client, "--samples", str(samples)]
        command += ["--concurrency", str(args.concurrency[0])]
        command += ["--latency", str(args.latency), "--tool-turns", str(args.tool_turns)]
        try:
            subprocess.run(command, check=True, capture_output=True)
        except FileNotFoundError:
            sys.exit("--callgrind needs valgrind (apt-get install valgrind)")
        totals = re.search(r"^(?:summary|totals): (\d+)", Path(out).read_text(), re.M)
        assert totals is not None, "callgrind wrote no totals"
        return int(totals.group(1))


def per_call(args: argparse.Namespace, client: str) -> float:
    small, large = args.sizes
    calls: int = (large - small) * (args.tool_turns + 1)
    if client == "loopbench":  # the grid runs whole repeats of the depot set's 12 tasks
        calls = (-(-large // 12) - -(-small // 12)) * 12 * (args.tool_turns + 1)
    return (instructions(args, client, large) - instructions(args, client, small)) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, nargs=1, default=[256])
    parser.add_argument("--samples", type=int, default=1200, help="for --cprofile")
    parser.add_argument("--sizes", type=int, nargs=2, default=[600, 1800])
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--tool-turns", type=int, default=3)
    parser.add_argument("--callgrind", action="store_true")
    parser.add_argument("--cprofile", action="store_true")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--client", choices=["loopbench", "bare"], default="loopbench")
    parser.add_argument("--keep", metavar="DIR", help="keep callgrind's files there")
    parser.add_argument("--bare-per-call", type=float, help="instructions, measured before")
    args = parser.parse_args()
    if args.callgrind:
        ours = per_call(args, "loopbench")
        bare = args.bare_per_call or per_call(args, "bare")
        print(
            f"C={args.concurrency[0]}, samples {args.sizes[0]} and {args.sizes[1]} "
            f"differenced: instructions per call, loopbench {ours / 1e6:.3f} M, bare "
            f"conversations {bare / 1e6:.3f} M, loopbench's own {(ours - bare) / 1e6:.3f} M"
        )
        return
    with overhead.endpoint(args.latency, args.tool_turns) as base_url:
        if not args.cprofile:
            return one_grid(base_url, args)
        profile = cProfile.Profile()
        profile.runcall(one_grid, base_url, args)
    pstats.Stats(profile).sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
