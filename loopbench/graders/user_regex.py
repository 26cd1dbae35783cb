"""Regular expressions a task set's author gives (the regex grader's pattern, promptfoo's
regex asserts, a JSON Schema's ``pattern`` and ``patternProperties``), matched under the
answer's time limit (loopbench/graders/answer_time.py).

They are read as Python's ``re`` reads them: a pattern ``re`` refuses is refused when the
set loads, and one it takes matches what it matches in ``re``. The matching is done by the
``regex`` module in its ``re``-compatible mode (``VERSION0``), whose ``timeout=`` stops a
match that backtracks without end: ``(x+x+)+y`` against a long run of x never finishes in
``re``, and ``re`` cannot be stopped. google-re2, linear in time by design, is not used: it
refuses lookarounds and backreferences, which sets written for ``re`` use, so they would
stop loading. Where the two modules read a pattern differently (``[[:alpha:]]`` is a set of
five characters to ``re``, a POSIX class to ``regex``), ``re`` warns that the set may
change meaning; such a pattern is refused, its character to be escaped.

The ``regex`` module counts a match's time as the process's CPU time: on a machine busy
with other work, a match stopped at the limit may have taken longer by the clock. It also
compiles a counted repeat into that many copies (``a{100000000}`` takes gigabytes, where
``re`` keeps a count), so a pattern whose counted repeats, nested ones multiplied, make
more than ``MAX_COPIES`` pieces is refused when the set loads.
"""

from __future__ import annotations

import functools
import re
import warnings
from typing import Any

import regex

from loopbench.graders.answer_time import TooSlow, time_left
from loopbench.harness.errors import BadInput

#: The most pieces a pattern may compile to, each counted repeat making copies of what it
#: repeats: ``\\d{4}`` makes 4, ``(?:x{1000}){1000}`` a million. About 60 bytes each.
MAX_COPIES = 200_000
_REPEATS = {"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"}


class NotARegex(BadInput):
    """A pattern that does not compile; says why."""


def compiled(pattern: str, ignore_case: bool = False) -> regex.Pattern[str]:
    """``pattern`` ready to match; ``NotARegex`` when ``re`` (or ``regex``) refuses it."""
    try:
        return _compiled(pattern, ignore_case)
    except (re.error, regex.error, RecursionError, OverflowError) as exc:
        raise NotARegex(str(exc)) from None


class _Afresh(str):
    """A pattern re has not cached (its cache is keyed by the pattern's type)."""


@functools.lru_cache(maxsize=512)
def _compiled(pattern: str, ignore_case: bool) -> regex.Pattern[str]:
    with warnings.catch_warnings():
        # re warns where it reads a set ("[[", "--", "&&") as regex does not: refused.
        # guard: regexes-set-re-reads-apart
        warnings.simplefilter("error", FutureWarning)
        try:  # the syntax is re's; compiled afresh, not from re's cache, so it warns
            # guard: regexes-syntax-re
            re.compile(_Afresh(pattern), re.IGNORECASE if ignore_case else 0)
        except FutureWarning as warned:
            raise re.error(f"{warned}; escape the character to mean it") from None
    # guard: regexes-counted-repeats-past-max
    if (copies := _pieces(re._parser.parse(pattern))) > MAX_COPIES:  # type: ignore[attr-defined]
        raise re.error(
            f"its counted repeats make {copies:,} copies of what they repeat, more than "
            f"{MAX_COPIES:,}; repeat fewer times, or use * or + (matched without copies)"
        )
    return regex.compile(pattern, regex.VERSION0 | (regex.IGNORECASE if ignore_case else 0))


def _pieces(parsed: Any) -> int:
    """The pieces ``parsed`` (a pattern as ``re`` parses it) compiles to in ``regex``: a
    counted repeat, its largest count times its own; ``*`` and ``+`` repeat without copies
    beyond their least count."""
    total = 0
    for op, value in parsed:
        if str(op) in _REPEATS:
            least, most, item = value
            count = least if most == re._constants.MAXREPEAT else most  # type: ignore[attr-defined]
            # guard: regexes-repeat-copies-multiply-what
            total += max(count, 1) * _pieces(item)
        else:
            total += 1 + sum(_pieces(part) for part in _parts(value))
    return total


def _parts(value: Any) -> list[Any]:
    """The parsed patterns inside one parsed item: a group's, an alternation's, a
    lookaround's."""
    kind = re._parser.SubPattern  # type: ignore[attr-defined]
    if isinstance(value, kind):
        return [value]
    if not isinstance(value, tuple | list):
        return []
    return [p for v in value for p in ([v] if isinstance(v, kind) else _parts(v))]


def search(pattern: str, text: str, ignore_case: bool = False) -> bool:
    """Whether ``pattern`` is found in ``text`` (``re.search``); ``TooSlow`` past the
    answer's time limit."""
    where = compiled(pattern, ignore_case)
    try:
        # guard: regexes-search-under-answer-time
        return where.search(text, timeout=time_left(shown(pattern))) is not None
    except TimeoutError:
        raise TooSlow(shown(pattern)) from None


def fullmatch(pattern: str, text: str, ignore_case: bool = False) -> bool:
    """Whether ``pattern`` matches the whole of ``text`` (``re.fullmatch``); ``TooSlow`` past
    the answer's time limit."""
    where = compiled(pattern, ignore_case)
    try:
        # guard: regexes-fullmatch-under-answer-time
        return where.fullmatch(text, timeout=time_left(shown(pattern))) is not None
    except TimeoutError:
        raise TooSlow(shown(pattern)) from None


def shown(pattern: str) -> str:
    """``regex 'PATTERN'``, a long pattern cut."""
    said = repr(pattern)
    return f"regex {said if len(said) <= 60 else said[:57] + '...'}"
