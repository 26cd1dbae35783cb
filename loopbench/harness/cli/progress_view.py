"""What the progress of a grid counts, record by record, and the rich frame that shows it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta

from rich import box
from rich.console import Group, RenderableType
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from loopbench.harness.results.records import RunRecord
from loopbench.harness.results.statuses import INFRASTRUCTURE_STATUSES
from loopbench.harness.terminal import one_line

NONE = "—"


@dataclass
class Tally:
    """Counts over some runs (one arm's, one round's, all of them); O(1) per record."""

    todo: int | None = None
    """Runs to do, when known."""
    done: int = 0
    correct: int = 0
    graded: int = 0
    """Runs that did not end in api_error or pattern_error: accuracy's denominator."""
    errors: int = 0
    retries: int = 0
    turns: int = 0
    """Model calls, sent or replayed."""
    replayed: int = 0
    """Calls replayed from the response cache or shared by --paired: not sent again."""
    tokens: int = 0
    cost: float | None = 0.0
    """Spent: the cost of the calls sent. None once a record had no price: a partial sum
    would read as the whole cost."""
    replayed_cost: float | None = 0.0
    """What the replayed calls would have cost had they been sent; None with ``cost``."""

    def add(self, record: RunRecord) -> None:
        self.done += 1
        # guard: live-accuracy-leaves-out
        if record.status in INFRASTRUCTURE_STATUSES:
            self.errors += 1
        else:
            self.graded += 1
            self.correct += record.correct is True
        self.retries += record.retries
        self.turns += record.turns
        self.replayed += record.cache_hits
        self.tokens += record.tokens_in + record.tokens_out
        if self.cost is None:
            return
        if record.cost_usd is None:
            self.cost = self.replayed_cost = None
            return
        # cost_usd counts the replayed calls as first served; cost_from_cache_usd is them.
        saved = record.cost_from_cache_usd or 0.0
        # guard: progress-replayed-calls-not-counted
        self.cost += max(0.0, record.cost_usd - saved)
        self.replayed_cost = (self.replayed_cost or 0.0) + saved

    @property
    def sent(self) -> int:
        """Calls sent to an endpoint (failed ones included)."""
        return self.turns - self.replayed

    def accuracy(self) -> str:
        if not self.graded:
            return NONE
        return f"{self.correct}/{self.graded} {self.correct / self.graded:4.0%}"

    def spent(self) -> str:
        return NONE if self.cost is None or not self.done else f"${self.cost:.4f}"

    def replay(self) -> str:
        """The replayed calls and what they would have cost; empty when none were."""
        if not self.replayed:
            return ""
        worth = (
            "" if self.replayed_cost is None else f" (would have cost ${self.replayed_cost:.4f})"
        )
        return f"{counted(self.replayed, 'call', 'calls')} replayed, not sent{worth}"


@dataclass
class GridCounts:
    """A grid's counts: this round's, every arm's and all runs' since the first round."""

    rounds: bool = False
    """Numbered rounds (--until-separated): ``start`` is called once per round."""
    round: int = 0
    this_round: Tally = field(default_factory=Tally)
    everything: Tally = field(default_factory=Tally)
    arms: dict[str, Tally] = field(default_factory=dict)

    def start(self, todo: int, by_arm: Mapping[str, int] | None = None) -> None:
        self.round += 1
        self.this_round = Tally(todo=todo)
        for arm, n in (by_arm or {}).items():
            tally = self.arms.setdefault(arm, Tally(todo=0))
            tally.todo = (tally.todo or 0) + n

    def add(self, record: RunRecord) -> None:
        self.this_round.add(record)
        self.everything.add(record)
        self.arms.setdefault(record.arm, Tally()).add(record)

    def calls_per_s(self, elapsed: float) -> float:
        """Calls sent a second: a replayed one costs no time at the endpoint."""
        # guard: progress-calls-second-count-only
        return self.everything.sent / elapsed if elapsed > 0 else 0.0

    def sent(self, tally: Tally, elapsed: float) -> str:
        """``tally``'s calls sent, and all calls sent a second."""
        return f"{counted(tally.sent, 'call', 'calls')} sent ({self.calls_per_s(elapsed):.1f}/s)"

    def eta(self, elapsed: float) -> float | None:
        """Seconds left in this round at the pace of every run so far."""
        left = (self.this_round.todo or 0) - self.this_round.done
        return left * elapsed / self.everything.done if self.everything.done else None


def counted(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def clock_time(seconds: float | None) -> str:
    return NONE if seconds is None else str(timedelta(seconds=round(seconds)))


def frame(counts: GridCounts, elapsed: float, batches: str = "") -> RenderableType:
    """The live view: where this round stands, a row per arm, the totals, and the batches
    pending (``batches``, their summary, under ``--batch``)."""
    now, every = counts.this_round, counts.everything
    todo = now.todo or 0
    runs = f"{now.done}/{todo} runs"
    if counts.rounds:
        runs = f"round {counts.round} · {runs}"
        runs += f" · {every.done} in all" if counts.round > 1 else ""
    header = f"{runs} · {clock_time(elapsed)} elapsed · ETA {clock_time(counts.eta(elapsed))}"
    table = Table(box=box.SIMPLE_HEAD, show_edge=False)
    table.add_column("arm", overflow="fold")
    for name in ("runs", "accuracy", "errors", "tokens", "cost"):
        table.add_column(name, justify="right")
    for arm, tally in counts.arms.items():
        done = str(tally.done) if tally.todo is None else f"{tally.done}/{tally.todo}"
        # guard: terminal-live-view-shows-arm
        table.add_row(
            Text(one_line(arm)),
            done,
            tally.accuracy(),
            str(tally.errors),
            f"{tally.tokens:,}",
            tally.spent(),
        )
    totals = [
        counts.sent(every, elapsed),
        counted(every.errors, "error", "errors"),
        counted(every.retries, "retry", "retries"),
    ]
    if (spent := every.spent()) != NONE:
        totals.append(f"{spent} spent")
    if replay := every.replay():
        totals.append(replay)
    top = Table.grid(padding=(0, 1))
    top.add_row(ProgressBar(total=max(1, todo), completed=now.done, width=40), Text(header))
    shown: list[RenderableType] = [top, table, Text(" · ".join(totals))]
    if batches:
        shown.append(Text(batches))
    return Group(*shown)
