"""The progress of a grid as it runs: a live view at a terminal, plain lines for logs.

At a terminal, rich redraws the view (``progress_view.frame``) a few times a second
from counts that each record updates in O(1). With --quiet, or when stderr is not a
terminal, it is a line per tenth of the grid (of each round) and one at the end.

Rich draws with escape sequences of its own, so it writes below the command's
``loopbench.harness.streams.PrintableStream``; the names it shows are made printable first, and
whatever else is printed while the view is live (rich's proxies take it) is made printable
above the proxies.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Mapping

import click
from rich.console import Console, RenderableType
from rich.file_proxy import FileProxy
from rich.live import Live

from loopbench.harness.cli.progress_view import NONE, GridCounts, Tally, clock_time, counted, frame
from loopbench.harness.models.pending_batches import PENDING_BATCHES, PendingBatches
from loopbench.harness.observer import Observer
from loopbench.harness.results.records import RunRecord
from loopbench.harness.stats.separation import Separation
from loopbench.harness.streams import PrintableStream, unescaped
from loopbench.harness.terminal import printable


class Progress(Observer):
    """The grid's observer at the command line. Use it as a context manager, or call
    ``close``: that stops the live view and, in plain mode, prints the final line."""

    def __init__(
        self,
        plain: bool,
        *,
        rounds: bool = False,
        console: Console | None = None,
        clock: Callable[[], float] = time.monotonic,
        batches: PendingBatches = PENDING_BATCHES,
    ) -> None:
        # guard: terminal-live-view-draws-below
        self._console = console or Console(file=unescaped(sys.stderr))
        # Not at a terminal (a log, a CI job): plain lines, as with ``plain``.
        self.plain = plain or (console is None and not sys.stderr.isatty())
        self.counts = GridCounts(rounds=rounds)
        self._clock = clock
        self._began: float | None = None
        self._live: Live | None = None
        self._closed = False
        self._lock = threading.Lock()  # rich redraws from its own thread
        #: The batches pending (``--batch``): said as each is submitted and done, and shown.
        self._batches = batches
        batches.listen(self.note)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def started(self, todo: int, skipped: int, by_arm: Mapping[str, int] | None = None) -> None:
        """Called once per grid, or once per round with --until-separated: the round's
        counts start again; each arm's go on, so its accuracy is over all its runs.
        ``by_arm`` (runs to do per arm), when the caller knows it, shows in the arm rows."""
        with self._lock:
            self.counts.start(todo, by_arm)
        if self._began is None:
            self._began = self._clock()
        round_ = f"round {self.counts.round}: " if self.counts.rounds else ""
        self.note(f"{round_}{todo} runs to do, {skipped} already recorded")
        if not self.plain and self._live is None:
            self._live = Live(
                console=self._console, refresh_per_second=4, get_renderable=self._frame
            )
            self._live.start()
            # guard: terminal-what-printed-while-view
            _printable_above_proxies()

    def recorded(self, record: RunRecord) -> None:
        with self._lock:
            self.counts.add(record)
        now = self.counts.this_round
        todo = now.todo or 0
        if self.plain and (now.done % max(1, todo // 10) == 0 or now.done == todo):
            replayed = f", {now.replayed} replayed" if now.replayed else ""
            pending = f"; {batches}" if (batches := self._batches.summary()) else ""
            self.note(
                f"  {now.done}/{todo} runs, {now.correct} correct, {self._rest(now)}{replayed}"
                f"{pending}"
            )

    def decided(self, state: Separation) -> None:
        """A round of --until-separated ended: which arms stopped."""
        stopped = ", ".join(f"{arm} ({d.look.verdict})" for arm, d in state.decisions.items())
        self.note(
            f"round {state.rounds}: {len(state.running)} arm(s) running"
            + (f"; stopped: {stopped}" if stopped else "")
        )

    def note(self, text: str) -> None:
        """A line of the log; at a terminal, printed above the live view."""
        if self.plain:
            click.echo(printable(text), err=True)
        else:
            self._console.print(printable(text), markup=False, highlight=False)

    def close(self) -> None:
        self._batches.ignore(self.note)
        if self._live is not None:
            self._live.stop()
            self._live = None
        if self.plain and self._began is not None and not self._closed:
            every = self.counts.everything
            cost, replay = every.spent(), every.replay()
            spent = "" if cost == NONE else f", {cost} spent"
            replay = f"; {replay}" if replay else ""
            self.note(
                f"done: {every.done} runs in {clock_time(self._elapsed())}, {every.correct} "
                f"correct of {every.graded} graded, {self._rest(every)}{spent}{replay}"
            )
        self._closed = True

    def _rest(self, tally: Tally) -> str:
        errors = counted(tally.errors, "error", "errors")
        retries = counted(tally.retries, "retry", "retries")
        return f"{errors}, {retries}, {self.counts.sent(tally, self._elapsed())}"

    def _elapsed(self) -> float:
        return 0.0 if self._began is None else self._clock() - self._began

    def _frame(self) -> RenderableType:
        with self._lock:
            return frame(self.counts, self._elapsed(), self._batches.summary())


def _printable_above_proxies() -> None:
    """What is printed while the live view runs, which rich's proxies pass on to the view's
    stream as it is, made printable before them. Stopping the view puts back the streams
    that were there before it started."""
    if isinstance(sys.stdout, FileProxy):
        sys.stdout = PrintableStream(sys.stdout)
    if isinstance(sys.stderr, FileProxy):
        sys.stderr = PrintableStream(sys.stderr)
