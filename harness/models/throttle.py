"""Adaptive concurrency and a rate limit for the HTTP client.

``AdaptiveLimit`` is additive-increase, multiplicative-decrease (AIMD), as TCP
congestion control: every success raises the number of requests allowed in flight
by one over the current limit (about one more per round of replies), and a 429
halves it. A burst of 429s answering requests that were all sent before the last cut
counts as one signal, so one overloaded moment does not collapse the limit to one.
It never goes above the ``--concurrency`` asked for, nor below one.

``RateLimit`` spaces request starts at most ``rate`` per second (``--rate-limit``),
for endpoints that publish their limit: no 429 storm to learn it from.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


class AdaptiveLimit:
    def __init__(
        self, ceiling: int, clock: Callable[[], float] = time.monotonic, floor: int = 1
    ) -> None:
        self.ceiling = ceiling
        self.floor = floor
        self.limit = float(ceiling)
        self.in_flight = 0
        #: How often the limit was cut, and the lowest it went: what a run reports.
        self.cuts = 0
        self.lowest = ceiling
        self._clock = clock
        self._last_cut = float("-inf")
        self._freed = asyncio.Condition()

    async def acquire(self) -> float:
        """Wait for a slot; returns when the request started, for ``throttled``."""
        async with self._freed:
            await self._freed.wait_for(lambda: self.in_flight < int(self.limit))
            self.in_flight += 1
        return self._clock()

    async def release(self) -> None:
        async with self._freed:
            self.in_flight -= 1
            self._freed.notify_all()

    def succeeded(self) -> None:
        self.limit = min(float(self.ceiling), self.limit + 1 / self.limit)

    def throttled(self, started: float) -> None:
        """A 429 for a request started at ``started``; halves the limit once per burst."""
        if started <= self._last_cut:
            return  # sent before the last cut: part of the burst already answered
        self.limit = max(float(self.floor), self.limit / 2)
        self._last_cut = self._clock()
        self.cuts += 1
        self.lowest = min(self.lowest, int(self.limit))


class RateLimit:
    def __init__(self, per_second: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._interval = 1 / per_second
        self._clock = clock
        self._next = float("-inf")

    async def wait(self) -> None:
        """Return when the next request may start."""
        now = self._clock()
        start = max(now, self._next)
        self._next = start + self._interval
        if start > now:
            await asyncio.sleep(start - now)
