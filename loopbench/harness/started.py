"""When a run started, as its record writes it: UTC, ISO 8601, to the millisecond.

``datetime.now(UTC).isoformat(timespec="milliseconds")`` formats the whole date and time
(through ``sprintf``) for every run; runs start hundreds to a second, so the date and
time to the second are written once a second here, and only the milliseconds each time.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

#: The second last written, and its text up to the second (``2026-12-07T07:08:14``).
_last: tuple[int, str] = (-1, "")


def started_at() -> str:
    """Now, as ``datetime.now(UTC).isoformat(timespec="milliseconds")`` writes it: the
    same clock, its microseconds (and so its milliseconds) rounded down as there."""
    global _last
    second, ns = divmod(time.time_ns(), 1_000_000_000)
    if second != _last[0]:
        _last = (second, datetime.fromtimestamp(second, UTC).isoformat()[:19])
    return f"{_last[1]}.{ns // 1_000_000:03d}+00:00"
