"""A suite made ready for the test runner, here in the harness: its tests found, its asserts
rewritten (``_Rewrite``) and compiled, and the statements an exception is reported against
(``statements``). The runner then needs neither ``ast`` nor the compiler: it gets the code
object (``marshal``, for the same interpreter it runs with) and imports only what it must, so
that a run's two processes start about as fast as its one used to. Kept per source: a suite
is compiled once for all the runs it grades.
"""

from __future__ import annotations

import ast
import binascii
import functools
import marshal
import sys
from dataclasses import dataclass
from typing import Any

from loopbench.sandbox.suite_result import suite_tests

FIELD_CHARS = 1000  # the most characters of one reported input or expected
SUITE_FILE = "<suite>"


@dataclass(frozen=True)
class CompiledSuite:
    tests: tuple[str, ...]
    """The tests the runner runs, in order: ``test_*``, or else ``check``."""
    spans: tuple[tuple[int, int, str, str], ...]
    """(first line, last line, input, expected) of each statement (``statements``)."""
    code: str
    """The rewritten module's code object, marshalled, as base64 text; "" when broken."""
    broken: str
    """Why the suite cannot run ("the suite raised SyntaxError: ... at line 3"), or ""."""

    def to_job(self) -> dict[str, Any]:
        return {
            "tests": list(self.tests),
            "spans": [list(span) for span in self.spans],
            "code": self.code,
            "broken": self.broken,
            "python": sys.implementation.cache_tag,
        }


@functools.lru_cache(maxsize=512)
def compiled(source: str) -> CompiledSuite:
    """The suite, ready for the runner; a suite that does not compile is ``broken``."""
    try:
        tree = ast.parse(source, SUITE_FILE)
        spans = statements(tree, source)
        tree = ast.fix_missing_locations(_Rewrite(source).visit(tree))
        code = compile(tree, SUITE_FILE, "exec", dont_inherit=True)
    except SyntaxError as exc:
        where = f" at line {exc.lineno}" if exc.lineno else ""
        return CompiledSuite((), (), "", f"the suite raised SyntaxError: {exc.msg}{where}")
    except (ValueError, RecursionError, MemoryError) as exc:  # a null byte, or too deep
        return CompiledSuite((), (), "", f"the suite does not compile: {type(exc).__name__}")
    tests = tuple(suite_tests(source) or ())
    if not tests:
        return CompiledSuite((), (), "", "the suite defines no test_* function and no check")
    text = binascii.b2a_base64(marshal.dumps(code), newline=False).decode("ascii")
    return CompiledSuite(tests, tuple(spans), text, "")


def cut(text: str) -> str:
    return text if len(text) <= FIELD_CHARS else text[: FIELD_CHARS - 3] + "..."


class _Rewrite(ast.NodeTransformer):
    """``assert A == B`` -> ``_lb_eq(A, B, "A")``; ``assert E`` -> ``_lb_true(E, "E")`` (a
    message is dropped); ``with raises(X): body`` -> ``with raises(X, _source="body"):``,
    the body's last expression noted for "returned ...". Evaluation order is unchanged."""

    def __init__(self, source: str) -> None:
        self.source = source

    def text(self, node: ast.AST) -> str:
        return cut(ast.get_source_segment(self.source, node) or ast.unparse(node))

    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        test = node.test
        # guard: assert-reports-both-values
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
            args = [test.left, test.comparators[0], ast.Constant(self.text(test.left))]
            call = ast.Call(ast.Name("_lb_eq", ast.Load()), args, [])
        else:
            args = [test, ast.Constant(self.text(test))]
            call = ast.Call(ast.Name("_lb_true", ast.Load()), args, [])
        return ast.copy_location(ast.Expr(call), node)

    def visit_With(self, node: ast.With) -> ast.AST:
        self.generic_visit(node)
        for item in node.items:
            call = item.context_expr
            if isinstance(call, ast.Call) and _called(call) == "raises":
                body = "\n".join(self.text(statement) for statement in node.body)
                call.keywords.append(ast.keyword("_source", ast.Constant(cut(body))))
                last = node.body[-1]
                if isinstance(last, ast.Expr):
                    noted = ast.Call(ast.Name("_lb_value", ast.Load()), [last.value], [])
                    node.body[-1] = ast.copy_location(ast.Expr(noted), last)
        return node


def _called(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


def statements(tree: ast.Module, source: str) -> list[tuple[int, int, str, str]]:
    """(first line, last line, input, expected) of each statement, for the report of an
    exception raised in it: an ``assert A == B`` gives A and B's source, others their own."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or node.end_lineno is None:
            continue
        test = node.test if isinstance(node, ast.Assert) else None
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
            inp = ast.get_source_segment(source, test.left) or ""
            exp = literal(test.comparators[0], source)
        else:
            inp, exp = ast.get_source_segment(source, test or node) or "", ""
        found.append((node.lineno, node.end_lineno, cut(inp), cut(exp)))
    return found


def literal(node: ast.expr, source: str) -> str:
    """An expected value never evaluated (the actual raised first): its repr when it is a
    literal, else its source."""
    try:
        return cut(repr(ast.literal_eval(node)))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return ast.get_source_segment(source, node) or ""
