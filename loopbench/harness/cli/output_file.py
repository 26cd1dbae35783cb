"""An output file (``-o``) checked before the work that fills it: a command that cannot
write it says so at once, in one line, not after reading its inputs and drawing them."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from loopbench.harness.files import output_errors


@contextmanager
def output_file(output: Path) -> Iterator[None]:
    """Check that ``output`` can be written, then do the work that writes it; an
    ``OutputError`` (``BadInput``) at once when it cannot be. A file there already is
    neither emptied nor changed by the check; the empty file the check made is removed if
    the work fails."""
    made = False
    with output_errors(output):
        try:  # non-blocking: a FIFO nobody reads is refused, not waited on
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NONBLOCK
            handle = os.open(output, flags, 0o666)  # as open() makes a file, umask applied
            made = True
        except FileExistsError:
            # guard: output-check-file-already-there
            handle = os.open(output, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK)
    os.close(handle)
    try:
        yield
    except BaseException:
        if made:
            # guard: output-check-file-made-removed
            output.unlink(missing_ok=True)
        raise


__all__ = ["output_file"]
