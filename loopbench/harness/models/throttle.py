"""Adaptive concurrency and a rate limit for the HTTP client.

``AdaptiveLimit`` is additive-increase, multiplicative-decrease (AIMD), as TCP
congestion control: every success raises the number of requests allowed in flight
by one over the current limit (about one more per round of replies), and a 429
halves it. A burst of 429s answering requests that were all sent before the last cut
counts as one signal, so one overloaded moment does not collapse the limit to one.
It never goes above the ``--concurrency`` asked for, nor below one.

Waiting requests get their slots first come, first served: a grid keeps more runs in
flight than requests (``RunConfig.runs_at_once``), so that a request is ready whenever
one ends. The time a run's calls spent waiting here is loopbench's queue, not the
endpoint's, and is kept out of the run's latency (``SlotWaits``).

``RateLimit`` spaces request starts at most ``rate`` per second (``--rate-limit``),
for endpoints that publish their limit: no 429 storm to learn it from.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar


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
        #: Requests waiting for a slot, in the order they came.
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    async def acquire(self) -> float:
        """Wait for a slot, first come first served; returns when the request started,
        for ``throttled``."""
        if self._waiters or not self._slot_free():
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            run = RUN_SLOT_WAITS.get()
            try:
                with run.waiting() if run is not None else nullcontext():
                    if STEP_DEADLINE.get() is None:  # no step timeout to hold still
                        await waiter
                    else:
                        with _step_paused():
                            await waiter
            except BaseException:
                if waiter.done() and not waiter.cancelled():
                    self._hand_on()  # it was given a slot it will not use
                elif waiter in self._waiters:
                    self._waiters.remove(waiter)
                raise
        else:  # a slot is free and nobody waits for one (the usual case)
            self.in_flight += 1
        return self._clock()

    def _slot_free(self) -> bool:
        # guard: aimd-never-exceeds-limit-flight
        return self.in_flight < int(self.limit)

    def _hand_on(self) -> None:
        """A slot is freed: to the longest waiting."""
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        """Give free slots to the longest waiting."""
        while self._waiters and self._slot_free():
            # guard: request-slots-go-first-come
            waiter = self._waiters.popleft()
            if not waiter.done():  # else cancelled while it waited
                self.in_flight += 1
                waiter.set_result(None)

    def release(self) -> None:
        """A request's slot is given back (not a coroutine: one less to make each call)."""
        self._hand_on()

    def succeeded(self) -> None:
        limit = self.limit
        if limit >= self.ceiling:  # at the ceiling, as nearly always: nothing changes
            return
        self.limit = min(float(self.ceiling), limit + 1 / limit)
        # guard: limit-climbing-back-after-429
        self._wake()  # a slot more, when the limit passed a whole number

    def throttled(self, started: float) -> None:
        """A 429 for a request started at ``started``; halves the limit once per burst."""
        # guard: aimd-counts-burst-once
        if started <= self._last_cut:
            return  # sent before the last cut: part of the burst already answered
        # guard: aimd-cuts-429
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


class SlotWaits:
    """How long one run waited on loopbench's own queue for request slots: the time
    during which every model call it had under way was waiting for a slot (calls made in
    parallel that overlap are counted once, and not while any of them is being served)."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self.waited_s = 0.0
        self._clock = clock
        self._calls = 0
        self._waiting = 0
        self._since = 0.0
        #: Whether every call under way waits, as of the last count.
        self._was_blocked = False
        # Made once: they hold nothing of one call, so every call shares them.
        self._call = _Counted(self, calls=1, waiting=0)
        self._wait = _Counted(self, calls=0, waiting=1)

    def call(self) -> AbstractContextManager[None]:
        """Around a whole model call, retries included."""
        return self._call

    def waiting(self) -> AbstractContextManager[None]:
        """Around one wait for a slot."""
        return self._wait

    def _add(self, calls: int = 0, waiting: int = 0) -> None:
        """Count calls or waits in or out, closing or opening a stretch of blocked time."""
        if self._was_blocked:
            self.waited_s += self._clock() - self._since
        self._calls += calls
        self._waiting += waiting
        # Blocked: every call under way waits (here rather than in a method more, as this is
        # counted four times a call).
        # guard: run-waits-only-while-all
        blocked = self._calls > 0 and self._waiting == self._calls
        self._was_blocked = blocked
        if blocked:
            self._since = self._clock()


class _Counted:
    """A model call, or a wait for a slot, counted in and out of a run's ``SlotWaits``: a
    plain context manager, as cheap as the two counts (one per call on the hot path)."""

    __slots__ = ("_calls", "_waiting", "_waits")

    def __init__(self, waits: SlotWaits, calls: int, waiting: int) -> None:
        self._waits, self._calls, self._waiting = waits, calls, waiting

    def __enter__(self) -> None:
        self._waits._add(self._calls, self._waiting)

    def __exit__(self, *exc: object) -> None:
        self._waits._add(-self._calls, -self._waiting)


#: The run being made in this context, if any: set by the runner for each run.
RUN_SLOT_WAITS: ContextVar[SlotWaits | None] = ContextVar("run_slot_waits", default=None)

#: The step timeout of the model call being made in this context, if any: set by the
#: limits wrapper (``step_timeout_s``).
STEP_DEADLINE: ContextVar[asyncio.Timeout | None] = ContextVar("step_deadline", default=None)


@contextmanager
def _step_paused() -> Iterator[None]:
    """The call's step timeout stands still while it waits for a slot: the wait is
    loopbench's queue, not the endpoint taking long."""
    deadline = STEP_DEADLINE.get()
    when = deadline.when() if deadline is not None else None
    if deadline is None or when is None:
        yield
        return
    loop = asyncio.get_running_loop()
    left = when - loop.time()
    try:
        # guard: step-timeout-stands-still-while
        deadline.reschedule(None)
    except RuntimeError:  # a deadline no longer running (a task that outlived its call)
        yield
        return
    try:
        yield
    finally:
        deadline.reschedule(loop.time() + left)
