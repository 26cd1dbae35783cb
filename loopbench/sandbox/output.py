"""What a run's processes print: read from pipes as they write it, counted against the output
limit, and never kept beyond a short tail.

Each process of a run writes its stdout and stderr to a pipe of its own, read here by the
event loop as the bytes come, so nothing the candidate does to a descriptor (truncate it,
seek on it, reopen it) can unsay what it wrote, and nothing it writes waits on a full disk or
fills this process's memory. The candidate's output (its worker's, and its runner's when it
wrote its own tests) counts against one budget; once past it, ``over`` is done, its pipes
are read no more (its writers wait on them) and the sandbox ends the run: the rest is never
read. Of the test runner's stderr the last TAIL_BYTES are kept, to say why it crashed.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field

READ_BYTES = 65536
PIPE_BYTES = 1 << 20  # the most a pipe can hold (Linux's pipe-max-size, by default)
TAIL_BYTES = 4000


@dataclass
class _Stream:
    fd: int
    counted: bool
    tail: bool
    kept: bytearray = field(default_factory=bytearray)


class Output:
    """The output of one run's processes. ``budget`` is the most the candidate may print, all
    its streams together, before the run is ended."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.printed = 0
        """Bytes of the candidate's output read so far."""
        self.runner_tail = b""
        """The last TAIL_BYTES of the test runner's stderr, once ``close`` has run."""
        self.over: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        """Done once the candidate's output is past the budget."""
        self._streams: list[_Stream] = []

    def pipes(self, counted: bool, tail: bool = False) -> tuple[int, int]:
        """The write ends of a new process's stdout and stderr, for it to inherit (the caller
        closes them once it has started). ``counted``: its output is the candidate's; ``tail``:
        the end of its stderr is kept."""
        ends = []
        for stderr in (False, True):
            read, write = os.pipe()
            os.set_blocking(read, False)
            stream = _Stream(read, counted, tail and stderr)
            self._streams.append(stream)
            asyncio.get_running_loop().add_reader(read, self._read, stream)
            ends.append(write)
        return ends[0], ends[1]

    def _read(self, stream: _Stream) -> None:
        """Reads what is there; at the end of the pipe, stops reading it."""
        try:
            chunk = os.read(stream.fd, READ_BYTES)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self._stop(stream)
            return
        self._take(stream, chunk)

    def _take(self, stream: _Stream, chunk: bytes) -> None:
        if stream.tail:
            stream.kept += chunk
            del stream.kept[:-TAIL_BYTES]
        if stream.counted:
            self.printed += len(chunk)
            # guard: candidate-output-past-cap-ends
            if self.printed > self.budget and not self.over.done():
                self.over.set_result(None)
                self._pause()

    def _pause(self) -> None:
        """Reads the candidate's output no more: its writers wait on a full pipe until the run
        is ended."""
        loop = asyncio.get_running_loop()
        for stream in self._streams:
            if stream.counted and stream.fd >= 0:
                loop.remove_reader(stream.fd)

    def _stop(self, stream: _Stream) -> None:
        if stream.fd >= 0:
            asyncio.get_running_loop().remove_reader(stream.fd)
            os.close(stream.fd)
            stream.fd = -1

    def close(self) -> None:
        """Reads what is left in the pipes, then closes them. The run's processes are gone; one
        that got away (at the level none, as the same user) is read no further than what a
        pipe holds, nor past the budget."""
        for stream in self._streams:
            left = PIPE_BYTES
            while (
                stream.fd >= 0 and left > 0 and not (stream.counted and self.printed > self.budget)
            ):
                try:
                    chunk = os.read(stream.fd, READ_BYTES)
                except OSError:  # BlockingIOError too: a writer is left, with nothing more yet
                    break
                if not chunk:
                    break
                left -= len(chunk)
                self._take(stream, chunk)
            self._stop(stream)
            if stream.tail:
                self.runner_tail = bytes(stream.kept)
