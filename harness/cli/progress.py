"""The progress of a grid as it runs: a bar at a terminal, a line per tenth for logs."""

from __future__ import annotations

import click

from harness.records import RunRecord


class Progress:
    """A bar for people at a terminal; a line per tenth of the grid for logs."""

    def __init__(self, plain: bool) -> None:
        self.plain = plain
        self.total = 0
        self.done = 0
        self.correct = 0

    def start(self, todo: int, skipped: int) -> None:
        self.total = todo
        click.echo(f"{todo} runs to do, {skipped} already recorded", err=True)

    def step(self, record: RunRecord) -> None:
        self.done += 1
        self.correct += bool(record.correct)
        every = max(1, self.total // 10)
        if self.plain:
            if self.done % every == 0 or self.done == self.total:
                click.echo(f"  {self.done}/{self.total} runs, {self.correct} correct", err=True)
            return
        width = 30
        filled = width * self.done // max(1, self.total)
        click.echo(
            f"\r  [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
            f"runs, {self.correct} correct",
            nl=self.done == self.total,
            err=True,
        )
