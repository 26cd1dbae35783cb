"""A sentence as the tokens every reading of it walks: words (lower case, accents and
apostrophes dropped; a possessive's "'s" apart), numbers as written ("$1,234.50", "-3",
".5") and marks, each with how many brackets it is inside. A spaced hyphen is read as a
dash, which ends a clause."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_TOKEN = re.compile(
    r"(?P<num>(?<![\w.])[-\u2212]?\$?(?:\d{1,3}(?:,\d{3})+(?![\d,])|\d+)(?:\.\d+)?(?!\.\d)"
    r"|(?<![\w.])\.\d+)"
    r"|(?P<word>[^\W_]+(?:['\u2019](?![sS]\b)[^\W_]+)*)"
    r"|(?P<mark>[^\w\s])",
)


@dataclass
class Token:
    raw: str
    low: str
    """Lower case, accents and apostrophes dropped; a mark as itself."""
    kind: str
    """"num", "word" or "mark"."""
    start: int
    end: int
    depth: int = 0
    """How many brackets it is inside."""


def tokens(text: str) -> list[Token]:
    """The tokens of ``text``, in order."""
    found: list[Token] = []
    depth = 0
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "mark"
        raw = m.group()
        if raw == "-" and text[m.start() - 1 : m.start()] == " " == text[m.end() : m.end() + 1]:
            raw = "\u2014"  # a spaced hyphen is a dash, ending a clause
        low = _low(raw) if kind == "word" else raw
        if raw in ")]":
            depth = max(0, depth - 1)
        found.append(Token(raw, low, kind, m.start(), m.end(), depth))
        if raw in "([":
            depth += 1
    return found


def _low(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word.lower())
    return "".join(c for c in decomposed if c.isalnum())
