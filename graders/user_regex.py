"""Regular expressions a task set's author gives (the regex grader's pattern, promptfoo's
regex asserts, a JSON Schema's ``pattern`` and ``patternProperties``), matched under the
answer's time limit (graders/answer_time.py).

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
with other work, a match stopped at the limit may have taken longer by the clock.
"""

from __future__ import annotations

import functools
import re
import warnings

import regex

from graders.answer_time import TooSlow, time_left


class NotARegex(ValueError):
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
        warnings.simplefilter("error", FutureWarning)
        try:  # the syntax is re's; compiled afresh, not from re's cache, so it warns
            re.compile(_Afresh(pattern), re.IGNORECASE if ignore_case else 0)
        except FutureWarning as warned:
            raise re.error(f"{warned}; escape the character to mean it") from None
    return regex.compile(pattern, regex.VERSION0 | (regex.IGNORECASE if ignore_case else 0))


def search(pattern: str, text: str, ignore_case: bool = False) -> bool:
    """Whether ``pattern`` is found in ``text`` (``re.search``); ``TooSlow`` past the
    answer's time limit."""
    where = compiled(pattern, ignore_case)
    try:
        return where.search(text, timeout=time_left(shown(pattern))) is not None
    except TimeoutError:
        raise TooSlow(shown(pattern)) from None


def fullmatch(pattern: str, text: str, ignore_case: bool = False) -> bool:
    """Whether ``pattern`` matches the whole of ``text`` (``re.fullmatch``); ``TooSlow`` past
    the answer's time limit."""
    where = compiled(pattern, ignore_case)
    try:
        return where.fullmatch(text, timeout=time_left(shown(pattern))) is not None
    except TimeoutError:
        raise TooSlow(shown(pattern)) from None


def shown(pattern: str) -> str:
    """``regex 'PATTERN'``, a long pattern cut."""
    said = repr(pattern)
    return f"regex {said if len(said) <= 60 else said[:57] + '...'}"
