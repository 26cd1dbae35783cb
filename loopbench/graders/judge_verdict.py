"""The judge's verdict read from its reply: a JSON object, asked for in its prompt.

A reply is read tolerantly but never guessed at. The object may stand alone, in a
```json fence, or with text around it; its ``verdict`` ("pass" or "fail", any case) or
``score`` (a whole number from 1 to 5) is taken as written. A reply holding no such
object, or one whose verdict is anything else ("maybe", "6", true), has no verdict
(a reply that is the verdict alone, "PASS" or "4", is read as that verdict):
``None``, with why, for the grader to record as ``judge_unreadable``.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from typing import Any, Literal

Scale = Literal["pass_fail", "score"]

#: The lowest and highest score of the ``score`` scale.
LOWEST, HIGHEST = 1, 5

#: How many ``{`` of a reply are tried as the start of its object: a reply is a short
#: object, and a long one full of braces must not take quadratic time.
MAX_STARTS = 64

#: A reply that is a verdict alone ("PASS", "fail.", "4"): read as written, quotes and a
#: closing full stop aside.
_BARE = re.compile(r"\s*[\"'`*]*(pass|fail|\d)[\"'`*]*\.?\s*", re.IGNORECASE)
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class Verdict:
    """What the judge said: pass or fail, its score on the ``score`` scale, and why."""

    passed: bool
    reason: str
    score: int | None = None


@dataclass(frozen=True)
class Unread:
    """Why a reply gave no verdict, in a phrase."""

    why: str


def read_verdict(reply: str, scale: Scale, threshold: int) -> Verdict | Unread:
    """The verdict in ``reply`` on ``scale`` (a score passes from ``threshold``), or why
    there is none."""
    bare = _BARE.fullmatch(reply)
    if bare is not None:
        return _bare(bare.group(1).lower(), scale, threshold)
    found = _object(reply)
    if found is None:
        return Unread("holds no JSON object")
    fields = {str(key).lower(): value for key, value in found.items()}
    reason = fields.get("reason")
    said = reason.strip() if isinstance(reason, str) else ""
    if scale == "score":
        score = _score(fields.get("score"))
        if score is None:
            return Unread(f"holds no score from {LOWEST} to {HIGHEST}")
        return Verdict(score >= threshold, said, score)
    verdict = fields.get("verdict")
    # guard: judge-verdict-only-pass-or-fail
    if not isinstance(verdict, str) or verdict.strip().lower() not in ("pass", "fail"):
        return Unread('holds no verdict "pass" or "fail"')
    return Verdict(verdict.strip().lower() == "pass", said)


def _bare(word: str, scale: Scale, threshold: int) -> Verdict | Unread:
    """A reply that is the verdict alone, without its object: the word on ``pass_fail``,
    the number on ``score``."""
    if scale == "score":
        score = _score(word)
        return (
            Unread(f"holds no score from {LOWEST} to {HIGHEST}")
            if score is None
            else Verdict(score >= threshold, "", score)
        )
    if word not in ("pass", "fail"):
        return Unread('holds no verdict "pass" or "fail"')
    return Verdict(word == "pass", "")


def _score(value: Any) -> int | None:
    """A whole score within the scale, written as a number or a numeral; None otherwise."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    # guard: judge-score-within-scale
    if isinstance(value, bool) or not isinstance(value, int) or not LOWEST <= value <= HIGHEST:
        return None
    return value


def _object(reply: str) -> dict[str, Any] | None:
    """The first JSON object the reply holds: the whole reply, a fenced block, or the span
    from a ``{`` to its matching ``}``."""
    candidates = [reply, *(m.group(1) for m in _FENCE.finditer(reply))]
    for text in candidates:
        if isinstance(found := _loaded(text.strip()), dict):
            return found
    decoder = json.JSONDecoder()
    starts = (i for i, char in enumerate(reply) if char == "{")
    # guard: judge-reply-starts-tried-bounded
    for start in itertools.islice(starts, MAX_STARTS):
        try:
            found, _ = decoder.raw_decode(reply, start)
        except ValueError:
            continue
        if isinstance(found, dict):
            return found
    return None


def _loaded(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def quoted(reply: str, most: int = 80) -> str:
    """The start of ``reply`` on one line, quoted, for a message that names it."""
    line = " ".join(reply.split())
    return repr(line if len(line) <= most else line[: most - 3] + "...")
