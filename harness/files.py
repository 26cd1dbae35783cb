"""Reading input files and saying what is wrong with them, the same way for every loader
(task sets, experiment files, price tables): a folder where a file should be, a missing
or unreadable file, bytes that are not UTF-8, bad TOML, and fields of the wrong type,
each in one line naming the file, the line where there is one, and the field.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError


def describe_errors(exc: ValidationError, whole: str = "(whole line)") -> str:
    """Every problem a validation found, as ``field 'a.b': what is wrong``; a problem with
    the value as a whole is said of the field ``whole``."""
    return "; ".join(
        f"field {'.'.join(str(p) for p in e['loc']) or whole!r}: {e['msg']}" for e in exc.errors()
    )


def read_text(path: Path, error: Callable[[str], Exception], expected: str) -> str:
    """The text of ``path`` (a UTF-8 BOM dropped), or ``error`` saying in one line why not.

    ``expected`` says what the file should be, e.g. "a TOML price table".
    """
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        raise error(f"{path}: is a folder; expected {expected}") from None
    except FileNotFoundError:
        raise error(f"{path}: no such file; expected {expected}") from None
    except (OSError, ValueError) as exc:  # permissions, a file in the way, a NUL in the name
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise error(f"{path}: cannot be read ({reason}); expected {expected}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise error(
            f"{path}:{line}: byte {data[exc.start]:#04x} is not UTF-8; save the file as UTF-8"
        ) from None


_TOML_PLACE = re.compile(r"(?P<what>.*) \(at line (?P<line>\d+), column (?P<column>\d+)\)")


def read_toml(
    path: Path, error: Callable[[str], Exception], expected: str
) -> tuple[dict[str, Any], str]:
    """The TOML document in ``path`` and its text (for ``toml_problems``), or ``error``."""
    text = read_text(path, error, expected)
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
    """The line setting the deepest part of the field path ``loc``, if one does."""
    wanted = tuple(str(p) for p in loc)
    table: tuple[str, ...] = ()
    best, depth = None, 0
    for number, line in enumerate(text.split("\n"), start=1):
        if header := _TOML_HEADER.match(line.strip()):
            table = keys = _keys(header["keys"])
        elif assign := _TOML_ASSIGN.match(line.strip()):
            keys = table + _keys(assign["keys"])
        else:
            continue
        if len(keys) > depth and wanted[: len(keys)] == keys:
            best, depth = number, len(keys)
    return best


def _keys(dotted: str) -> tuple[str, ...]:
    return tuple(k.strip("\"'") for k in re.findall(_TOML_KEY, dotted))
