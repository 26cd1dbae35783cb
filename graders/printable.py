"""Text a candidate wrote, made safe to show: its control characters visible, not active.

What a candidate's code raises, prints or returns reaches a grade's reason, a suite result and
the terminal of ``loopbench grade``. There an escape sequence would set the terminal's title,
clear its screen or move its cursor, a carriage return would write over what came before, a
bidirectional override would show text in another order than it is stored, and a lone
surrogate would fail to encode. Each becomes its escape as text (ESC is ``\\x1b``), as
``repr`` shows it; newlines and tabs stay. A text already made printable is left as it is.
"""

from __future__ import annotations

_KEPT = {ord("\n"), ord("\t")}
_C0_C1 = [*range(0x20), 0x7F, *range(0x80, 0xA0)]
_FORMATTING = [0x061C, 0x200E, 0x200F, 0x2028, 0x2029, *range(0x202A, 0x202F)]
_FORMATTING += [*range(0x2066, 0x206A), 0xFEFF]
_SURROGATES = range(0xD800, 0xE000)

_TABLE: dict[int, str] = {c: f"\\x{c:02x}" for c in _C0_C1 if c not in _KEPT}
_TABLE |= {c: f"\\u{c:04x}" for c in (*_FORMATTING, *_SURROGATES)}


def printable(text: str) -> str:
    """``text`` with every control character but newline and tab written as its escape."""
    return text.translate(_TABLE)
