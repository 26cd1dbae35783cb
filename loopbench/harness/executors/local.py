"""Runs made in this process: ``concurrency`` coroutines taking jobs from one iterator.

A run that raises (an endpoint refusing a reasoning setting) stops the others before it
is raised: the runs already finished are written, no half-made run is."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from loopbench.harness.runner import Finish, Job, Runner


async def run_local(runner: Runner, jobs: Iterable[Job], concurrency: int, finish: Finish) -> None:
    queue = iter(jobs)

    async def worker() -> None:
        for job in queue:  # a shared iterator: each job is taken by exactly one worker
            record, trace = await runner.run_one(job)
            finish(record, trace.to_json())

    workers = [asyncio.ensure_future(worker()) for _ in range(max(1, concurrency))]
    try:
        await asyncio.gather(*workers)
    except BaseException:  # a run that stops the grid (ReasoningRefused): the others stop too
        for other in workers:
            other.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        raise
