"""Text that is valid Unicode, so that it can be written as UTF-8.

JSON may escape half of a surrogate pair alone (``"\\ud800"``), and Python reads it into a
``str`` that no UTF-8 file can hold: writing it fails. Such a lone surrogate, from an
endpoint's reply or a file, is replaced with U+FFFD (the replacement character) where the
text enters, and the replacements are counted, so the run says that its text was changed
(a record's ``replaced_characters``).

A surrogate left in a Python ``str`` is always a lone one: JSON and UTF-8 readers join a
valid pair into the one character it stands for.
"""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT = "\ufffd"
# guard: valid-text-finds-lone-surrogates
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> tuple[str, int]:
    """``text`` with each lone surrogate replaced by U+FFFD, and how many were replaced."""
    if text.isascii():  # at once: a flag CPython keeps
        return text, 0
    try:
        text.encode("utf-8")  # fails only on a surrogate, and faster than searching for one
    except UnicodeEncodeError:
        return _LONE_SURROGATE.subn(REPLACEMENT, text)
    return text, 0


def valid_value(value: Any) -> tuple[Any, int]:
    """A JSON-like value (dicts, lists, tuples, texts, numbers) with every text in it, keys
    included, made valid; and how many characters were replaced. The value itself when
    nothing was, so shared parts stay shared."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, dict):
        replaced, built = 0, {}
        for key, item in value.items():
            new_key, in_key = valid_text(key) if isinstance(key, str) else (key, 0)
            new_item, in_item = valid_value(item)
            built[new_key] = new_item
            replaced += in_key + in_item
        return (built, replaced) if replaced else (value, 0)
    if isinstance(value, list | tuple):
        items = [valid_value(item) for item in value]
        replaced = sum(count for _, count in items)
        if not replaced:
            return value, 0
        rebuilt = [item for item, _ in items]
        return (tuple(rebuilt) if isinstance(value, tuple) else rebuilt), replaced
    return value, 0
