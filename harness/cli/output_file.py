"""An output file (``-o``) checked before the work that fills it: a command that cannot
write it says so at once, in one line, not after reading its inputs and drawing them."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.errors import BadInput


def cannot_write(output: Path, exc: OSError) -> BadInput:
    """The one line for an output file the command could not write."""
    return BadInput(
        f"{output}: cannot be written ({exc.strerror or exc}); give -o a file in a folder "
        "that exists and can be written"
    )


@contextmanager
def output_file(output: Path) -> Iterator[None]:
    """Check that ``output`` can be written, then do the work that writes it; ``BadInput``
    at once when it cannot be. A file there already is neither emptied nor changed by the
    check; the empty file the check made is removed if the work fails."""
    made = False
    try:
        try:  # non-blocking: a FIFO nobody reads is refused, not waited on
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NONBLOCK
            handle = os.open(output, flags, 0o666)  # as open() makes a file, umask applied
            made = True
        except FileExistsError:
            handle = os.open(output, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK)
    except OSError as exc:
        raise cannot_write(output, exc) from None
    os.close(handle)
    try:
        yield
    except BaseException:
        if made:
            output.unlink(missing_ok=True)
        raise


__all__ = ["cannot_write", "output_file"]
