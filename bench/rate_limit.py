"""Throughput against an endpoint that rate-limits, with and without adaptive concurrency.

A fake OpenAI-compatible server on loopback admits RATE requests a second (a token
bucket holding one second's worth) and answers every other request 429, without a
Retry-After, as many providers do. The runner drives the `direct` arm over the depot
questions at concurrency 64 through the real HTTP client three ways:

- fixed: 64 in flight whatever the endpoint says (adaptive concurrency off), retrying
  each 429 with back-off;
- adaptive: AIMD, concurrency halved on a burst of 429s and raised after successes
  (the default);
- paced: adaptive, and --rate-limit RATE on top.

    .venv/bin/python bench/rate_limit.py                  # RATE 40, 400 calls
    .venv/bin/python bench/rate_limit.py --rate 80 --calls 800

Throughput near RATE with few 429s is the goal; "fixed" shows the storm it replaces.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import threading
import time
from pathlib import Path

from loopbench.harness.arms import parse_arms
from loopbench.harness.fakes.fake_server import FakeServer, Reply, default_responder
from loopbench.harness.grid import Grid, run_grid
from loopbench.harness.models.openai_compat import Connection, OpenAICompatClient, RetryPolicy
from loopbench.harness.results.reading import read_records
from loopbench.harness.results.store import ResultsFolder
from loopbench.harness.runner import RunSettings
from loopbench.tasks.loading import load_taskset


class Bucket:
    """RATE requests a second, a second's worth at most in hand; the rest get 429."""

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.tokens = rate
        self.last = time.monotonic()
        self.admitted = self.refused = 0
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, object]) -> Reply:
        with self._lock:
            now = time.monotonic()
            self.tokens = min(self.rate, self.tokens + (now - self.last) * self.rate)
            self.last = now
            if self.tokens < 1:
                self.refused += 1
                return Reply(status=429)
            self.tokens -= 1
            self.admitted += 1
        return default_responder(body)


async def measure(mode: str, rate: float, calls: int) -> dict[str, float | str]:
    taskset = load_taskset("depot")
    arms = parse_arms(["direct"])
    repeats = max(1, calls // len(taskset.tasks))
    bucket = Bucket(rate)
    with (
        FakeServer(bucket, latency_s=0.05, keep_bodies=False) as server,
        tempfile.TemporaryDirectory() as tmp,
        ResultsFolder.open(Path(tmp), {"task_set": "depot", "model": "fake"}) as folder,
    ):
        connection = Connection(
            rate_limit=rate if mode == "paced" else None,
            concurrency=64,
            adaptive=mode != "fixed",
            retry=RetryPolicy(max_retries=8, base_delay_s=0.25),
        )
        async with OpenAICompatClient(server.base_url, connection=connection) as client:
            began = time.perf_counter()
            grid = Grid(taskset, arms, repeats, "fake")
            await run_grid(grid, client, folder, RunSettings(64))
            wall = time.perf_counter() - began
            lowest = client.concurrency.lowest
        records = read_records(tmp)
    answered = sum(r.status == "answered" for r in records)
    return {
        "mode": mode,
        "runs": len(records),
        "answered": answered,
        "calls/s": answered / wall,
        "% of rate": 100 * answered / wall / rate,
        "429s": bucket.refused,
        "429s per call": bucket.refused / max(1, answered),
        "lowest concurrency": lowest,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=40.0, help="requests a second admitted")
    parser.add_argument("--calls", type=int, default=400, help="calls per mode")
    args = parser.parse_args()
    rows = [
        asyncio.run(measure(mode, args.rate, args.calls)) for mode in ("fixed", "adaptive", "paced")
    ]
    print(f"endpoint admits {args.rate:g} requests/s; concurrency 64; 50 ms per reply\n")
    print("| " + " | ".join(rows[0]) + " |")
    print("|" + "---|" * len(rows[0]))
    for row in rows:
        cells = [f"{v:.2f}" if isinstance(v, float) else str(v) for v in row.values()]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
