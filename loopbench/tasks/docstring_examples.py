"""Docstring examples read as tests: the forms HumanEval's prompts use, read with ``ast`` and
never run.

The forms (``form`` in ``Example``): a doctest (``>>> f(x)`` and the output lines under it,
no output meaning ``None``; or ``>>> f(x) == y`` on one line), ``f(x) SEP y`` with SEP one
of ``==>``, ``=>``, ``->``, ``➞``, ``==``, ``=``, ``should return``, ``returns``,
``# returns``, ``# =>``, "For NAME = V, ... the output (or result) should be y", and
"Input: ... Output: y" blocks. An example is usable when its call is the entry point called
with literal arguments (possibly inside ``round`` and the like) and its expected value is a
literal; a worked answer ``y = 1 + 9 = 10`` keeps the last value, trailing prose after a
literal is cut, and a bare ``true`` or ``false`` is read as ``True`` or ``False``. Keyword
inputs ("For lst = [1, 2]") become positional arguments when their names are exactly the
function's parameters.
"""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal, get_args

Form = Literal[
    "doctest",
    "doctest ==",
    "==>",
    "=>",
    "->",
    "➞",
    "==",
    "=",
    "should return",
    "returns",
    "# returns",
    "# =>",
    "For ... the output should be",
    "Input: ... Output:",
]
INLINE_FORMS: tuple[Form, ...] = get_args(Form)[2:12]

#: Functions a doctest may wrap the call in, as in ``round(find_zero([1, 2]), 2)``.
WRAPPERS = frozenset({"round", "sorted", "list", "tuple", "set", "abs", "len", "str", "int"})


@dataclass(frozen=True)
class Example:
    """One usable docstring example: ``assert CALL == EXPECTED`` with the entry point called."""

    call: str
    """The call as Python source, naming the entry point, e.g. ``truncate_number(3.5)``."""
    expected: str
    """The expected value as a Python literal."""
    form: Form
    line: int
    """Where it starts in the cleaned docstring (1-based)."""


# Reading the docstring. Separators of "f(x) SEP y", longest first.
_SEP = re.compile(
    r"[ \t]*(==>|=>|->|➞|==|=|should\s+return|returns|#[ \t]*returns|#[ \t]*=>)[ \t]*"
)
_FOR = re.compile(r"^\s*For (?P<args>.+?),?\s+the (?:output|result) should be (?P<out>.+)$")


_Found = tuple[int, Form, ast.expr | None, ast.expr | None, str]
"""A candidate example: its line (0-based), form, call, expected value and text."""


def scan(prompt: str, entry: ast.FunctionDef) -> tuple[list[Example], list[str]]:
    """Every usable example in ``entry``'s docstring (a function of ``prompt``), in docstring
    order, and the text of each that looked like an example but was not usable."""
    lines = _docstring(prompt, entry).splitlines()
    rest = list(lines)  # the lines doctests do not take
    found: list[Example] = []
    rejected: list[str] = []
    for line, form, call, expected, text in [
        *_doctests(lines, rest),
        *_inline("\n".join(rest), entry.name),
        *_keyed(rest, entry.name, [a.arg for a in entry.args.args]),
    ]:
        if call is None or expected is None or not _usable_call(call, entry.name):
            rejected.append(text)
            continue
        example = Example(ast.unparse(call), ast.unparse(expected), form, line + 1)
        if all((e.call, e.expected) != (example.call, example.expected) for e in found):
            found.append(example)
    found.sort(key=lambda e: e.line)
    return found, rejected


def _doctests(lines: list[str], rest: list[str]) -> Iterator[_Found]:
    """``>>> CALL`` and the output lines under it (none: ``None``), or ``>>> CALL == Y``;
    the lines taken are blanked in ``rest``."""
    for i, line in enumerate(lines):
        if not line.strip().startswith(">>>"):
            continue
        source = line.strip()[3:].strip()
        j = i + 1
        while j < len(lines) and lines[j].strip() and not lines[j].strip().startswith(">>>"):
            j += 1
        rest[i:j] = [""] * (j - i)
        node = _parse(source)
        if isinstance(node, ast.Compare) and [type(o) for o in node.ops] == [ast.Eq]:
            yield i, "doctest ==", node.left, _literal(node.comparators[0]), source
        else:
            output = "\n".join(x.strip() for x in lines[i + 1 : j]) or "None"
            yield i, "doctest", node, _value(output), source


def _inline(text: str, entry: str) -> Iterator[_Found]:
    """``CALL SEP Y``, the call possibly over several lines, Y to the end of its line."""
    resume = 0
    for match in re.finditer(rf"(?<![\w.]){re.escape(entry)}\s*\(", text):
        end = _close(text, match.end() - 1)
        if match.start() < resume or end is None or not (sep := _SEP.match(text, end)):
            continue
        resume = end
        call = _parse(text[match.start() : end])
        line = text.count("\n", 0, match.start())
        snippet = text[match.start() : sep.end() + 40]
        yield line, _inline_form(sep[1]), call, _value_at(text, sep.end()), snippet


def _keyed(rest: list[str], entry: str, params: list[str]) -> Iterator[_Found]:
    """ "For NAME = V, ... the output should be Y" and "Input: ... Output: Y" blocks."""
    for i, line in enumerate(rest):
        if match := _FOR.match(line):
            call = _keyword_call(match["args"], entry, params)
            yield i, "For ... the output should be", call, _value(match["out"]), line.strip()
        elif line.strip().startswith("Input:"):
            j = next((j for j in range(i, len(rest)) if rest[j].strip().startswith("Output:")), 0)
            if not j:
                continue
            given = ", ".join(x.strip() for x in [line.strip()[6:], *rest[i + 1 : j]] if x.strip())
            call = _keyword_call(given, entry, params)
            yield i, "Input: ... Output:", call, _value(rest[j].strip()[7:]), f"Input: {given}"


def _inline_form(sep: str) -> Form:
    spaced = " ".join(sep.replace("#", "# ").split())
    return next(f for f in INLINE_FORMS if f == spaced)


def _docstring(prompt: str, entry: ast.FunctionDef) -> str:
    """The docstring as written (escapes such as ``\\n`` kept), cleaned of indentation.
    The first string statement counts (HumanEval/115 puts ``import math`` before it)."""
    for node in entry.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            source = ast.get_source_segment(prompt, node.value) or ""
            quote = source[:3] if source[:3] in ('"""', "'''") else source[:1]
            return inspect.cleandoc(source[len(quote) : -len(quote)])
    return ""


def _parse(source: str) -> ast.expr | None:
    try:
        return ast.parse(source.strip(), mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def _literal(node: ast.expr | None) -> ast.expr | None:
    try:
        ast.literal_eval(node)  # type: ignore[arg-type]
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return node


def _value(text: str) -> ast.expr | None:
    """The literal ``text`` starts with: all of it (a final full stop dropped), else the
    value after its last ``=`` (a worked answer), else its longest literal first words."""
    text = text.strip().removesuffix(".")
    text = {"true": "True", "false": "False"}.get(text, text)
    words = text.split(" ")
    attempts = [text, text.rsplit("=", 1)[-1] if "=" in text else ""]
    attempts += [" ".join(words[:n]).removesuffix(".") for n in range(len(words) - 1, 0, -1)]
    for attempt in attempts:
        if attempt.strip() and (node := _literal(_parse(attempt))) is not None:
            return node
    return None


def _value_at(text: str, start: int) -> ast.expr | None:
    """The value from ``start`` to the end of its line, or of the line closing its brackets."""
    end = text.find("\n", start)
    while end != -1 and _opens(text[start:end]):
        end = text.find("\n", end + 1)
    return _value(text[start:] if end == -1 else text[start:end])


def _opens(text: str) -> bool:
    return sum(text.count(c) for c in "([{") > sum(text.count(c) for c in ")]}")


def _close(text: str, start: int) -> int | None:
    """The index after the bracket closing the one at ``start``; quotes end at a newline."""
    depth, quote = 0, ""
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            quote = "" if ch in (quote, "\n") and text[i - 1] != "\\" else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def _keyword_call(given: str, entry: str, params: list[str]) -> ast.Call | None:
    """``f(...)`` from "a = 1, b = [2]" (names exactly the parameters, in any order) or from
    positional values; the longest leading run of comma-separated parts that parses."""
    parts = given.split(",")
    for n in range(len(parts), 0, -1):
        call = _parse(f"{entry}({','.join(parts[:n])})")
        if not isinstance(call, ast.Call):
            continue
        if call.keywords and not call.args:
            named = {k.arg: k.value for k in call.keywords}
            if sorted(named, key=str) != sorted(params):
                return None
            return ast.Call(call.func, [named[p] for p in params], [])
        return call if not call.keywords else None
    return None


def _usable_call(node: ast.expr, entry: str) -> bool:
    """The entry point called with literal positional arguments, possibly as an argument of
    a wrapper such as ``round``; every other name (``is_happy(a)``) makes it unusable."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.keywords:
        return False
    if node.func.id == entry:
        return all(_literal(a) is not None for a in node.args)
    return (
        node.func.id in WRAPPERS
        and any(_usable_call(a, entry) for a in node.args)
        and all(_literal(a) is not None or _usable_call(a, entry) for a in node.args)
    )
