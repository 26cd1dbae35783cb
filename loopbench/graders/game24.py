"""The ``game24`` grader: the final answer is an expression that makes 24 of the task's numbers.

The expression the reply commits to (loopbench/graders/reading.py), optionally ending ``= 24`` as
the ToT paper's answers do ("(10 - 4) * (13 - 9) = 24"), is read by a tokenizer and a
recursive-descent parser of its own: numbers, + - * / (also the typeset times, division
and minus signs), brackets and a unary minus, nothing else. Nothing is evaluated by
Python: the value is computed in fractions, so ``8 / (3 - 8/3)`` is exactly 24, and
``3.0000000000000001 * 8``, 24 only in floating point, is not. It is correct iff it uses
exactly the given numbers (a multiset: none reused, dropped or added) and equals 24; a
division by zero is wrong.

The verdict needs nothing hidden from the model (the numbers are in the question), so the
grader offers it as a check a pattern may call (``answer_check``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PositiveInt

from loopbench.graders.base import AnswerCheck, Grader, GraderSetup, SelfCase
from loopbench.graders.exact import Grade, normalise
from loopbench.graders.options import GraderOptions, read_options
from loopbench.graders.reading import Said, answer_text, hedge, nothing, read_reply
from loopbench.graders.register import GraderDetails, register_grader
from loopbench.graders.task_models import TaskBase
from loopbench.harness.errors import HarnessFault

TARGET = Fraction(24)
#: How deep brackets and unary minus signs may nest: far past any answer, well within
#: Python's recursion limit.
MAX_NESTING = 100
#: Typeset operators read as + - * /: times, middle dot, division, minus and en dash.
SPELLINGS = {"\u00d7": "*", "\u00b7": "*", "\u00f7": "/", "\u2212": "-", "\u2013": "-"}
_TOKEN = re.compile(r"\s*(?:(?P<number>\d+(?:\.\d+)?)|(?P<op>[-+*/()])|(?P<name>[A-Za-z_]\w*))")
#: The most digits a number of an answer may have: far past any puzzle's, well within
#: what a fraction is made of quickly (Python refuses an int of over 4,300 digits).
MAX_DIGITS = 20
#: "24 = (10 - 4) * (13 - 9)": the claim written first.
_LEADING_CLAIM = re.compile(r"^24\s*=\s*(?=[^=]*$)")
_CLAIM = re.compile(r"^(?P<expression>[^=]*)=\s*(?P<claim>\d+(?:\.\d+)?)\s*\.?$")


class Game24Expected(BaseModel):
    model_config = ConfigDict(extra="forbid")
    numbers: list[PositiveInt] = Field(min_length=4, max_length=4)
    """The four numbers to make 24 of, each used once."""


class Game24Task(TaskBase):
    """A Game of 24 puzzle; ``solutions`` (not in the fingerprint) are the reference."""

    expected: Game24Expected
    solutions: list[str] = Field(default_factory=list)
    """The solver's distinct solutions (loopbench/tasks/game24.py says which count as distinct)."""

    @property
    def difficulty(self) -> int:
        """Its number of distinct solutions: the fewer, the harder."""
        return len(self.solutions)


class NotAnExpression(HarnessFault, ValueError):
    """The answer is not an expression of the four numbers: graded wrong, saying why."""


@dataclass
class _Parser:
    """Recursive descent over the tokens: sum := product (('+'|'-') product)*,
    product := unary (('*'|'/') unary)*, unary := '-' unary | number | '(' sum ')'."""

    tokens: list[tuple[str, str]]
    numbers: list[Fraction]
    at: int = 0
    divided_by_zero: bool = False
    depth: int = 0

    def peek(self) -> str:
        return self.tokens[self.at][1] if self.at < len(self.tokens) else ""

    def take(self) -> tuple[str, str]:
        if self.at == len(self.tokens):
            raise NotAnExpression("it ends where a number or '(' is expected")
        self.at += 1
        return self.tokens[self.at - 1]

    def sum(self) -> Fraction:
        value = self.product()
        while self.peek() in ("+", "-"):
            op, right = self.take()[1], self.product()
            value = value + right if op == "+" else value - right
        return value

    def product(self) -> Fraction:
        value = self.unary()
        while self.peek() in ("*", "/"):
            op, right = self.take()[1], self.unary()
            if op == "/" and right == 0:
                self.divided_by_zero, right = True, Fraction(1)  # read on: it may be worse
            value = value * right if op == "*" else value / right
        return value

    def unary(self) -> Fraction:
        kind, text = self.take()
        if kind == "number":
            self.numbers.append(Fraction(text))
            return Fraction(text)
        if text not in ("-", "("):
            raise NotAnExpression(f"{text!r} where a number or '(' is expected")
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise NotAnExpression("nested too deeply")
        value = -self.unary() if text == "-" else self.sum()
        if text == "(":
            if self.peek() != ")":
                raise NotAnExpression("a '(' is not closed")
            self.at += 1
        self.depth -= 1
        return value


def tokens(text: str) -> list[tuple[str, str]]:
    """(kind, text) for each number, operator and bracket; anything else refused."""
    for spelled, op in SPELLINGS.items():
        text = text.replace(spelled, op)
    found: list[tuple[str, str]] = []
    at, end = 0, len(text.rstrip())
    while at < end:
        match = _TOKEN.match(text, at)
        if match is None:
            other = text[at:].strip()[:1]
            raise NotAnExpression(f"{other!r}, which is not a number, + - * / or a bracket")
        kind, token = match.lastgroup or "", match[match.lastgroup or 0]
        if kind == "name":
            raise NotAnExpression(f"the name {token!r}; only numbers, + - * / and brackets")
        if kind == "number" and len(token) > MAX_DIGITS:
            raise NotAnExpression(f"a number of {len(token)} digits")
        if token == "*" and text.startswith("**", match.start(kind)):
            raise NotAnExpression("'**', which is not a number, + - * / or a bracket")
        found.append((kind, token))
        at = match.end()
    return found


@dataclass(frozen=True)
class Reading:
    """An expression as read: its value (None: it divides by zero) and the numbers it uses."""

    value: Fraction | None
    numbers: tuple[Fraction, ...]


def read_expression(answer: str) -> Reading:
    """The value and numbers of ``answer``, a final answer (``= 24`` ending allowed);
    ``NotAnExpression`` saying why it is not one."""
    text = _LEADING_CLAIM.sub("", answer.strip().removesuffix(".").strip())
    chain = text.count("=") > 1 and "," not in text  # "(10-4)*(13-9) = 6*4 = 24"
    if chain and re.search(r"=\s*24\s*$", text):
        text = text.split("=")[0] + "= 24"
    claim = _CLAIM.match(text)
    if claim is not None:
        if len(claim["claim"]) > MAX_DIGITS or Fraction(claim["claim"]) != TARGET:
            raise NotAnExpression(f"it claims {claim['claim'][:MAX_DIGITS]}, not 24")
        text = claim["expression"]
    elif "=" in text:
        raise NotAnExpression("an '=' that is not one final '= 24'")
    parser = _Parser(tokens(text), [])
    if not parser.tokens:
        raise NotAnExpression("nothing before '= 24'" if claim else "it is empty")
    value = parser.sum()
    if parser.at < len(parser.tokens):
        raise NotAnExpression(f"{parser.peek()!r} after a complete expression")
    return Reading(None if parser.divided_by_zero else value, tuple(parser.numbers))


#: A run of an expression's characters within a sentence ("let me use (6 + 4) * 3 - 1
#: instead"): numbers, operators and brackets, at least one operator.
#: The characters of an expression; a run of them within a sentence may be one ("let me
#: use (6 + 4) * 3 - 1 instead").
_EXPRESSION_CHARS = frozenset("0123456789 +-*/().=\u00d7\u00b7\u00f7\u2212\u2013")
_OPERATORS = frozenset("+-*/\u00d7\u00b7\u00f7\u2212\u2013")


def _runs(sentence: str) -> list[str]:
    """The runs of expression characters in ``sentence`` holding an operator (one pass:
    a pattern that backtracks would be slow on a long run of brackets)."""
    found, current = [], []
    for char in [*sentence, "\n"]:
        if char in _EXPRESSION_CHARS:
            current.append(char)
            continue
        run = "".join(current).strip(" .=")
        if _OPERATORS.intersection(run) and any(c.isdigit() for c in run):
            found.append(run)
        current = []
    return found


def _whole_puzzle(run: str) -> bool:
    """Whether a run within a sentence could be an answer: an expression with no "=", or
    one of three numbers or more claiming "= 24"; not a step of checking ("3 + 5 - 4 = 4",
    "4 * 6 = 24")."""
    expression, equals, claim = run.partition("=")
    if not equals:
        return True
    numbers = re.findall(r"\d+(?:\.\d+)?", expression)
    return claim.strip() == "24" and len(numbers) >= 3


def expression_in(reply: str) -> Said[str]:
    """The expression ``reply`` commits to: its committed sentence that reads as one (a
    sentence of checking after it, "3 + 5 - 4 = 4, 4 * 6 = 24. Correct.", is not)."""
    return read_reply(reply, _expression)


def _expression(sentence: str, _: bool) -> Said[str]:
    """The sentence as an expression, else its part after a label or a semicolon
    ("Correct: (10 - 4) * (13 - 9)"; "Not 14 * 4, that's 56; (10 - 4) * (13 - 9)")."""
    why = ""
    # Within a sentence of words ("let me use ... instead"); an expression with a sign it
    # does not take ("10 ^ 4 - 13 - 9") is refused whole.
    worded = re.search(r"[^\W\d_]{2,}", sentence) is not None
    runs = [run for run in _runs(sentence) if _whole_puzzle(run)] if worded else []
    # guard: game24-two-expressions-offered-hedge
    if len(set(runs)) > 1 and re.search(r"\bor\b", sentence, re.IGNORECASE):
        return hedge(f"offers {' or '.join(runs[:3])}")
    for text in (sentence, sentence.rpartition(":")[2], sentence.rpartition(";")[2], *runs[::-1]):
        try:
            read_expression(text)
        except NotAnExpression as exc:
            why = why or f"not an expression: {exc}"
            continue
        return Said(text)
    return nothing(why)


def judge(numbers: list[int], answer: str) -> Grade:
    """Whether ``answer`` (a reply) makes 24 of exactly ``numbers``, and why."""
    said = expression_in(answer)
    if said.value is None:
        return Grade(False, said.why)
    text = said.value
    try:
        reading = read_expression(text)
    except NotAnExpression as exc:
        return Grade(False, f"not an expression: {exc}")
    problems = _misused(numbers, reading.numbers)
    if reading.value is None:
        problems.append("divides by zero")
    # guard: game24-24-exactly-fractions
    elif reading.value != TARGET:
        problems.append(f"equals {_show(reading.value)}, not 24")
    if problems:
        return Grade(False, "; ".join(problems))
    return Grade(True, f"uses {_listed(numbers)} once each and equals 24")


def _misused(given: list[int], used: tuple[Fraction, ...]) -> list[str]:
    want, got = Counter(Fraction(n) for n in given), Counter(used)
    problems = []
    for number, times in got.items():
        if number not in want:
            problems.append(f"uses {_show(number)}, which is not one of {_listed(given)}")
        # guard: game24-number-used-twice-wrong
        elif times > want[number]:
            problems.append(f"uses {_show(number)} {_times(times)}")
    missing = [_show(n) for n in want if got[n] < want[n]]
    if missing:
        problems.append(f"does not use {', '.join(missing)}")
    return problems


def _times(count: int) -> str:
    return "twice" if count == 2 else f"{count} times"


def _show(value: Fraction) -> str:
    """A whole number as itself, a decimal's exact digits, any other fraction as a/b."""
    exact = Decimal(value.numerator) / Decimal(value.denominator)
    if Fraction(exact) == value:
        return format(exact.normalize(), "f")
    return f"{value} (about {float(value):.6g})"


def _listed(numbers: list[int]) -> str:
    return " ".join(map(str, numbers))


class Game24Grader(Grader[Game24Task]):
    """The final answer is an expression making 24 of exactly the task's numbers."""

    async def grade(self, task: Game24Task, answer: str) -> Grade:
        return judge(task.expected.numbers, answer)

    def answer_check(self, task: Game24Task) -> AnswerCheck:
        return lambda answer: judge(task.expected.numbers, answer)

    def canonical(self, task: Game24Task, answer: str) -> str:
        """Its value and the numbers it uses ("24 from 4 9 10 13"): every right answer
        alike; an answer that is no expression, as its normalised text."""
        text = expression_in(answer).value or answer_text(answer).value or ""
        try:
            reading = read_expression(text)
        except NotAnExpression:
            return normalise(text)
        value = "undefined" if reading.value is None else str(reading.value)
        return f"{value} from {' '.join(str(n) for n in sorted(reading.numbers))}"


def numbers_from_target(target: Any, extras: Mapping[str, Any]) -> dict[str, list[int]]:
    """A data file's answer cell as game24's ``expected``: the numbers, as a list or as
    text ("4 9 10 13")."""
    items = target.replace(",", " ").split() if isinstance(target, str) else target
    if not isinstance(items, list) or not items:
        raise ValueError(f"expected the puzzle's numbers, e.g. '4 9 10 13', not {target!r}")
    try:
        return {"numbers": [int(item) for item in items]}
    except (TypeError, ValueError):
        raise ValueError(f"expected whole numbers, e.g. '4 9 10 13', not {target!r}") from None


_PUZZLE = {"numbers": [4, 9, 10, 13]}
_EIGHTS = {"numbers": [3, 3, 8, 8]}
#: (expected, answer, correct, why): what ``grade --self-test`` checks the grader on.
_WRITTEN: tuple[tuple[dict[str, list[int]], str, bool, str], ...] = (
    (_PUZZLE, "(10 - 4) * (13 - 9)", True, "the plain expression"),
    (_PUZZLE, "Answer: (10 - 4) * (13 - 9) = 24", True, "the ToT paper's '= 24' ending"),
    (_PUZZLE, "(10 \u2212 4) \u00d7 (13 \u2212 9)", True, "the typeset operators"),
    (_PUZZLE, "(13 - 9) * (10 - 4) = 24.", True, "any order, a full stop after 24"),
    (_PUZZLE, "-(4 - 10) * (13 - 9)", True, "a unary minus"),
    (_PUZZLE, "(10 - 4) * (13 - 9) = 23", False, "a claim of another value"),
    (_PUZZLE, "4 + 9 + 10 + 13 = 24", False, "a wrong '= 24' claim: it equals 36"),
    (_PUZZLE, "13 + 10 + 4 / 9", False, "near 24 is not 24"),
    (_PUZZLE, "(10 - 4) * (13 - 4)", False, "uses 4 twice and drops 9"),
    (_PUZZLE, "(10 - 4) * 4", False, "drops numbers"),
    (_PUZZLE, "(10 - 4) * (13 - 9) * 1", False, "an extra number"),
    (_PUZZLE, "4 * 6", False, "other numbers"),
    (_PUZZLE, "(13 - 9) ^ 2 + 10 - 4 + 2", False, "another operation: ^"),
    (_PUZZLE, "(10 - 4) ** 2", False, "another operation: **"),
    (_PUZZLE, "13 % 9 * (10 - 4)", False, "another operation: %"),
    (_PUZZLE, "sqrt(16) * (10 - 4)", False, "another operation: sqrt"),
    (_PUZZLE, "4! + 13 - 9 - 10 + 20", False, "another operation: !"),
    (_PUZZLE, "4 / (13 - 13) + 9 + 10", False, "a division by zero"),
    (_EIGHTS, "8 / (3 - 8 / 3)", True, "exactly 24 in fractions, 23.999... in floating point"),
    (_EIGHTS, "8 * 3.0000000000000001", False, "24 only in floating point"),
    (_PUZZLE, "__import__('os')", False, "Python smuggled in"),
    (_PUZZLE, "(lambda: 24)()", False, "a Python function"),
    (_PUZZLE, "24 if 1 else 0", False, "a Python conditional"),
    (_PUZZLE, "'24'", False, "a string"),
    (_PUZZLE, "24", False, "the target alone"),
    (_PUZZLE, "", False, "an empty answer"),
    (_PUZZLE, "Answer: = 24", False, "nothing before '= 24'"),
    (_PUZZLE, "(10 - 4) * (13 - 9", False, "an unclosed bracket"),
    (_PUZZLE, "(" * 5000 + "24" + ")" * 5000, False, "brackets nested too deeply"),
    (_PUZZLE, "-" * 5000 + "24", False, "minus signs nested too deeply"),
)
CASES = tuple(SelfCase(*case) for case in _WRITTEN)


@register_grader(
    "game24",
    Game24Task,
    "the final answer is an expression making 24 of exactly the task's numbers, each once",
    GraderDetails(
        example='{"id": "4-9-10-13", "question": "...", "expected": {"numbers": [4, 9, 10, 13]}}',
        cases=CASES,
        from_target=numbers_from_target,
    ),
)
def game24_grader(setup: GraderSetup) -> Game24Grader:
    read_options("game24", setup.options, GraderOptions)  # it takes none
    return Game24Grader()
