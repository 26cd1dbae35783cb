"""Runs made in this process: ``concurrency`` coroutines taking jobs from one iterator."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from harness.runner import Finish, Job, Runner


async def run_local(runner: Runner, jobs: Iterable[Job], concurrency: int, finish: Finish) -> None:
    queue = iter(jobs)

    async def worker() -> None:
        for job in queue:  # a shared iterator: each job is taken by exactly one worker
            record, trace = await runner.run_one(job)
            finish(record, trace.to_json())

    await asyncio.gather(*(worker() for _ in range(max(1, concurrency))))
