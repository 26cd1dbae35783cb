"""What watches a grid as it runs: one object told when the grid (or a round) starts, when
each run is recorded, when a round of ``--until-separated`` is decided, and what a user
should see on the way. The live view is one (``loopbench.harness.cli.progress``); a script may pass
its own, or none."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loopbench.harness.results.records import RunRecord
    from loopbench.harness.stats.separation import Separation


class Observer:
    """Does nothing: subclass it and override what you watch."""

    def started(self, todo: int, skipped: int, by_arm: Mapping[str, int]) -> None:
        """A grid, or a round, starts: runs to make (``by_arm``: per arm), runs already
        recorded."""

    def recorded(self, record: RunRecord) -> None:
        """A run finished and was written."""

    def decided(self, state: Separation) -> None:
        """A round of ``--until-separated`` ended; ``state`` holds the decisions so far."""

    def note(self, text: str) -> None:
        """A line a user should see (which model serves the run, a warning, a repair made
        on opening the folder): on stderr, unless overridden."""
        print(text, file=sys.stderr)
