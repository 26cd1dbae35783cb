"""The harness's own overhead: throughput against a fake endpoint with fixed latency.

A fake OpenAI-compatible server runs in a separate process on loopback and answers
every request after LATENCY seconds. The whole runner path runs against it (arm
parsing, pattern, counting client, HTTP, grading, records and traces appended to
disk), and the throughput is compared with the ideal, calls x latency / concurrency, and
with bare requests through the same httpx transport and nothing else: the ceiling
the HTTP stack itself reaches against this endpoint on this machine.

    .venv/bin/python bench/overhead.py                 # concurrency 1, 16 and 64
    .venv/bin/python bench/overhead.py --arm react_text --calls 1600

Both processes share this machine's cores, as the issue's targets assume.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness.experiment import parse_arms
from harness.grid import Grid, run_grid
from harness.models.openai_compat import Connection, OpenAICompatClient
from harness.models.types import Message, ModelRequest
from harness.results.store import ResultsFolder, read_records
from harness.runner import RunSettings
from tasks.loading import load_taskset


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen(
        [sys.executable, "-m", "harness.fakes.serve", "--latency", str(latency)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    return server, server.stdout.readline().strip()


async def measure(base_url: str, arm: str, calls: int, concurrency: int) -> dict[str, float]:
    taskset = load_taskset("depot")
    arms = parse_arms([arm])
    calls_per_run = {"direct": 1, "cot": 1}.get(arm.split(":")[0], 2)
    repeats = max(1, calls // (len(taskset.tasks) * calls_per_run))
    settings = RunSettings(concurrency)
    with (
        tempfile.TemporaryDirectory() as tmp,
        ResultsFolder.open(Path(tmp), {"task_set": taskset.name, "model": "fake"}) as folder,
    ):
        connection = Connection(concurrency=concurrency)
        async with OpenAICompatClient(base_url, connection=connection) as client:
            # One warm-up run opens connections and fills caches before the clock starts.
            await run_grid(Grid(taskset, arms, 1, "fake"), client, folder, settings)
            cpu, wall = time.process_time(), time.perf_counter()
            await run_grid(Grid(taskset, arms, repeats + 1, "fake"), client, folder, settings)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        records = read_records(tmp)
    made = sum(r.turns for r in records if r.repeat >= 1)
    return {"calls": made, "wall_s": wall, "cpu_ms_per_call": 1000 * cpu / made}


async def bare_requests(base_url: str, calls: int, concurrency: int) -> float:
    """Calls per second of bare POSTs through the client's own transport, same concurrency."""
    request = ModelRequest(model="fake", messages=(Message("user", "q"),))
    connection = Connection(concurrency=concurrency)
    async with OpenAICompatClient(base_url, connection=connection) as client:

        async def worker(count: int) -> None:
            for _ in range(count):
                await client.complete(request)

        await asyncio.gather(*(worker(1) for _ in range(concurrency)))
        wall = time.perf_counter()
        await asyncio.gather(*(worker(calls // concurrency) for _ in range(concurrency)))
        wall = time.perf_counter() - wall
    return (calls // concurrency) * concurrency / wall


def main() -> None:
    parser = argparse.ArgumentParser(description="loopbench runner overhead")
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--calls", type=int, default=800)
    parser.add_argument("--arm", default="direct")
    parser.add_argument("--concurrency", type=int, nargs="*", default=[1, 16, 64])
    args = parser.parse_args()
    server, base_url = start_server(args.latency)
    try:
        print(f"arm {args.arm}, fake endpoint latency {args.latency * 1000:.0f} ms")
        print(
            "concurrency  calls  seconds  calls/s  ideal/s  % of ideal  harness CPU ms/call"
            "  client-only calls/s"
        )
        for concurrency in args.concurrency:
            calls = args.calls if concurrency > 1 else max(40, args.calls // 20)
            got = asyncio.run(measure(base_url, args.arm, calls, concurrency))
            bare = asyncio.run(bare_requests(base_url, calls, concurrency))
            rate = got["calls"] / got["wall_s"]
            ideal = concurrency / args.latency
            print(
                f"{concurrency:>11}  {got['calls']:>5.0f}  {got['wall_s']:>7.2f}  {rate:>7.0f}"
                f"  {ideal:>7.0f}  {100 * rate / ideal:>9.0f}%  {got['cpu_ms_per_call']:>19.2f}"
                f"  {bare:>7.0f} ({100 * bare / ideal:.0f}%)"
            )
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
