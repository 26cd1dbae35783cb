"""What every reader and writer of a results folder raises for a folder it cannot use."""

from __future__ import annotations

from loopbench.harness.errors import BadInput


class ResultsError(BadInput):
    """A results folder, or one of its files, that cannot be read or written as one: one
    line naming the file, exit 2."""
