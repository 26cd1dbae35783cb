"""Processes opening one new response cache at the same moment (grids started together on
one ``--cache`` folder): how many openings are refused. SQLite refuses at once, without
waiting, a connection that wants a lock another connection making the file waits on; an
opening that met that used to be refused as "database is locked". With ``--patience 0``
an opening is tried once, as before; by default it is tried again for up to 30 s.

    .venv/bin/python bench/cache_open_together.py [--trials 100] [--processes 8]
    .venv/bin/python bench/cache_open_together.py --patience 0
"""

from __future__ import annotations

import argparse
import multiprocessing
import tempfile
import time
from multiprocessing.synchronize import Barrier
from pathlib import Path

from loopbench.harness.models.cache_file import BUSY_PATIENCE_S, CacheError, open_cache_file


def _open(path: str, patience_s: float, start: Barrier, refused: multiprocessing.Queue) -> None:
    start.wait()
    try:
        open_cache_file(Path(path), create=True, patience_s=patience_s).close()
        refused.put("")
    except CacheError as exc:
        refused.put(str(exc))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--patience", type=float, default=BUSY_PATIENCE_S)
    args = parser.parse_args()
    refusals: list[str] = []
    slowest = 0.0
    for _ in range(args.trials):
        path = str(Path(tempfile.mkdtemp()) / "responses.sqlite")
        start = multiprocessing.Barrier(args.processes)
        refused: multiprocessing.Queue = multiprocessing.Queue()
        openers = [
            multiprocessing.Process(target=_open, args=(path, args.patience, start, refused))
            for _ in range(args.processes)
        ]
        began = time.monotonic()
        for opener in openers:
            opener.start()
        for opener in openers:
            opener.join()
        slowest = max(slowest, time.monotonic() - began)
        refusals += [said for said in (refused.get() for _ in openers) if said]
    openings = args.trials * args.processes
    print(f"{len(refusals)} of {openings} openings refused (patience {args.patience:g} s)")
    print(f"slowest trial {slowest:.2f} s")
    for said in sorted({r.split(": ", 1)[1] for r in refusals}):
        print(f"  {said}")


if __name__ == "__main__":
    main()
