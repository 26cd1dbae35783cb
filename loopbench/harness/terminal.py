"""Text from data, made safe to print: its control characters shown, not acted on.

A task id, an arm's name, a prompt file's name, a model's answer, a grader's reason or an
error's text may hold anything. At a terminal an escape sequence in it would set the
window's title (``\\x1b]0;...\\x07``), clear the screen (``\\x1b[2J``), move the cursor or
recolour what follows; a carriage return would write over what came before; a
bidirectional override would show text in another order than it is stored; a lone
surrogate would fail to encode. Each becomes its escape as text, as ``repr`` writes it
(ESC is ``\\x1b``): shown, never dropped, so what the data held can still be read.

``printable`` keeps newlines and tabs (a block of text); ``one_line`` escapes them too (a
table's cell, a name in a line); ``error_line`` also cuts a long error to its start, which
names the file and line, and its end, which often says what to do
(``loopbench.harness.streams.printing_printably`` applies ``printable`` to everything written to
stdout and stderr, the last guard behind the commands that escape their data before
laying it out). A text already made printable is left as it is.
"""

from __future__ import annotations

from collections.abc import Callable

_KEPT = {ord("\n"), ord("\t")}
_C0_C1 = [*range(0x20), 0x7F, *range(0x80, 0xA0)]
_FORMATTING = [0x061C, 0x200E, 0x200F, 0x2028, 0x2029, *range(0x202A, 0x202F)]
_FORMATTING += [*range(0x2066, 0x206A), 0xFEFF]
_SURROGATES = range(0xD800, 0xE000)

_BLOCK: dict[int, str] = {c: f"\\x{c:02x}" for c in _C0_C1 if c not in _KEPT}
_BLOCK |= {c: f"\\u{c:04x}" for c in (*_FORMATTING, *_SURROGATES)}
_LINE = _BLOCK | {ord("\n"): "\\n", ord("\t"): "\\t"}

#: An error line's characters at most: the start it keeps names the file, line and field,
#: the end often says what to do (an unknown name's line ends with how to add one); what a
#: file or a reply held, quoted between them, is what gets cut.
HEAD_CHARS, TAIL_CHARS = 640, 320
ERROR_CHARS = 1000


def printable(text: str) -> str:
    """``text`` with every control character but newline and tab written as its escape."""
    return text.translate(_BLOCK)


def one_line(text: str) -> str:
    """``text`` as one line: every control character, newline and tab too, as its escape."""
    return text.translate(_LINE)


def _same(text: str) -> str:
    return text


def error_line(text: str, clean: Callable[[str], str] = _same) -> str:
    """``text`` as one line of at most ``ERROR_CHARS`` characters: a longer one keeps its
    start and its end and says how many characters were cut between them. ``clean`` (the
    redaction of secrets) is applied before the cut, and to no more of a long text than
    the ends that may be kept, so a text of any length is read only there."""
    span = 4 * ERROR_CHARS
    # guard: error-line-long-one-read
    if len(text) > 2 * span:
        start, end, between = clean(text[:span]), clean(text[-span:]), len(text) - 2 * span
    else:
        cleaned = clean(text)
        if len(one_line(cleaned)) <= ERROR_CHARS:
            return one_line(cleaned)
        half = len(cleaned) // 2
        start, end, between = cleaned[:half], cleaned[half:], 0
    # guard: error-line-cut-at-error
    kept_start = _fitting(start, HEAD_CHARS)
    kept_end = _fitting(end[::-1], TAIL_CHARS)
    cut = len(start) - kept_start + between + len(end) - kept_end
    return (
        one_line(start[:kept_start])
        + f" … ({cut:,} characters cut) … "
        + one_line(end[len(end) - kept_end :])
    )


def _fitting(chars: str, width: int) -> int:
    """How many of ``chars``, from the first, fit in ``width`` characters once escaped."""
    shown = kept = 0
    for char in chars:
        shown += len(one_line(char))
        if shown > width:
            break
        kept += 1
    return kept


__all__ = [
    "ERROR_CHARS",
    "error_line",
    "one_line",
    "printable",
]
