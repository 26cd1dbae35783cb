"""Two results folders' runs read at once, as if one after the other.

``compare`` reads two folders. DuckDB lets go of the interpreter while it scans a sidecar
(some 30% of a million runs' read), so the second folder is read in a thread while the
first is: on two cores its scans run while the first folder's columns are finished in
Python. What the second read says on stderr (a file read line by line, runs recorded
twice) is held and said after the first read ends, as it would be read after it, and not
said when the first read fails: then it would not have been read. A folder given twice
is read twice, one after the other, as before (each warning is said once a process).
"""

from __future__ import annotations

import io
import sys
import threading
from collections.abc import Collection
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path
from typing import TextIO, cast

import pandas as pd

from loopbench.harness.results.columns import read_frame
from loopbench.harness.results.frames import Pricing


def read_two(
    first: Path, second: Path, pricing: Pricing, drop: Collection[str] = ()
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``read_frame`` of ``first``, then of ``second`` (``drop`` left out of both): the
    same frames, the same errors (the first folder's first) and the same lines on stderr,
    in the same order."""
    try:
        apart = not first.samefile(second)
    except OSError:  # a folder missing: its error, as one after the other gives it
        apart = False
    if not apart:
        return read_frame(first, pricing, drop=drop), read_frame(second, pricing, drop=drop)
    held = _Held(sys.stderr)
    sys.stderr = cast(TextIO, held)
    try:
        with ThreadPoolExecutor(max_workers=1) as pool:
            later = pool.submit(held.holding, second, pricing, drop)
            try:
                runs = read_frame(first, pricing, drop=drop)
            finally:
                wait([later])
    finally:
        sys.stderr = held.stream
    held.release()
    return runs, later.result()


class _Held(io.TextIOBase):
    """stderr, but what the thread running ``holding`` writes is kept for ``release``."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self.stream = stream
        self.thread: int | None = None
        self.text: list[str] = []

    def holding(self, folder: Path, pricing: Pricing, drop: Collection[str]) -> pd.DataFrame:
        """``read_frame`` of ``folder``, what it writes to stderr held."""
        self.thread = threading.get_ident()
        return read_frame(folder, pricing, drop=drop)

    def write(self, text: str) -> int:
        if threading.get_ident() == self.thread:
            self.text.append(text)
            return len(text)
        return self.stream.write(text)

    def flush(self) -> None:
        if threading.get_ident() != self.thread:
            self.stream.flush()

    def release(self) -> None:
        """Write what was held."""
        if self.text:
            self.stream.write("".join(self.text))
            self.stream.flush()
