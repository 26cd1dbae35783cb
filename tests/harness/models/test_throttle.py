"""AIMD concurrency and the rate limit, on their own."""

import asyncio

import pytest

from loopbench.harness.models.throttle import RUN_SLOT_WAITS, AdaptiveLimit, RateLimit, SlotWaits


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
            limit.release()

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


def test_waiting_requests_get_their_slots_first_come_first_served():
    async def scenario():
        limit = AdaptiveLimit(1)
        order = []

        async def request(name):
            await limit.acquire()
            order.append(name)
            await asyncio.sleep(0)
            limit.release()

        first = asyncio.ensure_future(request("first"))
        await asyncio.sleep(0)  # "first" holds the slot; the others queue in this order
        await asyncio.gather(first, *(request(name) for name in "abcdef"))
        return order, limit.in_flight

    assert asyncio.run(scenario()) == (["first", *"abcdef"], 0)


def test_a_cancelled_wait_gives_up_its_place_and_leaks_no_slot():
    async def scenario():
        limit = AdaptiveLimit(1)
        await limit.acquire()
        gone = asyncio.ensure_future(limit.acquire())
        stays = asyncio.ensure_future(limit.acquire())
        await asyncio.sleep(0)
        gone.cancel()
        limit.release()  # the slot goes to the request still waiting
        await asyncio.wait_for(stays, 5)
        limit.release()
        in_flight = limit.in_flight
        await asyncio.wait_for(limit.acquire(), 5)  # nobody is left ahead of a new request
        return gone.cancelled(), in_flight, limit.in_flight

    assert asyncio.run(scenario()) == (True, 0, 1)


def test_a_request_cancelled_as_it_is_given_a_slot_hands_it_on():
    async def scenario():
        limit = AdaptiveLimit(1)
        await limit.acquire()
        given = asyncio.ensure_future(limit.acquire())
        after = asyncio.ensure_future(limit.acquire())
        await asyncio.sleep(0)
        limit.release()  # given the slot, but cancelled before it runs
        given.cancel()
        await after  # so the slot passes on to the next
        limit.release()
        return limit.in_flight

    assert asyncio.run(scenario()) == 0


class Waits:
    """A run's slot waits on a clock the test moves."""

    def __init__(self) -> None:
        self.clock = Clock()
        self.run = SlotWaits(self.clock)

    def at(self, now: float) -> None:
        self.clock.now = now


def test_a_run_has_waited_only_while_every_call_it_has_under_way_waits_for_a_slot():
    waits = Waits()
    run = waits.run
    with run.call():  # one call: waits 0-2, then is served 2-5
        with run.waiting():
            waits.at(2.0)
        waits.at(5.0)
    assert run.waited_s == 2.0
    with run.call(), run.call():  # two calls at once from t=5
        waits.at(6.0)
        with run.waiting():  # the first waits 6-8 while the second is served: not waiting
            waits.at(7.0)
            with run.waiting():  # from 7 both wait, until the first gets its slot at 8
                waits.at(8.0)
            waits.at(9.0)
    assert run.waited_s == 3.0
    waits.at(20.0)
    assert run.waited_s == 3.0  # no call under way, no wait


def test_a_wait_for_a_slot_counts_for_the_run_making_the_call():
    async def scenario():
        limit = AdaptiveLimit(1)
        run = SlotWaits()
        await limit.acquire()  # another run holds the only slot for 0.2 s

        async def other_run():
            await asyncio.sleep(0.2)
            limit.release()

        async def this_run():
            token = RUN_SLOT_WAITS.set(run)
            try:
                with run.call():
                    await limit.acquire()
                    limit.release()
            finally:
                RUN_SLOT_WAITS.reset(token)

        await asyncio.gather(other_run(), this_run())
        return run.waited_s

    assert 0.15 < asyncio.run(scenario()) < 1.0


def test_a_limit_climbing_back_lets_a_waiting_request_go_at_once():
    async def scenario():
        limit = AdaptiveLimit(2)
        limit.limit = 1.0  # cut by a 429
        await limit.acquire()
        waiting = asyncio.ensure_future(limit.acquire())
        await asyncio.sleep(0)
        limit.succeeded()  # back to 2: the waiting request need not wait for a release
        await asyncio.wait_for(waiting, 1)
        return limit.in_flight

    assert asyncio.run(scenario()) == 2
