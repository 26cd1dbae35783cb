"""The shipped tools a task set can offer: ``lookup`` over its encyclopedia, and ``calc``.

Each is built by a factory from what the task set gives it (``ToolSource``) and its
options (loopbench/tasks/tool_registry.py registers them by name). ``lookup`` has one option,
``variant``, an ablation axis of the depot experiment (seed 003); an arm sets it with
``tool=improved``:

- *plain*: an exact or substring title match; several matches are an error, and a
  miss says "not found" and names no candidate.
- *improved*: an entry ends with its related entries by name, several matches come
  back as entries, and a miss explains how entries are named.
"""

from __future__ import annotations

import ast
import difflib
import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from loopbench.harness.errors import HarnessFault
from loopbench.harness.tools import Tool, ToolFailure, ToolOptions

LookupVariant = Literal["plain", "improved"]
MAX_MATCHES_SHOWN = 4


@dataclass(frozen=True)
class Encyclopedia:
    entries: dict[str, str]
    related: dict[str, list[str]] = field(default_factory=dict)
    naming: str = "Entries are titled by the proper name of the thing they describe."

    @cached_property
    def folded(self) -> dict[str, str]:
        """Every title as the lookup compares it, folded once (a lookup reads them all)."""
        return {title: fold(title) for title in self.entries}

    @cached_property
    def by_folded(self) -> dict[str, str]:
        """Each folded title's first title: an exact lookup in one step, not a walk."""
        titles: dict[str, str] = {}
        for title, folded in self.folded.items():
            titles.setdefault(folded, title)
        return titles

    def exact(self, query: str) -> str | None:
        return self.by_folded.get(fold(query))

    def containing(self, query: str) -> list[str]:
        wanted = fold(query)
        return [t for t, folded in self.folded.items() if wanted and wanted in folded]

    def closest(self, query: str, n: int) -> list[str]:
        titles = {folded: t for t, folded in self.folded.items()}
        return [titles[m] for m in difflib.get_close_matches(fold(query), titles, n=n, cutoff=0.3)]

    def sharing_a_word(self, query: str) -> list[str]:
        words = set(fold(query).split()) - {"the", "of", "a", "depot", "depots"}
        return [t for t, folded in self.folded.items() if words & set(folded.split())]


@dataclass(frozen=True)
class ToolSource:
    """What a task set gives the tools it names."""

    folder: Path
    """The set's folder: a plugin's tool may read files of its own there."""
    encyclopedia: Encyclopedia | None = None
    """encyclopedia.json, read when a tool the set names reads it (the lookup)."""


#: What ``fold`` makes a space: compiled once, not found in ``re``'s cache on every lookup.
_NOT_WORD = re.compile(r"[^\w]+")


def fold(text: str) -> str:
    """A title or query as the lookup compares them: case folded, punctuation to spaces."""
    return " ".join(_NOT_WORD.sub(" ", text.casefold()).split())


class LookupArgs(BaseModel):
    title: str = Field(description="The title of the encyclopedia entry, e.g. 'Mount Everest'.")


class CalcArgs(BaseModel):
    expression: str = Field(description="An arithmetic expression, e.g. '2020 - 2017'.")


def plain_lookup(book: Encyclopedia, query: str) -> str:
    title = book.exact(query)
    if title is not None:
        return book.entries[title]
    matches = book.containing(query)
    if len(matches) == 1:
        return book.entries[matches[0]]
    if matches:
        raise ToolFailure(
            f"Error: {len(matches)} entries match {query!r}. Ask for exactly one title."
        )
    # A plain miss names no candidate: explaining misses is what the improved tool adds.
    raise ToolFailure(f"Not found: no entry titled {query!r}.")


def improved_lookup(book: Encyclopedia, query: str) -> str:
    title = book.exact(query)
    if title is not None:
        return _with_related(book, title)
    matches = book.containing(query) or book.sharing_a_word(query)
    if matches:
        shown = matches[:MAX_MATCHES_SHOWN]
        more = f"\n({len(matches) - len(shown)} more match.)" if len(matches) > len(shown) else ""
        return "\n\n".join(f"[{t}] {_with_related(book, t)}" for t in shown) + more
    close = book.closest(query, 3)
    hint = f" Closest titles: {', '.join(close)}." if close else ""
    raise ToolFailure(f"No entry is titled {query!r}. {book.naming}{hint}")


def _with_related(book: Encyclopedia, title: str) -> str:
    related = book.related.get(title)
    text = book.entries[title]
    return f"{text}\nRelated entries: {', '.join(related)}." if related else text


class LookupOptions(ToolOptions):
    variant: LookupVariant = "plain"
    """plain: exact or substring titles, a bare miss; improved: related entries, several
    matches shown, a miss that says how entries are titled."""


def make_lookup(source: ToolSource, options: LookupOptions) -> Tool:
    # guard: lookup-needs-encyclopedia
    if source.encyclopedia is None:
        raise ValueError(
            "the lookup tool reads its task set's encyclopedia.json, and this set has none"
        )
    return lookup_tool(source.encyclopedia, options.variant)


def lookup_tool(book: Encyclopedia, variant: LookupVariant = "plain") -> Tool:
    find = improved_lookup if variant == "improved" else plain_lookup

    def run(args: LookupArgs) -> str:
        return find(book, args.title)

    return Tool("lookup", "Look up an encyclopedia entry by its title.", LookupArgs, run)


_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[float], float]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


class CalcError(HarnessFault, ValueError):
    """An expression the calculator does not take: the model reads why as the result."""


def calculate(expression: str) -> str:
    """Evaluate arithmetic only, by walking the parsed tree; nothing else is executed."""
    text = _THOUSANDS.sub("", expression.strip()).replace("\u00d7", "*").replace("\u2212", "-")
    if not text:
        raise CalcError("the expression is empty; write e.g. '2020 - 2017'")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise CalcError(f"{expression!r} is not an arithmetic expression ({exc.msg})") from None
    value = _evaluate(tree.body, expression)
    return _format(value)


def _evaluate(node: ast.AST, source: str) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        if isinstance(node.value, bool):
            raise CalcError(f"{source!r} holds a truth value, not a number")
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left, source), _evaluate(node.right, source)
        if isinstance(node.op, ast.Pow) and abs(right) > 64:
            raise CalcError("exponents above 64 are not supported")
        try:
            return _BINARY[type(node.op)](left, right)
        except ZeroDivisionError:
            raise CalcError("division by zero") from None
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand, source))
    raise CalcError(
        f"{source!r} holds something other than numbers and + - * / // % ** and brackets"
    )


def _format(value: float) -> str:
    if isinstance(value, int) or (math.isfinite(value) and value == int(value)):
        return str(int(value))
    return f"{value:.10g}"


def calc_tool() -> Tool:
    def run(args: CalcArgs) -> str:
        return calculate(args.expression)  # a CalcError becomes a failed result the model reads

    return Tool(
        "calc", "Evaluate an arithmetic expression (numbers, + - * / and brackets).", CalcArgs, run
    )


def make_calc(source: ToolSource, options: ToolOptions) -> Tool:
    return calc_tool()
