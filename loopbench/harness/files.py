"""Reading input files and saying what is wrong with them, the same way for every loader
(task sets, experiment files, price tables): a folder where a file should be, a missing
or unreadable file, bytes that are not UTF-8, bad TOML, and fields of the wrong type,
each in one line naming the file, the line where there is one, and the field.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import ValidationError

from loopbench.harness.errors import BadInput


def describe_errors(exc: ValidationError, whole: str = "(whole line)", first: bool = False) -> str:
    """Every problem a validation found (or the ``first``), as ``field 'a.b': what is
    wrong``; a problem with the value as a whole is said of the field ``whole``."""
    errors = exc.errors()[:1] if first else exc.errors()
    return "; ".join(
        f"field {'.'.join(str(p) for p in e['loc']) or whole!r}: {e['msg']}" for e in errors
    )


#: The largest input file read whole (a task set, an experiment file, a price table...):
#: far above any real one, and bounded so that a link to /dev/zero cannot fill memory.
MAX_INPUT_BYTES = 256 * 1024 * 1024


class NotAnInputFile(BadInput, OSError):
    """A path that is not a regular file of a bounded size: refused, never read.

    Its ``errno`` is 0 and its ``strerror`` the whole reason ("is a FIFO (named pipe), not
    a regular file"), said after the path. Bad input, and an ``OSError`` still: the readers
    that catch what opening a file raises catch it too."""

    def __init__(self, reason: str) -> None:
        OSError.__init__(self, 0, reason)

    def __str__(self) -> str:
        return self.strerror or ""


def special_file_problem(path: Path) -> str | None:
    """Why ``path`` is not a regular file to read (a FIFO, a device, a socket), or None.

    Looks without opening (opening a FIFO waits for a writer, opening a device may act):
    links are followed, and a missing file or a folder is left to the reader's own message.
    """
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    return None if stat.S_ISREG(mode) or stat.S_ISDIR(mode) else _not_regular(mode)


def _not_regular(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        kind = "a FIFO (named pipe)"
    elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        kind = "a device"
    elif stat.S_ISSOCK(mode):
        kind = "a socket"
    else:
        return "is not a regular file"
    return f"is {kind}, not a regular file"


@contextmanager
def open_bounded(path: Path, limit: int = MAX_INPUT_BYTES) -> Iterator[BinaryIO]:
    """The regular file ``path`` opened for reading, as ``read_bounded`` opens it: refused
    (``NotAnInputFile``) when it is a FIFO, a device, a socket or over ``limit`` bytes, so
    that a reader taking it line by line stops as ``read_bounded`` would."""
    if problem := special_file_problem(path):
        raise NotAnInputFile(problem)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as handle:
        opened = os.fstat(fd)
        if stat.S_ISDIR(opened.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not stat.S_ISREG(opened.st_mode):
            raise NotAnInputFile(_not_regular(opened.st_mode))
        if opened.st_size > limit:
            raise NotAnInputFile(_too_large(limit))
        os.set_blocking(fd, True)
        yield handle


def read_bounded(path: Path, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of the regular file ``path``; ``NotAnInputFile`` (an ``OSError``) for a
    FIFO, a device, a socket or a file over ``limit`` bytes, so that none can hang or fill
    memory, and the usual ``OSError`` for a missing or unreadable file or a folder.

    A special file is refused before it is opened; the opening itself does not wait (a FIFO
    put in the file's place meanwhile is refused as well), and what is opened is checked
    again before a byte is read.
    """
    with open_bounded(path, limit) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:  # grew while it was read
        raise NotAnInputFile(_too_large(limit))
    return data


def _too_large(limit: int) -> str:
    size = f"{limit // 2**20} MiB" if limit % 2**20 == 0 else f"{limit} bytes"
    kind = "an input file" if limit == MAX_INPUT_BYTES else "a file of its kind"
    return f"is larger than {size}, more than {kind} holds"


def read_text(
    path: Path, error: Callable[[str], Exception], expected: str, limit: int = MAX_INPUT_BYTES
) -> str:
    """The text of ``path`` (a UTF-8 BOM dropped), or ``error`` saying in one line why not.

    ``expected`` says what the file should be, e.g. "a TOML price table". A FIFO, a device
    or a file over ``limit`` bytes is refused rather than read.
    """
    with input_errors(path, error, expected):
        data = read_bounded(path, limit)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise error(
            f"{path}:{line}: byte {data[exc.start]:#04x} is not UTF-8; save the file as UTF-8"
        ) from None


@contextmanager
def input_errors(path: Path, error: Callable[[str], Exception], expected: str) -> Iterator[None]:
    """Opening or reading ``path`` within: its ``OSError`` as ``error``'s one line (a
    folder, no such file, a FIFO or device, a file too large, no permission)."""
    try:
        yield
    except IsADirectoryError:
        raise error(f"{path}: is a folder; expected {expected}") from None
    except FileNotFoundError:
        raise error(f"{path}: no such file; expected {expected}") from None
    except (OSError, ValueError) as exc:  # permissions, a file in the way, a NUL in the name
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        if isinstance(exc, NotAnInputFile):
            raise error(f"{path}: {reason}; expected {expected}") from None
        raise error(f"{path}: cannot be read ({reason}); expected {expected}") from None


#: What a refused output file asks for, after why it cannot be written.
WRITABLE = "give -o a file in a folder that exists and can be written"


class OutputError(BadInput):
    """A file a command was to write cannot be written; the line names it and why."""


@contextmanager
def output_errors(
    path: Path,
    flag: str | None = None,
    hint: str | None = WRITABLE,
    also: tuple[type[Exception], ...] = (),
) -> Iterator[None]:
    """Writing ``path`` within: its ``OSError`` (or one of ``also``, a library's own error
    for a file it writes) as an ``OutputError``'s one line, ``PATH: cannot be written
    (why); hint``, the path after ``flag`` when one is given."""
    # guard: otlp-unwritable-o-one-line
    refused: tuple[type[Exception], ...] = (OSError, *also)
    try:
        yield
    except BadInput:
        raise
    except refused as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        reason = reason.splitlines()[0] if reason else type(exc).__name__
        where = f"{flag} {path}" if flag else str(path)
        tail = f"; {hint}" if hint else ""
        raise OutputError(f"{where}: cannot be written ({reason}){tail}") from None


_TOML_PLACE = re.compile(r"(?P<what>.*) \(at line (?P<line>\d+), column (?P<column>\d+)\)")


def read_toml(
    path: Path, error: Callable[[str], Exception], expected: str, limit: int = MAX_INPUT_BYTES
) -> tuple[dict[str, Any], str]:
    """The TOML document in ``path`` and its text (for ``toml_problems``), or ``error``;
    a file over ``limit`` bytes is refused unread."""
    text = read_text(path, error, expected, limit)
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        place = _TOML_PLACE.fullmatch(str(exc))
        where = f"{path}:{place['line']}" if place else str(path)
        what = f"{place['what']} at column {place['column']}" if place else str(exc)
        raise error(f"{where}: not valid TOML ({what}); expected {expected}") from None
    except (ValueError, RecursionError):  # a number of over 4300 digits; nesting too deep
        raise error(
            f"{path}: a number too long or nesting too deep to read; expected {expected}"
        ) from None


def toml_problems(path: Path, text: str, exc: ValidationError) -> str:
    """``FILE: field 'a.b' on line N: what is wrong; ...``, each with the line setting it."""
    problems = []
    for e in exc.errors():
        field = ".".join(str(p) for p in e["loc"]) or "(whole file)"
        line = toml_line(text, e["loc"])
        problems.append(f"field {field!r}{f' on line {line}' if line else ''}: {e['msg']}")
    return f"{path}: {'; '.join(problems)}"


_TOML_KEY = r"(?:[\w-]+|\"[^\"\n]*\"|'[^'\n]*')"
_TOML_HEADER = re.compile(rf"\[\[?\s*(?P<keys>{_TOML_KEY}(?:\s*\.\s*{_TOML_KEY})*)\s*\]")
_TOML_ASSIGN = re.compile(rf"(?P<keys>{_TOML_KEY}(?:\s*\.\s*{_TOML_KEY})*)\s*=")


def toml_line(text: str, loc: tuple[int | str, ...]) -> int | None:
    """The line setting the deepest part of the field path ``loc``, if one does.

    A table of an array (``[[models]]``) is the path with its index, as validation gives
    it (``models.1.name``), so a field of the second ``[[models]]`` is found under it."""
    wanted = tuple(str(p) for p in loc)
    table: tuple[str, ...] = ()
    arrays: dict[tuple[str, ...], int] = {}  # each array of tables: its last index so far
    best, depth = None, 0
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip()
        if header := _TOML_HEADER.match(stripped):
            *parents, last = _keys(header["keys"])
            keys = (*_within(tuple(parents), arrays), last)
            if stripped.startswith("[["):
                arrays[keys] = arrays.get(keys, -1) + 1
                keys = (*keys, str(arrays[keys]))
            table = keys
        elif assign := _TOML_ASSIGN.match(stripped):
            keys = table + _keys(assign["keys"])
        else:
            continue
        if len(keys) > depth and wanted[: len(keys)] == keys:
            best, depth = number, len(keys)
    return best


def _within(keys: tuple[str, ...], arrays: dict[tuple[str, ...], int]) -> tuple[str, ...]:
    """A table path with the index of the last table of each array it goes through."""
    path: tuple[str, ...] = ()
    for key in keys:
        path = (*path, key)
        if path in arrays:
            path = (*path, str(arrays[path]))
    return path


def _keys(dotted: str) -> tuple[str, ...]:
    return tuple(k.strip("\"'") for k in re.findall(_TOML_KEY, dotted))
