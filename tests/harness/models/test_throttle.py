"""AIMD concurrency and the rate limit, on their own."""

import asyncio

import pytest

from harness.models.throttle import AdaptiveLimit, RateLimit


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_429_halves_the_limit_and_successes_win_it_back_one_per_round():
    clock = Clock()
    limit = AdaptiveLimit(16, clock)
    clock.now = 1.0
    limit.throttled(started=0.5)
    assert limit.limit == 8
    for _ in range(8):  # one round of replies at a limit of 8
        limit.succeeded()
    assert 8.9 < limit.limit < 9.1
    for _ in range(1000):
        limit.succeeded()
    assert limit.limit == 16  # never above what was asked for


def test_a_burst_of_429s_for_requests_sent_before_the_cut_is_one_signal():
    clock = Clock()
    limit = AdaptiveLimit(64, clock)
    clock.now = 2.0
    for _ in range(30):  # thirty requests in flight since t=1 all answer 429
        limit.throttled(started=1.0)
    assert (limit.limit, limit.cuts) == (32, 1)
    clock.now = 3.0
    limit.throttled(started=2.5)  # sent after the cut: a new signal
    assert (limit.limit, limit.cuts) == (16, 2)
    for _ in range(20):
        clock.now += 1
        limit.throttled(started=clock.now - 0.5)
    assert limit.limit == 1  # never below one


def test_at_most_limit_requests_are_in_flight():
    async def scenario():
        limit = AdaptiveLimit(4)
        limit.limit = 2
        peak = 0

        async def request():
            nonlocal peak
            await limit.acquire()
            peak = max(peak, limit.in_flight)
            await asyncio.sleep(0.001)
            await limit.release()

        await asyncio.gather(*(request() for _ in range(20)))
        return peak, limit.in_flight

    assert asyncio.run(scenario()) == (2, 0)


@pytest.mark.parametrize("rate", [50.0, 200.0])
def test_the_rate_limit_spaces_request_starts(rate):
    async def scenario():
        limiter = RateLimit(rate)
        loop = asyncio.get_running_loop()
        starts = []
        for _ in range(10):
            await limiter.wait()
            starts.append(loop.time())
        return starts

    starts = asyncio.run(scenario())
    assert starts[-1] - starts[0] >= 0.9 * 9 / rate  # ten starts span nine intervals
