"""What checking a response cache on opening costs: ``PRAGMA quick_check`` reads every page,
so opening grows with the file. Each size is a cache of N stored responses of about 4 KB
(a request and a reply as a run stores them), opened as ``run --cache`` opens it; the
file is read warm (from the OS's page cache, as right after a run).

    .venv/bin/python bench/cache_open.py                 # 1,000, 10,000 and 100,000
    .venv/bin/python bench/cache_open.py --sizes 1000 --repeats 5
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from tabulate import tabulate

from loopbench.harness.models.cache import CACHE_FILE, ResponseCache, canonical_request, request_key
from loopbench.harness.models.types import Message, ModelRequest, ModelResponse, Usage


def fill(folder: Path, size: int) -> None:
    cache = ResponseCache(folder)
    cache._db.execute("BEGIN")  # one transaction: a commit per response would take minutes
    for n in range(size):
        question = f"question {n}: " + "context " * 120
        canonical = canonical_request(ModelRequest("m", (Message("user", question),)), "a#0", 0)
        reply = ModelResponse(Message("assistant", "reasoning " * 80), usage=Usage(300, 80))
        cache.put(request_key(canonical), canonical, reply)
    cache._db.execute("COMMIT")
    cache.close()


def opening_s(folder: Path, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        began = time.perf_counter()
        ResponseCache(folder).close()
        best = min(best, time.perf_counter() - began)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rows = []
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            fill(folder, size)
            megabytes = (folder / CACHE_FILE).stat().st_size / 1e6
            rows.append(
                [f"{size:,}", f"{megabytes:,.1f}", f"{opening_s(folder, args.repeats):.3f}"]
            )
    print(tabulate(rows, headers=["responses", "MB", "open s (best)"], disable_numparse=True))


if __name__ == "__main__":
    main()
