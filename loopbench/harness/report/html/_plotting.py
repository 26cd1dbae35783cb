"""The report's figures, drawn by a child forked before the runs are read.

Importing matplotlib takes some 0.4 s of one core and drawing the two figures as much
again. A child forked before the runs are read imports it on the other core meanwhile (the
reading leaves that core mostly idle), then draws once given the summary, while this
process goes on. Where no child is forked (``Aside``: another thread runs), or it died,
the figures are drawn here when asked for, as they were.
"""

from __future__ import annotations

import base64
import math
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing import Pipe
from multiprocessing.connection import Connection
from pathlib import Path

import pandas as pd

from loopbench.harness.report.aside import Aside
from loopbench.harness.report.model_axis import config_labels
from loopbench.harness.report.plots import plot_frontier, plot_outcomes


@dataclass(frozen=True)
class Plot:
    title: str
    image: str | None
    """The figure as a ``data:`` URI (SVG), or None when it cannot be drawn."""
    missing: str = ""
    """Why there is no figure."""
    key: tuple[tuple[str, str, str, str], ...] = ()
    """The arms as the figure numbers them: number, arm, accuracy, cost per correct."""


class Drawing:
    """The figures of a summary not given yet, drawn in a child forked now."""

    def __init__(self) -> None:
        self.given: tuple[pd.DataFrame, str] | None = None
        receiving, sending = Pipe(duplex=False)
        self.receiving: Connection = receiving
        self.sending: Connection | None = sending
        self.aside = Aside(self._draw)
        self.receiving.close()  # the child's end: the child has its own
        if not self.aside.forked:
            self._close()

    def give(self, summary: pd.DataFrame, where: str) -> None:
        """The summary to draw, titled ``where``: sent to the child, which draws it now."""
        self.given = (summary, where)
        if self.aside.forked and self.sending is not None:
            self.sending.send(self.given)
            self._close()

    def result(self) -> list[Plot]:
        """The figures of the summary given (drawn here where no child could)."""
        return self.aside.result()

    def cancel(self) -> None:
        """Stop the child: no summary comes."""
        self._close()
        self.aside.cancel()

    def _draw(self) -> list[Plot]:
        if self.given is None:  # the child: matplotlib imported while the runs are read
            import matplotlib.figure  # noqa: F401

            self._close()  # this process's copy: the parent's closing it ends the wait
            self.given = self.receiving.recv()
        summary, where = self.given
        return plots(summary, where)

    def _close(self) -> None:
        if self.sending is not None:
            self.sending.close()
            self.sending = None


def plots(summary: pd.DataFrame, where: str) -> list[Plot]:
    """The frontier and how runs ended, as SVG; a figure that cannot be drawn says why."""
    figures: list[tuple[str, Callable[[pd.DataFrame, Path, str], None]]] = [
        ("Accuracy against cost per correct answer", plot_frontier),
        ("How runs ended", plot_outcomes),
    ]
    drawn = []
    with tempfile.TemporaryDirectory() as tmp:
        for number, (title, draw) in enumerate(figures):
            path = Path(tmp) / f"{number}.svg"
            try:
                draw(summary, path, where)
            except ValueError as exc:
                drawn.append(Plot(title, None, str(exc)))
                continue
            svg = base64.b64encode(path.read_bytes()).decode("ascii")
            key = _frontier_key(summary) if draw is plot_frontier else ()
            drawn.append(Plot(title, f"data:image/svg+xml;base64,{svg}", key=key))
    return drawn


def _frontier_key(summary: pd.DataFrame) -> tuple[tuple[str, str, str, str], ...]:
    """The frontier's legend, larger: ``plot_frontier`` numbers the arms that have a cost
    per correct answer, in the summary's order."""
    rows = summary[summary["cost_per_correct"].notna()]
    return tuple(
        (str(number), arm, f"{accuracy:.0%}", _dollars(cost))
        for number, (arm, accuracy, cost) in enumerate(
            zip(config_labels(rows), rows["accuracy"], rows["cost_per_correct"], strict=True),
            start=1,
        )
    )


def _dollars(value: float) -> str:
    """Two significant digits, never an exponent: $0.000024, $0.31, $12.40."""
    places = 2 if value >= 1 or value <= 0 else max(2, 1 - math.floor(math.log10(value)))
    return f"${value:.{places}f}"
