"""The number a reply commits to, read as loopbench/graders/reading.py and
loopbench/graders/mentions.py read every answer.

A number is written in digits (thousands separators, decimals, a sign, a leading currency
sign: "$1,234.50", "-3", ".5"), as a fraction ("1/2", LaTeX's ``\\frac{1}{2}``), scaled
("1.5 million", "3 thousand", "2k"), as a percentage ("25%", read as 25 or as 0.25), or, in a
sentence with no digits, in words ("eighteen", "twenty-one", "one hundred and five"). In a
worked answer the result counts: of the sides of "=", the last that is a single number
("9 * 2 = 18" and "18 = 9 * 2" are 18).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass

from loopbench.graders.exact import WORD_VALUES
from loopbench.graders.mentions import Mention, verdict
from loopbench.graders.reading import Said, hedge, nothing, read_reply
from loopbench.graders.tokens import Token, tokens
from loopbench.graders.words import CONCLUDING

_SCALES = {"dozen": 12.0, "thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
_ADJACENT_SCALES = {"k": 1e3, "m": 1e6, "bn": 1e9}
_CURRENCY = "$\u20ac\u00a3\u00a5"


@dataclass(frozen=True)
class Stated:
    """A number stated, and whether it was written as a percentage."""

    value: float
    percent: bool = False

    def matches(self, want: float, tolerance: float) -> bool:
        # guard: numbers-percentage-reads-as-itself
        values = [self.value, self.value / 100] if self.percent else [self.value]
        return any(abs(v - want) <= tolerance for v in values)


_WRITTEN = re.compile(r"[-\u2212]?\$?(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?|[-\u2212]?\.\d+")


def read_number(text: str) -> float | None:
    """The number ``text`` writes whole ("$1,234.5", "-3", "50%"), else None."""
    written = text.strip().rstrip("%").strip()
    if _WRITTEN.fullmatch(written) is None:
        return None
    digits = written.replace("$", "").replace(",", "").replace("\u2212", "-")
    return float(digits)


def stated_number(reply: str) -> Said[Stated]:
    """The one number ``reply`` commits to, or why there is none."""
    return read_reply(reply, number_in)


def number_in(sentence: str, anchored: bool = True) -> Said[Stated]:
    """The number one sentence commits to: an answer line's first, working's last."""
    toks = tokens(sentence)
    found, values = numbers_of(toks)
    if not found:
        return nothing("states no number")
    if not _concludes_after_equals(toks):  # "20/80 = 0.25, so the decrease is 25%"
        # guard: numbers-worked-answer-states-result
        found = _result_side(toks, found)
    answer = verdict(toks, found, last=not anchored, numbers=True)
    if not answer.keys:
        return nothing("states no number it does not negate")
    if answer.hedge:
        shown = ", ".join(f"{values[k].value:g}" for k in answer.keys if isinstance(k, int))
        return hedge(f"states {shown}" if answer.hedge != "leaves it open" else f"{shown} or more")
    key = answer.keys[0]
    assert isinstance(key, int)
    return Said(values[key])


def numbers_of(toks: list[Token]) -> tuple[list[Mention], list[Stated]]:
    """Each number's mention (keyed by the index of its value in the second list: mentions
    of equal numbers share a key)."""
    # guard: numbers-numbers-words-read
    spans = _digits(toks) or _worded(toks)
    keys: dict[Stated, int] = {}
    found = []
    for start, end, stated in spans:
        found.append(Mention(keys.setdefault(stated, len(keys)), start, end))
    return found, list(keys)


def _digits(toks: list[Token]) -> list[tuple[int, int, Stated]]:
    found = []
    i = 0
    while i < len(toks):
        token = toks[i]
        if token.kind != "num":
            i += 1
            continue
        value, end = _value(token.raw), i + 1
        # guard: numbers-fraction-one-number
        if _fraction_at(toks, i):
            value, end = _value(token.raw) / (_value(toks[i + 2].raw) or 1), i + 3
        elif _fraction_at(toks, i + 1) and not _touching(toks, i, None):  # "3 1/2"
            value, end = value + _value(toks[i + 1].raw) / (_value(toks[i + 3].raw) or 1), i + 4
        if (i > 0 and toks[i - 1].low in _MINUS) or _below_zero(toks, end):
            value = -value
        percent = end < len(toks) and (toks[end].raw == "%" or toks[end].low == "percent")
        if percent:
            end += 1
        # guard: numbers-scaled-number-read-with
        elif end < len(toks) and toks[end].low in _SCALES:
            value, end = value * _SCALES[toks[end].low], end + 1
        elif _touching(toks, end - 1, None) and toks[end].low in _ADJACENT_SCALES:
            value, end = value * _ADJACENT_SCALES[toks[end].low], end + 1
        found.append((i, end, Stated(value, percent)))
        i = end
    return found


_MINUS = frozenset(["minus", "negative"])


def _below_zero(toks: list[Token], end: int) -> bool:
    """ "8 degrees below zero", "8°C below zero"."""
    words = [t.low for t in toks[end : end + 5] if t.kind == "word"]
    return any(words[k : k + 2] == ["below", "zero"] for k in range(min(3, len(words))))


def _fraction_at(toks: list[Token], i: int) -> bool:
    """Whether a fraction ("1/2", digits touching the slash) starts at token ``i``."""
    return (
        i + 2 < len(toks)
        and toks[i].kind == "num"
        and _touching(toks, i, "/")
        and _touching(toks, i + 1, None)
        and toks[i + 2].kind == "num"
    )


def _touching(toks: list[Token], i: int, raw: str | None) -> bool:
    """Whether the token after ``i`` follows it with no space (and is ``raw``, if given)."""
    if i + 1 >= len(toks) or toks[i + 1].start != toks[i].end:
        return False
    return raw is None or toks[i + 1].raw == raw


def _value(raw: str) -> float:
    negative = raw[0] in "-\u2212"
    digits = raw.lstrip("-\u2212").lstrip(_CURRENCY).replace(",", "")
    value = min(float(digits), 1.7e308)
    return -value if negative else value


_SMALL = {w: v for w, v in WORD_VALUES.items() if v < 20}
_TENS = {w: v for w, v in WORD_VALUES.items() if v >= 20}


#: Words for parts of one ("one half", "three quarters", "two and a half").
_PARTS = {"half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4}


def _worded(toks: list[Token]) -> list[tuple[int, int, Stated]]:
    """Numbers in words: runs of number words ("one hundred and five", "twenty-one",
    "two and a half million", "minus seven")."""
    found = []
    i = 0
    while i < len(toks):
        low = toks[i].low
        if (
            low not in WORD_VALUES
            and low not in _PARTS
            and not _a_part(toks, i)
            and not _a_dozen(toks, i)
        ):
            i += 1
            continue
        total, current, end, whole = 0.0, 0.0, i, None
        k = i
        while k < len(toks):
            low = toks[k].low
            if low in WORD_VALUES:
                current += WORD_VALUES[low]
            elif low in _PARTS:  # "one half", "three quarters"; "two and a half"
                parts = _PARTS[low]
                current = whole + 1 / parts if whole is not None else (current or 1) / parts
            elif low == "a" and _a_part(toks, k):
                whole = current
            elif (low == "a" and _a_dozen(toks, k)) or (low == "dozen" and k == i):
                current = 1.0 if low == "a" else 12.0
            elif low == "hundred" and k > i:
                current *= 100
            elif low in _SCALES and k > i:
                total, current = total + current * _SCALES[low], 0.0
            elif not ((low == "and" or toks[k].raw == "-") and k > i):
                break
            if toks[k].kind == "word" and low != "and":
                end = k + 1
            k += 1
        value = total + current
        negative = i > 0 and toks[i - 1].low in _MINUS
        found.append((i, end, Stated(-value if negative else value)))
        i = max(end, i + 1)
    return found


def _a_dozen(toks: list[Token], i: int) -> bool:
    """ "a dozen", "dozen" alone."""
    return toks[i].low == "dozen" or (
        toks[i].low == "a" and i + 1 < len(toks) and toks[i + 1].low == "dozen"
    )


def _a_part(toks: list[Token], i: int) -> bool:
    """ "a half", "a quarter"."""
    return toks[i].low == "a" and i + 1 < len(toks) and toks[i + 1].low in _PARTS


def _concludes_after_equals(toks: list[Token]) -> bool:
    """Whether a concluding word ("so", "therefore") follows the last "=": the working ends
    there and the conclusion gives the answer."""
    equals = [k for k, t in enumerate(toks) if t.raw == "="]
    return bool(equals) and any(t.low in CONCLUDING for t in toks[equals[-1] :])


def _result_side(toks: list[Token], found: list[Mention]) -> list[Mention]:
    """In a worked answer, the numbers of the last side of "=" that states one number
    (else of its last side that states any)."""
    equals = [k for k, t in enumerate(toks) if t.raw == "="]
    if not equals:
        return found
    sides: list[list[Mention]] = [[] for _ in range(len(equals) + 1)]
    for m in found:
        sides[bisect_left(equals, m.start)].append(m)
    single = [side for side in sides if len({m.key for m in side}) == 1]
    return single[-1] if single else [side for side in sides if side][-1]
