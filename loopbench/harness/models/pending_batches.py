"""The batches pending in this process (``--batch``), for the progress view: when each was
submitted and how many requests it holds, and a line said as each is submitted and done.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta


@dataclass(frozen=True)
class Pending:
    since: float
    """When it was submitted (``time.time()``), or when a resumed run took it up."""
    requests: int


class PendingBatches:
    """Batches pending, by id; listeners are told a line as each is submitted and done."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.pending: dict[str, Pending] = {}
        self._listeners: set[Callable[[str], None]] = set()
        self._clock = clock

    def listen(self, listener: Callable[[str], None]) -> None:
        self._listeners.add(listener)

    def ignore(self, listener: Callable[[str], None]) -> None:
        self._listeners.discard(listener)

    def submitted(self, batch_id: str, requests: int, resumed: bool = False) -> None:
        self.pending[batch_id] = Pending(self._clock(), requests)
        how = "resumed from the journal" if resumed else "submitted"
        self._say(f"batch {batch_id} {how}: {requests} request{'s' * (requests != 1)}")

    def done(self, batch_id: str, state: str) -> None:
        was = self.pending.pop(batch_id, None)
        if was is not None:
            self._say(f"batch {batch_id} {state} after {_age(self._clock() - was.since)}")

    def summary(self) -> str:
        """``2 batches pending (40 requests), the oldest 0:03:12``; empty when none is."""
        if not self.pending:
            return ""
        n, requests = len(self.pending), sum(p.requests for p in self.pending.values())
        oldest = self._clock() - min(p.since for p in self.pending.values())
        batches = "1 batch" if n == 1 else f"{n} batches"
        return f"{batches} pending ({requests} requests), the oldest {_age(oldest)}"

    def _say(self, line: str) -> None:
        for listener in list(self._listeners):
            listener(line)


def _age(seconds: float) -> str:
    return str(timedelta(seconds=round(max(0.0, seconds))))


#: This process's.
PENDING_BATCHES = PendingBatches()
