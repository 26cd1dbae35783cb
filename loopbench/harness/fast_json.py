"""JSON on the hot path of a run: each request's body, each reply, each trace line.

Encoding a request with the standard library took about as much CPU as the rest of the
client's own work on a call (``bench/overhead.py``); orjson writes the same JSON in a
twentieth of the time and reads it in half. Its JSON is compact (no spaces after ``,`` and
``:``) and keeps text as UTF-8 rather than ``\\u`` escapes: the same fields and values to
any reader.

What orjson refuses, the standard library does, as before: a lone surrogate
(``"\\ud800"``), a key that is not text, an integer past 64 bits, nesting past 254
levels; and in what is read, ``NaN`` and the like. So nothing that was written or read
before fails now. orjson reads an integer past 64 bits as a float rather than refusing it,
so a text holding a run of 20 digits anywhere is read by the standard library, which keeps
the integer whole.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson


def dumps(value: Any) -> bytes:
    """``value`` as JSON, UTF-8 encoded."""
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:  # what only the standard library writes
        return json.dumps(value).encode()


def dumps_text(value: Any) -> str:
    """``value`` as JSON text; an ``orjson.JSONEncodeError`` (a ``TypeError``) on what orjson
    refuses, so that a caller can make it writable (a lone surrogate) and write it again."""
    return orjson.dumps(value).decode()


#: 20 digits in a row: perhaps an integer orjson would read as a float (2**64 has 20).
_LONG_DIGITS_TEXT = re.compile(r"\d{20}", re.ASCII)
#: Bytes with every digit made "0" and every other byte a space, so 20 digits in a row are
#: found by a plain substring search: a seventh of the CPU of a regular expression's
#: search on a reply, which had cost three times what orjson's reading of it costs.
_DIGITS_AS_ZEROS = bytes(48 if 48 <= byte <= 57 else 32 for byte in range(256))
_TWENTY_ZEROS = b"0" * 20


def _long_digits(data: bytes | str) -> bool:
    if isinstance(data, str):
        return _LONG_DIGITS_TEXT.search(data) is not None
    return _TWENTY_ZEROS in data.translate(_DIGITS_AS_ZEROS)


def loads(data: bytes | str) -> Any:
    """The JSON value ``data`` holds; a ``ValueError`` (or ``RecursionError``) as
    ``json.loads`` gives one when it is not JSON."""
    # guard: huge-integers-read-whole
    if _long_digits(data):
        return json.loads(data)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:  # a lone surrogate, NaN, a huge integer, or not JSON
        return json.loads(data)
