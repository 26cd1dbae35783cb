"""Part of a large report's or comparison's work done in a forked child, on the second
core, while this process does the rest.

At a million runs a report is some seven seconds of one core's work, most of it in Python,
which a thread cannot run beside the main one. A forked child has the runs already read
(the pages are shared, not copied) and sends back only what it made: a few thousand runs'
list and the failure counts, small beside the frame. What the child writes to stderr is
held and written here when its result is taken, where the work would have written it.

Where there is no fork (not POSIX) or another thread runs (an application calling the
report from a server's thread), or the child's result cannot be sent (an exception
that does not pickle) or it died, the work is done here instead, as it would have been.
"""

from __future__ import annotations

import io
import multiprocessing
import pickle
import sys
import threading
import warnings
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from typing import Any, Generic, TypeVar

#: Runs from which a comparison's arms are split with a child: a fork costs some 20 ms.
FORK_FROM = 100_000
T = TypeVar("T")
S = TypeVar("S")


class Aside(Generic[T]):
    """``work`` started now in a forked child; ``result`` gives what it returned (or raises
    what it raised), as if it were called there."""

    def __init__(self, work: Callable[[], T]) -> None:
        self.work = work
        self.receiving: Connection | None = None
        self.child: Any = None
        # guard: fork-only-with-no-other-thread
        if threading.active_count() > 1:  # it may hold a lock the child would wait on forever
            return
        try:
            context = multiprocessing.get_context("fork")
        except ValueError:  # no fork on this platform: the work is done in result()
            return
        receiving, sending = context.Pipe(duplex=False)
        self.child = context.Process(target=_send, args=(work, sending), daemon=True)
        with warnings.catch_warnings():
            # Python 3.12 warns of a fork with threads alive (a C library's idle pool here):
            # the child runs Python alone and waits on no lock those threads hold.
            warnings.simplefilter("ignore", DeprecationWarning)
            self.child.start()
        sending.close()
        self.receiving = receiving

    @property
    def forked(self) -> bool:
        """Whether a child does the work (else ``result`` does it here)."""
        return self.receiving is not None

    def result(self) -> T:
        """What ``work`` returned; raises what it raised."""
        if self.receiving is None:
            return self.work()
        try:
            outcome = self.receiving.recv()
        except Exception:  # the child died, or what it sent does not unpickle: done here
            outcome = None
        finally:
            self.receiving.close()
            self.child.join()
        if outcome is None:
            return self.work()
        returned, value, said = outcome
        if said:
            sys.stderr.write(said)
        if not returned:
            raise value
        result: T = value
        return result

    def cancel(self) -> None:
        """Stop the child: its result is not wanted."""
        if self.receiving is not None:
            self.child.terminate()
            self.receiving.close()
            self.child.join()
            self.receiving = None


def in_halves(work: Callable[[S], T], items: Sequence[S], *, fork: bool = True) -> list[T]:
    """``[work(item) for item in items]``: the second half of ``items`` in a forked child
    (when ``fork``) while this process does the first. The first error in the items' order
    is raised, as the list would raise it."""
    half = (len(items) + 1) // 2
    later = (
        Aside(lambda: [work(item) for item in items[half:]]) if fork and len(items) > 1 else None
    )
    try:
        first = [work(item) for item in (items[:half] if later else items)]
    except BaseException:
        if later is not None:
            later.cancel()
        raise
    return first + (later.result() if later else [])


def _send(work: Callable[[], object], sending: Connection) -> None:
    """In the child: run ``work``, its stderr held, and send (returned, value, said)."""
    said = io.StringIO()
    sys.stderr = said
    try:
        outcome: tuple[bool, object, str] = (True, work(), "")
    except Exception as exc:  # sent to be raised by the parent, as the work raised it
        outcome = (False, exc, "")
    try:
        sending.send((outcome[0], outcome[1], said.getvalue()))
    except (pickle.PicklingError, TypeError, AttributeError):
        sending.send(None)  # cannot be sent: the parent does the work again itself
    finally:
        sending.close()
