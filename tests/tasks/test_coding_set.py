"""The coding task set: every suite accepts its reference and rejects a plausible mistake.

Each task has a wrong solution its feedback suite rejects and one its held-out suite
rejects (fixtures in ``tests/fixtures/coding_wrong/<task>/``); both suites test the same
rules, so each of those fails both suites. The one planned gap is the cron matcher's: its
feedback suite never writes 7 in the weekday field, so a matcher refusing "5-7" passes
feedback and fails held-out (the chapter's false accept).
"""

import ast
import asyncio
import json
from pathlib import Path

import pytest

from loopbench.sandbox.limits import Limits
from loopbench.sandbox.run import Sandbox, Suite
from loopbench.sandbox.suite_result import SuiteResult
from loopbench.tasks.loading import load_taskset
from loopbench.tasks.taskset import BUILTIN_DIR

CODING = BUILTIN_DIR / "coding"
WRONG = Path(__file__).parents[1] / "fixtures" / "coding_wrong"
TASKS = [
    json.loads(line)
    for line in (CODING / "tasks.jsonl").read_text("utf-8").splitlines()
    if line.strip()
]
IDS = [task["id"] for task in TASKS]
BY_ID = {task["id"]: task for task in TASKS}
ENDING = "Reply with the complete Python code (standard library only) in one ```python code block."
WRONG_KINDS = ("feedback_rejects", "heldout_rejects")
FALSE_ACCEPT = ("cron_field_matcher", "false_accept")


def suite_folder(task_id: str) -> Path:
    return CODING / "suites" / BY_ID[task_id]["expected"]["suite"]


def candidates() -> list[tuple[str, str]]:
    """Every (task id, candidate) the tests run: the reference and the wrong solutions."""
    pairs = [(task_id, kind) for task_id in IDS for kind in ("reference", *WRONG_KINDS)]
    return [*pairs, FALSE_ACCEPT]


def candidate_code(task_id: str, kind: str) -> str:
    folder = suite_folder(task_id) if kind == "reference" else WRONG / task_id
    return (folder / f"{kind}.py").read_text("utf-8")


def suite(task_id: str, which: str) -> Suite:
    source = (suite_folder(task_id) / f"{which}.py").read_text("utf-8")
    return Suite(which, source, BY_ID[task_id]["expected"]["entry_point"])


@pytest.fixture(scope="module")
def results() -> dict[tuple[str, str, str], SuiteResult]:
    """Every candidate against both of its task's suites, run at once in one sandbox."""
    keys = [(t, kind, which) for t, kind in candidates() for which in ("feedback", "heldout")]

    async def run_all() -> list[SuiteResult]:
        sandbox = Sandbox(limits=Limits())
        runs = [sandbox.run(candidate_code(t, kind), suite(t, which)) for t, kind, which in keys]
        return await asyncio.gather(*runs)

    return dict(zip(keys, asyncio.run(run_all()), strict=True))


def test_suites_tasks_and_wrong_solutions_match_one_to_one():
    assert len(IDS) == len(set(IDS)) == 10
    suites = [task["expected"]["suite"] for task in TASKS]
    assert sorted(suites) == sorted(p.name for p in (CODING / "suites").iterdir() if p.is_dir())
    for name in suites:
        files = sorted(p.name for p in (CODING / "suites" / name).iterdir() if p.suffix == ".py")
        assert files == ["feedback.py", "heldout.py", "reference.py"], name
    assert sorted(IDS) == sorted(p.name for p in WRONG.iterdir() if p.is_dir())
    for task_id in IDS:
        expected = {f"{kind}.py" for kind in WRONG_KINDS}
        if task_id == FALSE_ACCEPT[0]:
            expected.add(f"{FALSE_ACCEPT[1]}.py")
        names = {p.name for p in (WRONG / task_id).iterdir()}
        # and the solutions that break one rule each (tests/tasks/test_coding_rules.py)
        assert {n for n in names if not n.startswith("breaks_")} == expected, task_id


def test_the_set_loads_as_a_code_tests_set():
    loaded = load_taskset("coding")
    assert loaded.grader == "code_tests"
    assert [task.id for task in loaded.tasks] == IDS


def signature_lines(task_id: str) -> list[str]:
    """The reference's line defining the entry point and, for a class, those of its public
    and dunder methods, each without the final colon."""
    source = candidate_code(task_id, "reference")
    entry = BY_ID[task_id]["expected"]["entry_point"]
    found = [
        node
        for node in ast.parse(source).body
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name == entry
    ]
    assert len(found) == 1, f"{task_id}: the reference defines {entry} once at the top"
    node = found[0]
    methods = node.body if isinstance(node, ast.ClassDef) else []
    lines = source.splitlines()
    public = [
        m.lineno
        for m in methods
        if isinstance(m, ast.FunctionDef) and (m.name.startswith("__") or m.name[0] != "_")
    ]
    return [lines[n - 1].strip().removesuffix(":") for n in [node.lineno, *public]]


@pytest.mark.parametrize("task_id", IDS)
def test_question_states_the_exact_signature_of_the_reference(task_id):
    question = BY_ID[task_id]["question"]
    for line in signature_lines(task_id):
        assert line in question, f"{task_id}: the question does not show {line!r}"
    assert question.endswith(ENDING)


def count_tests(task_id: str, which: str) -> int:
    tree = ast.parse((suite_folder(task_id) / f"{which}.py").read_text("utf-8"))
    return sum(isinstance(n, ast.FunctionDef) and n.name.startswith("test_") for n in tree.body)


@pytest.mark.parametrize("task_id", IDS)
def test_suite_sizes(task_id):
    assert 4 <= count_tests(task_id, "feedback") <= 8
    assert 6 <= count_tests(task_id, "heldout") <= 12


@pytest.mark.parametrize("task_id", IDS)
def test_reference_passes_both_suites(results, task_id):
    for which in ("feedback", "heldout"):
        result = results[task_id, "reference", which]
        assert result.status == "passed", (which, result.first_failure, result.detail)
        assert result.passed == count_tests(task_id, which)


@pytest.mark.parametrize("kind", WRONG_KINDS)
@pytest.mark.parametrize("task_id", IDS)
def test_wrong_solution_fails_both_suites_on_a_check(results, task_id, kind):
    for which in ("feedback", "heldout"):
        result = results[task_id, kind, which]
        # "failed", not a crash: the wrong solution runs, and a check catches its mistake.
        assert result.status == "failed", (which, result.status, result.detail)
        assert result.first_failure is not None


def test_cron_false_accept_passes_feedback_and_fails_held_out(results):
    feedback = results[(*FALSE_ACCEPT, "feedback")]
    heldout = results[(*FALSE_ACCEPT, "heldout")]
    assert feedback.status == "passed", feedback.first_failure
    assert heldout.status == "failed"
    assert heldout.first_failure is not None
    assert '"5-7"' in heldout.first_failure.input
    assert heldout.first_failure.actual.startswith("raised ValueError")
