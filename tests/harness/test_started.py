"""A run's start as its record writes it: the text ``datetime.now(UTC).isoformat`` writes,
to the millisecond."""

import random
from datetime import UTC, datetime

import pytest

from loopbench.harness import started


def written_by_datetime(ns: int) -> str:
    """What ``datetime.now(UTC)`` at ``ns`` writes: its microseconds rounded down."""
    us = ns // 1000
    at = datetime.fromtimestamp(us // 10**6, UTC).replace(microsecond=us % 10**6)
    return at.isoformat(timespec="milliseconds")


def test_a_start_is_written_as_datetime_writes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(5)
    second = 1_765_091_294
    clock = [(second + n // 50) * 10**9 + rng.randrange(10**9) for n in range(2_000)]
    clock += [rng.randrange(4 * 10**18) for _ in range(2_000)]  # a new second each time
    clock += [second * 10**9, second * 10**9 + 999_999_999]  # a second's first and last ns
    for ns in clock:
        monkeypatch.setattr(started.time, "time_ns", lambda ns=ns: ns)
        assert started.started_at() == written_by_datetime(ns)


def test_a_start_is_now() -> None:
    before = datetime.now(UTC).isoformat(timespec="milliseconds")
    now = started.started_at()
    after = datetime.now(UTC).isoformat(timespec="milliseconds")
    assert before <= now <= after and now.endswith("+00:00") and len(now) == len(before)
