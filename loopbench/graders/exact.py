"""The typed exact grader (seed 003).

An answer is correct iff

(a) the multiset of numbers found in it equals the expected multiset, compared as
    numbers (tolerance 1e-9 unless the task sets one), and
(b) every expected entity occurs as a whole phrase in the normalised answer.

Numbers found: digit numerals, optionally with comma thousands separators and a
decimal part (a point must be followed by a digit: ``.5`` is 0.5, ``84.`` is 84);
a minus sign counts only directly before the digits and not after a letter or
digit (``-3`` is -3, ``2017-2020`` is 2017 and 2020); number words zero to twenty
and the tens to ninety, with hyphenated compounds (``twenty-one``), as whole words.

Normalisation: NFKD, combining marks dropped, lower case, every run of characters
other than a-z and 0-9 collapsed to one space, except a ``.`` between two digits.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from loopbench.harness.models.types import Usage

DEFAULT_TOLERANCE = 1e-9

_SMALL = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
WORD_VALUES = {w: i for i, w in enumerate(_SMALL)} | {w: 20 + 10 * i for i, w in enumerate(_TENS)}
_UNITS = "|".join(_SMALL[1:10])

# Digits: thousands-grouped first (so "2,954" is one number), then plain runs, then ".5".
_DIGITS = r"(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?|\.\d+"
_NOT_LETTER_BEFORE = r"(?<![^\W\d_])"
_NOT_LETTER_AFTER = r"(?![^\W\d_])"
_WORDS = (
    rf"{_NOT_LETTER_BEFORE}(?P<tens>{'|'.join(_TENS)})-(?P<unit>{_UNITS}){_NOT_LETTER_AFTER}"
    rf"|{_NOT_LETTER_BEFORE}(?P<word>{'|'.join(sorted(WORD_VALUES, key=len, reverse=True))})"
    rf"{_NOT_LETTER_AFTER}"
)
_NUMBER = re.compile(rf"(?P<sign>[-\u2212])?(?P<digits>{_DIGITS})|{_WORDS}", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Grade:
    correct: bool
    reason: str
    score: float | None = None
    """A graded measure in [0, 1] besides the verdict (an F1 score), recorded with the run."""
    usage: Usage | None = None
    """What a grader's own model calls took to reach the verdict (the judge's), recorded
    apart from the run's; None for a grader that calls no model."""


def numbers_in(text: str) -> list[float]:
    """Every number the answer states, in order of appearance."""
    return [value for _, value in numbers_at(text)]


def numbers_at(text: str) -> list[tuple[re.Match[str], float]]:
    """Every number the answer states, with where it is written, in order of appearance."""
    found: list[tuple[re.Match[str], float]] = []
    for m in _NUMBER.finditer(text):
        digits = m.group("digits")
        if digits is not None:
            # Over 308 digits overflows to inf: still a number stated, kept finite.
            value = min(float(digits.replace(",", "")), sys.float_info.max)
            start = m.start()
            if m.group("sign") and not (start > 0 and text[start - 1].isalnum()):
                value = -value
            found.append((m, value))
        elif m.group("tens") is not None:
            tens, unit = m.group("tens").lower(), m.group("unit").lower()
            found.append((m, WORD_VALUES[tens] + WORD_VALUES[unit]))
        else:
            found.append((m, WORD_VALUES[m.group("word").lower()]))
    return found


# A run of characters other than a-z and 0-9, never taking a "." that sits between two digits.
_SEPARATORS = re.compile(r"(?:(?!(?<=\d)\.(?=\d))[^a-z0-9])+")


def normalise(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c)).lower()
    return _SEPARATORS.sub(" ", stripped).strip()


def grade(
    answer: str | None,
    numbers: Sequence[float] = (),
    entities: Sequence[str] = (),
    tolerance: float | None = None,
) -> Grade:
    if answer is None or not answer.strip():
        return Grade(False, "no answer")
    tol = DEFAULT_TOLERANCE if tolerance is None else tolerance
    want = sorted(float(n) for n in numbers)
    got = sorted(numbers_in(answer))
    if len(got) != len(want) or any(abs(g - w) > tol for g, w in zip(got, want, strict=True)):
        return Grade(False, f"expected numbers {_show(want)}, found {_show(got)}")
    text = f" {normalise(answer)} "
    missing = [e for e in entities if f" {normalise(e)} " not in text]
    if missing:
        return Grade(False, f"numbers {_show(got)} match; missing {', '.join(map(repr, missing))}")
    named = f" and names {', '.join(map(repr, entities))}" if entities else ""
    return Grade(True, f"numbers {_show(got)} match{named}")


def _show(values: Sequence[float]) -> str:
    return "[" + ", ".join(str(int(v)) if _whole(v) else f"{v:g}" for v in values) + "]"


def _whole(value: float) -> bool:
    return float(value).is_integer() and abs(value) < 1e16
