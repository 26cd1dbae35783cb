"""What a prompt slot's text may hold, and how it renders: it fills in the variables the
slot receives, and nothing more. A pattern's slots (loopbench/harness/patterns/prompts.py) and the
judge grader's (loopbench/graders/judge_prompts.py) are checked and rendered alike.

A slot's text is a Jinja2 template read from a prompt file, which teams share as data; it
must never run code, read the interpreter's insides, loop, or grow past a bound. So a text
is checked when the file loads, against an allow-list of the parsed template's nodes:
text, ``{{ name }}`` for a variable the slot receives, a literal, ``or``/``and``/``not``,
``==``/``!=``, an inline ``a if b else c``, ``{% if %}``/``{% elif %}``/``{% else %}``,
and the plain filters in ``FILTERS`` with literal arguments. Anything else (an attribute
or an item, a call, a loop, ``set``, ``include``, ``extends``, ``import``, a macro, a
test, arithmetic...) is refused there, before any request, in one phrase naming it.

It renders in jinja2's sandbox with no globals, no tests and only those filters, each of
which checks what it would make against the render's size bound before making it; the
render stops at the bound (``SlotTooLarge``), so no text can fill memory.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from functools import lru_cache
from typing import Any

import jinja2
from jinja2 import meta, nodes
from jinja2.filters import do_capitalize, do_indent, do_title, do_truncate, do_wordcount
from jinja2.sandbox import ImmutableSandboxedEnvironment

from loopbench.harness.errors import BadInput

#: The longest slot text (characters), and how much longer than its variables' own text a
#: rendered slot may be: far above any real prompt, and a bound on what one can become.
MAX_SLOT_TEXT = 2**20
#: The most tokens a slot's ``{{ }}`` and ``{% %}`` tags may hold together, and the most
#: filters it may apply: a prompt fills in a few variables; more costs time to compile.
MAX_TAG_TOKENS = 4000
MAX_FILTERS = 64
#: The deepest a slot's expressions and ``{% if %}`` blocks may nest.
MAX_DEPTH = 32


class SlotTooLarge(BadInput):
    """A slot rendered past its bound: the run is refused, nothing of it is sent."""


#: The render's bound, in characters, which the filters check before making their text.
_BOUND: ContextVar[int] = ContextVar("slot_bound", default=MAX_SLOT_TEXT)


def _within_bound(size: int, what: str) -> None:
    # guard: templates-filter-checks-size-before
    if size > _BOUND.get():
        raise SlotTooLarge(
            f"would make {size} characters with the filter {what}, more than {_BOUND.get()}"
        )


def _text(value: object) -> str:
    return value if isinstance(value, str) else str(value)


def _upper(value: object) -> str:
    return _text(value).upper()


def _lower(value: object) -> str:
    return _text(value).lower()


def _capitalize(value: object) -> str:
    return do_capitalize(_text(value))


def _title(value: object) -> str:
    return do_title(_text(value))


def _trim(value: object) -> str:
    return _text(value).strip()


def _default(value: object, default_value: str = "", boolean: bool = False) -> object:
    """The variable, or ``default_value`` when ``boolean`` and it is empty: every variable a
    slot uses is given, so only ``boolean`` makes a difference."""
    return default_value if boolean and not value else value


def _replace(value: object, old: str, new: str, count: int | None = None) -> str:
    text = _text(value)
    found = text.count(old)  # "" is found len(text) + 1 times, as str.replace inserts it
    if count is not None and count >= 0:
        found = min(found, count)
    _within_bound(len(text) + found * (len(new) - len(old)), "replace")
    return text.replace(old, new, -1 if count is None else count)


def _indent(value: object, width: int | str = 4, first: bool = False, blank: bool = False) -> str:
    text = _text(value)
    pad = len(width) if isinstance(width, str) else max(width, 0)
    _within_bound(len(text) + (text.count("\n") + 1) * pad, "indent")
    return do_indent(text, width, first, blank)


def _truncate(
    value: object, length: int = 255, killwords: bool = False, end: str = "...", leeway: int = 5
) -> str:
    return do_truncate(_ENV, _text(value), length, killwords, end, leeway)


def _length(value: object) -> int:
    return len(_text(value))


def _wordcount(value: object) -> int:
    return do_wordcount(_text(value))


def _first(value: object) -> str:
    return _text(value)[:1]


def _last(value: object) -> str:
    return _text(value)[-1:]


#: The filters a slot may use: each makes text from text, bounded.
FILTERS: dict[str, Callable[..., object]] = {
    "upper": _upper,
    "lower": _lower,
    "capitalize": _capitalize,
    "title": _title,
    "trim": _trim,
    "default": _default,
    "d": _default,
    "replace": _replace,
    "indent": _indent,
    "truncate": _truncate,
    "length": _length,
    "count": _length,
    "wordcount": _wordcount,
    "first": _first,
    "last": _last,
}

#: Templates render as written (no escaping, a last newline kept, an unknown name an
#: error), sandboxed, with nothing but the slot's variables and ``FILTERS``.
# guard: templates-slots-render-sandbox
_ENV = ImmutableSandboxedEnvironment(
    undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False
)
# guard: templates-sandbox-has-no-globals
_ENV.globals.clear()
_ENV.tests.clear()
# guard: templates-sandbox-has-only-listed
_ENV.filters.clear()
_ENV.filters.update(FILTERS)


#: Texts rendered from short text variables, by (template, variables): a run renders the
#: same system prompt as every run of its arm before it, and Jinja2 made it anew each time.
_RENDERED: dict[tuple[str, tuple[tuple[str, str], ...]], str] = {}
_MOST_RENDERED = 1024
#: Variables longer than this together are rendered each time, never kept.
_KEPT_VARIABLES = 1 << 14


def render(text: str, variables: dict[str, Any]) -> str:
    """``text`` with ``variables`` filled in; ``SlotTooLarge`` past ``MAX_SLOT_TEXT``
    characters more than the variables' own text, before the rest is made."""
    if all(type(v) is str for v in variables.values()):
        key = (text, tuple(variables.items()))
        if (found := _RENDERED.get(key)) is not None:
            return found
        made = _render(text, variables)
        if sum(len(v) for v in variables.values()) <= _KEPT_VARIABLES:
            if len(_RENDERED) >= _MOST_RENDERED:
                _RENDERED.clear()
            _RENDERED[key] = made
        return made
    return _render(text, variables)


def _render(text: str, variables: dict[str, Any]) -> str:
    bound = MAX_SLOT_TEXT + sum(len(_text(v)) for v in variables.values())
    token = _BOUND.set(bound)
    try:
        pieces, size = [], 0
        for piece in _template(text).generate(**variables):
            size += len(piece)
            # guard: templates-render-stops-at-bound
            if size > bound:
                raise SlotTooLarge(f"renders to more than {bound} characters")
            pieces.append(piece)
        return "".join(pieces)
    finally:
        _BOUND.reset(token)


@lru_cache(maxsize=256)
def _template(text: str) -> jinja2.Template:
    return _ENV.from_string(text)


def template_problem(text: str, variables: tuple[str, ...]) -> str | None:
    """What makes ``text`` more than filling in ``variables``, in one phrase; None if
    nothing does."""
    # guard: templates-slot-text-bounded
    if len(text) > MAX_SLOT_TEXT:
        return f"is {len(text)} characters long, more than the {MAX_SLOT_TEXT} a slot may hold"
    try:
        # guard: templates-slot-tags-hold-bounded
        if _tag_tokens(text) > MAX_TAG_TOKENS:
            return (
                f"holds more than {MAX_TAG_TOKENS} tokens in its {{{{ }}}} and {{% %}} tags; "
                "a slot fills in a few variables"
            )
        parsed = _ENV.parse(text)
    except jinja2.TemplateSyntaxError as exc:
        return f"not a template: {_cut(exc.message or '')} (line {exc.lineno})"
    except RecursionError:
        return f"nests deeper than {MAX_DEPTH} levels"
    # guard: templates-number-too-long-read
    except ValueError:  # a literal number of over 4300 digits, which Python will not read
        return "holds a number too long to read"
    check = _Check(variables)
    if problem := check.body(parsed.body, 0):
        return problem
    if check.unknown:
        receives = ", ".join(variables) or "no variables"
        return f"uses {_cut(', '.join(sorted(check.unknown)))}, but the slot receives {receives}"
    try:
        _template(text)  # compiled here, once: what compiles here renders in a run
    except (jinja2.TemplateError, RecursionError) as exc:
        return f"not a template: {_cut(str(exc))}"
    return None


def used_variables(text: str) -> set[str]:
    """The variables ``text`` fills in: a text ``template_problem`` passed."""
    return meta.find_undeclared_variables(_ENV.parse(text))


#: ``{name}`` with a name alone between single braces: how Python's ``str.format`` writes
#: a variable, which a Jinja2 template sends as written.
_PYTHON_STYLE = re.compile(r"\{\s*([A-Za-z_]\w*)\s*\}")


def python_style(text: str, names: Iterable[str]) -> tuple[str, int] | None:
    """The first of ``names`` that ``text`` writes ``{name}`` outside its tags and raw
    blocks, and its line; None if none. Another word in braces is text, sent as written."""
    known, raw = set(names), False
    for line, kind, value in _ENV.lex(text):
        raw = (raw or kind == "raw_begin") and kind != "raw_end"
        # guard: name-looked-for-outside-tags
        if kind != "data" or raw:
            continue
        for found in _PYTHON_STYLE.finditer(value):
            if found.group(1) in known:
                return found.group(1), line + value[: found.start()].count("\n")
    return None


def _cut(text: str, most: int = 120) -> str:
    """``text`` up to ``most`` characters: what a refusal quotes of the slot stays short."""
    return text if len(text) <= most else text[: most - 3] + "..."


def _only(variables: tuple[str, ...]) -> str:
    if not variables:
        return "a slot only holds text (this one receives no variables)"
    return "a slot only fills in its variables: " + ", ".join("{{ " + v + " }}" for v in variables)


#: Tokens that are text, not part of a tag's expression.
_NOT_COUNTED = {"data", "whitespace", "raw_begin", "raw_end"} | {
    f"{kind}{part}" for kind in ("comment", "linecomment") for part in ("_begin", "", "_end")
}


def _tag_tokens(text: str) -> int:
    """The tokens in ``text``'s tags, counted up to one past ``MAX_TAG_TOKENS``."""
    count = 0
    for _, kind, _ in _ENV.lex(text):
        if kind not in _NOT_COUNTED:
            count += 1
            if count > MAX_TAG_TOKENS:
                break
    return count


#: What each refused node is called, said of the slot ("calls a function (...)").
_REFUSED = {
    nodes.Getattr: "reads an attribute",
    nodes.Getitem: "reads an item",
    nodes.Slice: "slices a value",
    nodes.Call: "calls a function",
    nodes.Test: "tests a value ('is ...')",
    nodes.For: "loops ({% for %})",
    nodes.Include: "includes a template ({% include %})",
    nodes.Extends: "extends a template ({% extends %})",
    nodes.Import: "imports a template ({% import %})",
    nodes.FromImport: "imports from a template ({% from %})",
    nodes.Macro: "defines a macro ({% macro %})",
    nodes.CallBlock: "calls a macro ({% call %})",
    nodes.Assign: "sets a variable ({% set %})",
    nodes.AssignBlock: "sets a variable ({% set %})",
    nodes.Block: "defines a block ({% block %})",
    nodes.FilterBlock: "filters a block ({% filter %})",
    nodes.With: "scopes variables ({% with %})",
    nodes.ScopedEvalContextModifier: "changes escaping ({% autoescape %})",
    nodes.Scope: "opens a scope ({% autoescape %})",
    nodes.Concat: "joins values with '~'",
    nodes.BinExpr: "computes with an operator",
    nodes.UnaryExpr: "computes with an operator",
    nodes.Literal: "builds a list, tuple or dict",
}


def _shown(node: nodes.Node, depth: int = 0) -> str:
    """A short rendering of the expression ``node``, to name it in a refusal."""
    if depth > 8:
        return "..."
    if isinstance(node, nodes.Name):
        return node.name
    if isinstance(node, nodes.Const):
        return repr(node.value)[:20]
    if isinstance(node, nodes.Getattr):
        return f"{_shown(node.node, depth + 1)}.{node.attr}"
    if isinstance(node, nodes.Getitem):
        return f"{_shown(node.node, depth + 1)}[{_shown(node.arg, depth + 1)}]"
    if isinstance(node, nodes.Call):
        return f"{_shown(node.node, depth + 1)}(...)"
    if isinstance(node, nodes.Filter) and node.node is not None:
        return f"{_shown(node.node, depth + 1)}|{node.name}"
    return "..."


def _refused(node: nodes.Node, variables: tuple[str, ...]) -> str:
    what = next((w for kind, w in _REFUSED.items() if isinstance(node, kind)), None)
    what = what or f"holds a {type(node).__name__} construct"
    shown = _shown(node) if isinstance(node, nodes.Expr) else "..."
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    what = what if shown == "..." else f"{what} ('{shown}')"
    return f"{what} {_on_line(node)}, which a prompt slot cannot; {_only(variables)}"


def _on_line(node: nodes.Node) -> str:
    """Where ``node`` stands in the slot's text; a few nodes (a scope) carry no line."""
    return "in its text" if node.lineno is None else f"on line {node.lineno} of its text"


_COMPARISONS = {"eq", "ne"}
_CONSTANTS = (str, int, float, bool, type(None))


class _Check:
    """A walk of a parsed slot over the nodes it may hold; the first other one refused."""

    def __init__(self, variables: tuple[str, ...]) -> None:
        self.variables = variables
        self.unknown: set[str] = set()
        self.filters = 0

    def body(self, body: list[nodes.Node], depth: int) -> str | None:
        for node in body:
            if problem := self.statement(node, depth):
                return problem
        return None

    def statement(self, node: nodes.Node, depth: int) -> str | None:
        if depth > MAX_DEPTH:
            return f"nests deeper than {MAX_DEPTH} levels (line {node.lineno})"
        if isinstance(node, nodes.Output):
            return next(filter(None, (self.expr(n, depth + 1) for n in node.nodes)), None)
        if isinstance(node, nodes.If):
            return (
                self.expr(node.test, depth + 1)
                or self.body(node.body, depth + 1)
                or self.body(list(node.elif_), depth + 1)
                or self.body(node.else_, depth + 1)
            )
        # guard: templates-loop-set-include-or
        return _refused(node, self.variables)  # a loop, a set, an include, a macro...

    def expr(self, node: nodes.Node, depth: int) -> str | None:
        # guard: templates-expressions-nest-bounded
        if depth > MAX_DEPTH:
            return f"nests deeper than {MAX_DEPTH} levels (line {node.lineno})"
        inner = depth + 1
        if isinstance(node, nodes.TemplateData):
            return None
        if isinstance(node, nodes.Name) and node.ctx == "load":
            if node.name not in self.variables:
                # guard: prompts-variable-slot-does-not
                self.unknown.add(node.name)
            return None
        if isinstance(node, nodes.Const) and isinstance(node.value, _CONSTANTS):
            return None
        if isinstance(node, nodes.And | nodes.Or):
            return self.expr(node.left, inner) or self.expr(node.right, inner)
        if isinstance(node, nodes.Not):
            return self.expr(node.node, inner)
        if isinstance(node, nodes.CondExpr):
            # guard: templates-inline-if-has-else
            if node.expr2 is None:
                return f"has an inline if without an else on line {node.lineno} of its text"
            return next(
                filter(None, (self.expr(n, inner) for n in (node.test, node.expr1, node.expr2))),
                None,
            )
        if isinstance(node, nodes.Compare):
            # guard: templates-only-compare
            if any(op.op not in _COMPARISONS for op in node.ops):
                return f"compares other than with == or != on line {node.lineno} of its text"
            operands = [node.expr, *(op.expr for op in node.ops)]
            return next(filter(None, (self.expr(n, inner) for n in operands)), None)
        if isinstance(node, nodes.Filter) and node.node is not None:
            return self.filter(node, inner)
        # guard: templates-attribute-item-or-call
        return _refused(node, self.variables)  # an attribute, an item, a call, a test...

    def filter(self, node: nodes.Filter, depth: int) -> str | None:
        where = f"on line {node.lineno} of its text"
        # guard: templates-filter-not-list-refused
        if node.name not in FILTERS:
            allowed = ", ".join(sorted(FILTERS))
            return (
                f"uses the filter {node.name!r} {where}, not one of the plain filters a slot "
                f"may use: {allowed}"
            )
        self.filters += 1
        # guard: templates-slot-applies-bounded
        if self.filters > MAX_FILTERS:
            return f"applies more than {MAX_FILTERS} filters"
        given = [*node.args, *(k.value for k in node.kwargs)]
        # guard: templates-filter-arguments-literals
        if node.dyn_args or node.dyn_kwargs or not all(_literal(a) for a in given):
            return (
                f"gives the filter {node.name!r} an argument other than a number, a text or "
                f"true/false {where}"
            )
        args = [a.value for a in node.args if isinstance(a, nodes.Const)]
        kwargs = {
            str(k.key): k.value.value for k in node.kwargs if isinstance(k.value, nodes.Const)
        }
        # guard: templates-filter-arguments-tried
        if why := _cannot_take(node.name, args, kwargs):
            return f"gives the filter {node.name!r} arguments it cannot take {where} ({why})"
        return self.expr(node.node, depth) if node.node is not None else None


def _literal(node: nodes.Node) -> bool:
    return isinstance(node, nodes.Const) and isinstance(node.value, _CONSTANTS)


def _cannot_take(name: str, args: list[Any], kwargs: dict[str, Any]) -> str | None:
    """Why filter ``name`` cannot take ``args`` and ``kwargs``, tried on an empty text."""
    function = FILTERS[name]
    try:
        inspect.signature(function).bind("", *args, **kwargs)
        function("", *args, **kwargs)
    except (TypeError, ValueError, AssertionError, OverflowError, SlotTooLarge) as exc:
        return str(exc) or type(exc).__name__
    return None
