"""The number grader: right when the reply's final number is the expected one, within an
absolute tolerance.

The final number is read from, in order: the text after GSM8K's last ``#### ``; the final
answer (graders/final_answer.py) when it is an ``Answer:`` line; what follows the reply's
last "the answer is"; else the reply's last number, in its clause. Numbers the text negates
("not 42", "42 is not right") do not count. A worked answer counts its result: with "=",
the side that is a single number ("18 - 3 = 15" and "15 = 18 - 3" are 15). A hedge is
wrong: two numbers with "or", "maybe"... ("42 or 43"), or the number read listed with
another (joined by a comma, "and", "or", "to", a slash or a dash: "42, 43", "42 to 45";
not in brackets: "18 (3 x 6)" is 18). Numbers take thousands separators (1,234), a leading
$ and a trailing % (read as the number written), a minus and decimals; a text with no
digits is read for number words ("eighteen", as graders/exact.py reads them).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Mapping
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, FiniteFloat, model_validator

from graders.base import Grader, GraderSetup, SelfCase
from graders.exact import DEFAULT_TOLERANCE, Grade, numbers_at
from graders.final_answer import final_answer
from graders.naming import NEGATED_AFTER, NEGATORS, answer_clause
from graders.options import GraderOptions, read_options
from graders.task_models import TaskBase

_WRITTEN = r"(?P<sign>[-\u2212]\s?)?\$?(?P<digits>(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?|\.\d+)"
_NUMBER = re.compile(rf"(?<![\w.]){_WRITTEN}")
#: A number at the start of a text cut from a longer one, whatever came before the cut.
_NUMBER_FIRST = re.compile(_WRITTEN)
_GSM8K = re.compile(r"####\s*(?P<text>[^\n]*)")
_HEDGES = frozenset(["or", "either", "between", "maybe", "perhaps"])
#: What lists two numbers together: a comma, "and", "or", "to", a slash or a dash.
_LIST_JOIN = re.compile(
    r"\s*(?:,\s*(?:and|or)?|and|or|to|/|[-\u2212\u2013\u2014])\s*\$?", re.IGNORECASE
)
#: The negations that, after a number, negate it ("18 is not right", "18 isn't it").
_NOT_AFTER = NEGATORS - {"no", "neither", "nor"}
_WORD = re.compile(r"[^\W\d_]+")
#: Where a clause ends: a stop, question or exclamation mark or semicolon before a space,
#: a line end.
_CLAUSE_END = re.compile(r"(?<=[.!?;])\s+|\n")


def _bare_number(data: Any) -> Any:
    return (
        {"number": data} if isinstance(data, int | float) and not isinstance(data, bool) else data
    )


class NumberExpected(BaseModel):
    """The number, as a bare number or with its own tolerance."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    number: FiniteFloat
    tolerance: FiniteFloat | None = Field(default=None, ge=0)
    """Absolute; the grader's ``tolerance`` option when unset."""

    _bare = model_validator(mode="before")(_bare_number)


class NumberTask(TaskBase):
    expected: NumberExpected


class NumberOptions(GraderOptions):
    tolerance: FiniteFloat = Field(default=DEFAULT_TOLERANCE, ge=0)


def read_number(text: str) -> float | None:
    """The number ``text`` writes whole ("$1,234.5", "-3", "50%"), else None."""
    found = _NUMBER.fullmatch(text.strip().rstrip("%").strip())
    return None if found is None else _value(found)


def _value(found: re.Match[str]) -> float:
    value = float(found.group("digits").replace(",", ""))
    return -value if found.group("sign") else value


class _Number(NamedTuple):
    """A number the text states: where it is written (``digits``: where after its sign and
    $) and its value."""

    start: int
    digits: int
    end: int
    value: float


def _numbers(text: str, words: bool) -> list[_Number]:
    """The numbers ``text`` states and does not negate: its digits, or (``words``) its number
    words when it has no digits."""
    found = [
        _Number(m.start(), m.start("digits"), m.end(), _value(m)) for m in _NUMBER.finditer(text)
    ]
    if not found and words:
        found = [_Number(m.start(), m.start(), m.end(), v) for m, v in numbers_at(text)]
    clauses = _Clauses(text)
    return [n for n in found if not clauses.negated(n)]


def final_number(reply: str) -> tuple[float | None, str]:
    """The reply's final number (see the module's rule), or None with why."""
    gsm8k = list(_GSM8K.finditer(reply))
    said = final_answer(reply)
    if gsm8k:
        return _stated(gsm8k[-1].group("text"))
    if said != reply.strip():
        return _stated(answer_clause(said))
    clause = answer_clause(said)
    if clause != said:
        return _stated(clause)
    words = _NUMBER.search(reply) is None
    clauses = [
        c for c in _CLAUSE_END.split(reply) if (numbers_at(c) if words else _NUMBER.search(c))
    ]
    if not clauses:
        return None, "states no number"
    last = clauses[-1]
    found = _result(last, _numbers(last, words))
    if not found:
        return None, "states no number it does not negate"
    if (hedge := _hedge(last, found, len(found) - 1)) is not None:
        return None, hedge
    return found[-1].value, ""


def _stated(text: str) -> tuple[float | None, str]:
    """The number an answer's text states: its result (see ``_result``), else its first."""
    found = _result(text, _numbers(text, words=True))
    if not found:
        return None, "states no number"
    if (hedge := _hedge(text, found, 0)) is not None:
        return None, hedge
    return found[0].value, ""


def _result(text: str, found: list[_Number]) -> list[_Number]:
    """With "=", the numbers of its last side that is a single number ("9 * 2 = 18" and
    "18 = 9 * 2" are 18), else of its last side; without, ``found``."""
    if "=" not in text:
        return found
    equals = [i for i, c in enumerate(text) if c == "="]
    sides: list[list[_Number]] = [[] for _ in range(len(equals) + 1)]
    for n in found:  # a number starts with a sign, $ or digit: never at an "="
        sides[bisect_left(equals, n.start)].append(n)
    single = [side for side in sides if len(side) == 1]
    return single[-1] if single else sides[-1] or found


def _hedge(text: str, found: list[_Number], read: int) -> str | None:
    """Why ``text`` is a hedge: two numbers it states (``found``) and "or", "maybe"...; or
    the number read (``found[read]``) listed with others ("18, 19, 20", "18 to 20")."""
    values = list(dict.fromkeys(n.value for n in found))
    if len(values) > 1 and _HEDGES & {w.lower() for w in _WORD.findall(text)}:
        return f"hedged: states {', '.join(f'{v:g}' for v in values)}"
    first = last = read
    opens = [i for i, c in enumerate(text) if c == "("]
    closes = [i for i, c in enumerate(text) if c == ")"]
    while first > 0 and _listed(text, found[first - 1], found[first], opens, closes):
        first -= 1
    while last < len(found) - 1 and _listed(text, found[last], found[last + 1], opens, closes):
        last += 1
    listed = list(dict.fromkeys(n.value for n in found[first : last + 1]))
    if len(listed) > 1:
        return f"hedged: states {', '.join(f'{v:g}' for v in listed)}"
    return None


def _listed(
    text: str, one: _Number, next_one: _Number, opens: list[int], closes: list[int]
) -> bool:
    """Whether two numbers are listed together: only a list's join between them, neither in
    brackets (an aside: "18 (3 hens x 6)"). ``opens`` and ``closes``: where ``text``'s
    brackets are, counted before ``one`` by bisection (a count from the start for each pair
    would make a long list quadratic)."""
    aside = (
        bisect_left(opens, one.start) > bisect_left(closes, one.start)
        or "(" in text[one.end : next_one.start]
    )
    return not aside and _LIST_JOIN.fullmatch(text[one.end : next_one.digits]) is not None


#: What ends the clause a negation reaches: a comma, semicolon or colon, a stop before a
#: space.
_CLAUSE_STOP = re.compile(r"[,;:]|\.\s")
#: A word as ``_WORD`` reads it once apostrophes are dropped ("isn't" is "isnt").
_WORD_APOSTROPHES = re.compile(r"'*(?:[^\W\d_]'*)+")


class _Clauses:
    """Where ``text``'s clause stops and words are, found once, so that reading whether each
    of its numbers is negated takes time for the words near it only, not for the whole text
    before and after it."""

    def __init__(self, text: str) -> None:
        self._text = text
        stops = list(_CLAUSE_STOP.finditer(text))
        self._stops = [m.end() for m in stops]
        self._stop_starts = [m.start() for m in stops]
        found = list(_WORD_APOSTROPHES.finditer(text))
        self._starts = [m.start() for m in found]
        self._ends = [m.end() for m in found]
        self._words = [m.group().replace("'", "").lower() for m in found]

    def negated(self, number: _Number) -> bool:
        """ "not 17", "isn't 17", "17 is wrong", "17 is not right" (within the number's
        clause; a "not" followed by another number negates that one: "18 not 17")."""
        text, start, end = self._text, number.start, number.end
        stop = bisect_right(self._stops, start)
        clause_start = self._stops[stop - 1] if stop else 0
        last = bisect_right(self._ends, start)  # the words ending before the number
        before = [
            self._words[k] for k in range(max(0, last - 2), last) if self._starts[k] >= clause_start
        ]
        if last < len(self._starts) and self._starts[last] < start:  # "o'" of "o'eighteen"
            before.append(self._part(max(self._starts[last], clause_start), start))
        after_stop = bisect_left(self._stop_starts, end)
        starts = self._stop_starts
        rest_end = starts[after_stop] if after_stop < len(starts) else len(text)
        first = bisect_right(self._ends, end)  # the words ending after the number
        after: list[str] = []
        if first < len(self._starts) and self._starts[first] < end:  # "'s" of "eighteen's"
            after.append(self._part(end, self._ends[first]))
            first += 1
        for k in range(first, min(first + 3, len(self._words))):
            if self._ends[k] <= rest_end:
                after.append(self._words[k])
        said_before = set([w for w in before if w][-2:])
        said_after = set([w for w in after if w][:3])
        return (
            bool(NEGATORS & said_before)
            or bool(NEGATED_AFTER & said_after)
            or bool(_NOT_AFTER & said_after and not self._number_in(end, rest_end))
        )

    def _number_in(self, start: int, end: int) -> bool:
        """Whether ``text[start:end]`` states a number, read as a text of its own (its start
        has nothing before it), without copying it."""
        text = self._text
        return bool(_NUMBER.search(text, start, end) or _NUMBER_FIRST.match(text, start, end))

    def _part(self, start: int, end: int) -> str:
        """The letters of a word the number cuts, on one side of it."""
        return self._text[start:end].replace("'", "").lower()


class NumberGrader(Grader[NumberTask]):
    def __init__(self, tolerance: float) -> None:
        self._tolerance = tolerance

    async def grade(self, task: NumberTask, answer: str) -> Grade:
        want = task.expected.number
        tolerance = task.expected.tolerance
        tolerance = self._tolerance if tolerance is None else tolerance
        got, why = final_number(answer)
        if got is None:
            return Grade(False, f"{why}; expected {want:g}")
        if abs(got - want) > tolerance:
            return Grade(False, f"final number {got:g}; expected {want:g}")
        return Grade(True, f"final number {got:g} matches")

    def canonical(self, task: NumberTask, answer: str) -> str:
        """The final number; "" when there is none (or a hedge)."""
        got, _ = final_number(answer)
        return "" if got is None else f"{got:g}"


def number_grader(setup: GraderSetup) -> NumberGrader:
    return NumberGrader(read_options("number", setup.options, NumberOptions).tolerance)


def number_from_target(target: Any, extras: Mapping[str, Any]) -> Any:
    """A number, or its text ("1,234", "$5"), with the row's ``tolerance``."""
    number = read_number(target) if isinstance(target, str) else None
    given = {"tolerance": extras["tolerance"]} if "tolerance" in extras else {}
    return {**given, "number": target if number is None else number}


NUMBER_CASES = (
    SelfCase(18, "I think 17 or 18", False, "a hedge in the last number's clause"),
    SelfCase(18, "So she has 18 eggs, not 17 or 19", True, "the last number not negated"),
    SelfCase(18, "Between 10 and 20 eggs; I count 18", True, "the last clause's number"),
    SelfCase(18, "18", True, "the number alone"),
    SelfCase(18, "She sells 16 - 3 - 4 = 9 eggs at $2 each.\n#### 18", True, "GSM8K's ####"),
    SelfCase(18, "16 - 3 - 4 = 9 eggs, 9 * 2 = 18.\nAnswer: $18", True, "the Answer line"),
    SelfCase(18, "9 eggs at $2 make 18 dollars", True, "else the reply's last number"),
    SelfCase(18, "Answer: 18 is wrong, it is 17", False, "the last number when no = says"),
    SelfCase(1234.5, "Answer: $1,234.50", True, "thousands separator, $ and cents"),
    SelfCase(-3, "The answer is -3 degrees.", True, "a negative number"),
    SelfCase(50, "Answer: 50%", True, "a trailing %"),
    SelfCase(18, "Answer: 18 or 19", False, "two numbers: a hedge"),
    SelfCase(18, "Answer: not 17, 18", True, "a negated number does not count"),
    SelfCase(18, "Answer: 9 * 2 = 18", True, "the result of a worked answer"),
    SelfCase(18, "18 eggs in all... Answer: 17", False, "the reasoning's numbers do not count"),
    SelfCase(18, "Answer: 218", False, "a number that holds the expected one"),
    SelfCase({"number": 3.14159, "tolerance": 0.01}, "Answer: 3.14", True, "the task's tolerance"),
    SelfCase(3.14159, "Answer: 3.14", False, "the default tolerance"),
    SelfCase(3.14159, "Answer: 3.14", True, "the grader's tolerance", {"tolerance": 0.01}),
    SelfCase(18, "I cannot tell.", False, "no number"),
    SelfCase(18, "Answer: 18, 19, 20", False, "numbers listed together: a hedge"),
    SelfCase(18, "Answer: roughly 18 to 20 eggs", False, "a range: a hedge"),
    SelfCase(18, "Answer: 18 eggs (3 hens x 6)", True, "an aside's numbers are not listed"),
    SelfCase(18, "Answer: 18 is not correct", False, "a 'not' after the number negates it"),
    SelfCase(18, "Answer: 18 = 9 * 2", True, "the side of = that is a single number"),
    SelfCase(18, "Answer: eighteen", True, "number words when there are no digits"),
)
