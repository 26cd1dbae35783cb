"""stdout and stderr, with what is written to them transformed first: made printable
(``loopbench.harness.terminal``) and redacted of every secret the process holds
(``loopbench.harness.redaction``). ``loopbench`` wraps both streams so for its whole command; the
transforms themselves stay plain functions of a text, and this is the one place that
writes through them.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from loopbench.harness.redaction import redact
from loopbench.harness.terminal import printable


class TransformedStream:
    """stdout or stderr, with each text written to it passed through ``transform`` first
    (made printable, or redacted). ``raw`` is the stream below."""

    def __init__(self, stream: Any, transform: Callable[[str], str]) -> None:
        self.raw = stream
        self._transform = transform

    def write(self, text: Any) -> int:
        # Bytes go on as they are, which a text stream refuses as it always did.
        self.raw.write(self._transform(text) if isinstance(text, str) else text)
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


class PrintableStream(TransformedStream):
    """stdout or stderr, with what is written to it made ``printable`` first. ``raw`` is
    the stream below, for a writer (rich's live view) that draws with escape sequences of
    its own and escapes its data itself."""

    def __init__(self, stream: Any) -> None:
        # guard: terminal-stdout-stderr-escape-what
        super().__init__(stream, printable)


def unescaped(stream: Any) -> Any:
    """The stream below ``stream``'s ``PrintableStream``, if it has one."""
    return stream.raw if isinstance(stream, PrintableStream) else stream


@contextlib.contextmanager
def printing_printably() -> Iterator[None]:
    """Within it, whatever is written to stdout or stderr is made ``printable``."""
    before = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = PrintableStream(sys.stdout), PrintableStream(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = before


@contextlib.contextmanager
def redacted_output() -> Iterator[None]:
    """Within it, whatever is printed to stdout or stderr (error lines, warnings, progress,
    a traceback) is redacted of every secret the process holds by then."""
    before = sys.stdout, sys.stderr
    # guard: secrets-stdout-stderr-redacted
    sys.stdout, sys.stderr = (
        TransformedStream(sys.stdout, redact),
        TransformedStream(sys.stderr, redact),
    )
    try:
        yield
    finally:
        sys.stdout, sys.stderr = before


__all__ = [
    "PrintableStream",
    "TransformedStream",
    "printing_printably",
    "redacted_output",
    "unescaped",
]
