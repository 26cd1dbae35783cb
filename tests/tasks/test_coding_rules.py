"""The coding set's suites cover the rules of each specification, and say which tests check
which rule.

Every test of both suites names the rules it checks (``@rules("empty-line")``). Held-out must
check every rule feedback checks, or wrong code passes held-out and a repair that breaks the
rule is never counted as a breakage. The names are held to what the tests do: each wrong
solution (``tests/fixtures/coding_wrong/<task>/``) says which rules it breaks (``# Breaks:``),
and in each suite the tests naming one of those rules must fail on it while every other test
passes. A wrong name, or a rule named where it is not checked, fails one of the two.
"""

import ast
import asyncio
from pathlib import Path

import pytest

from loopbench.sandbox.limits import Limits
from loopbench.sandbox.run import Sandbox, Suite
from tests.tasks.test_coding_set import BY_ID, IDS, WRONG, suite_folder

SUITES = ("feedback", "heldout")


def rules_of(source: str) -> dict[str, tuple[str, ...]]:
    """Each top-level ``test_*`` function and the rules its ``@rules(...)`` names."""
    found = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            named: tuple[str, ...] = ()
            for decorator in node.decorator_list:
                if isinstance(decorator, ast.Call) and getattr(decorator.func, "id", "") == "rules":
                    named += tuple(ast.literal_eval(arg) for arg in decorator.args)
            found[node.name] = named
    return found


def suite_rules(task_id: str, which: str) -> dict[str, tuple[str, ...]]:
    return rules_of((suite_folder(task_id) / f"{which}.py").read_text("utf-8"))


def checked(task_id: str, which: str) -> set[str]:
    return {rule for rules in suite_rules(task_id, which).values() for rule in rules}


@pytest.mark.parametrize("task_id", IDS)
def test_every_test_names_the_rules_it_checks(task_id):
    for which in SUITES:
        for test, rules in suite_rules(task_id, which).items():
            assert rules, f"{task_id}/{which}.py: {test} names no rule"
            for rule in rules:
                assert rule.replace("-", "").isalnum() and rule == rule.lower(), (test, rule)


@pytest.mark.parametrize("task_id", IDS)
def test_held_out_checks_every_rule_feedback_checks(task_id):
    feedback, heldout = checked(task_id, "feedback"), checked(task_id, "heldout")
    listing = f"{task_id}: feedback checks {sorted(feedback)}; held-out {sorted(heldout)}"
    assert feedback - heldout == set(), listing


def test_the_rules_only_held_out_checks_are_the_planned_false_accept():
    """Held-out may check more than feedback; on this set only the cron task does, by design
    (its feedback never writes 7 in a weekday range)."""
    only_held_out = {t: checked(t, "heldout") - checked(t, "feedback") for t in IDS}
    assert {t: r for t, r in only_held_out.items() if r} == {
        "cron_field_matcher": {"weekday-field-7", "missing-step", "bad-character"},
        "edit_distance": {"equal", "code-points"},
        "expiring_cache": {"independent-keys", "hashable-keys"},
        "expression_evaluator": {"spaces"},
        "semver_compare": {"core-first", "bad-character"},
        "topological_sort": {"single-node"},
    }


def breaks(path: Path) -> set[str]:
    """The rules a wrong solution says it breaks (its ``# Breaks:`` line)."""
    for line in path.read_text("utf-8").splitlines():
        if line.startswith("# Breaks:"):
            return {rule.strip() for rule in line.removeprefix("# Breaks:").split(",")}
    raise AssertionError(f"{path}: no '# Breaks:' line")


WRONG_SOLUTIONS = sorted((p.parent.name, p.stem) for p in WRONG.glob("*/*.py"))


def only(source: str, keep: set[str]) -> str:
    """The suite with only the ``test_*`` functions named in ``keep`` (helpers stay)."""
    tree = ast.parse(source)
    tree.body = [
        node
        for node in tree.body
        if not (isinstance(node, ast.FunctionDef) and node.name.startswith("test_"))
        or node.name in keep
    ]
    return ast.unparse(tree)


def split_suites() -> list[tuple[str, str, str, bool, Suite]]:
    """(task, wrong solution, suite, whether its tests name a broken rule, the suite of
    those tests only) for each non-empty half of each suite."""
    halves = []
    for task_id, name in WRONG_SOLUTIONS:
        broken = breaks(WRONG / task_id / f"{name}.py")
        for which in SUITES:
            rules = suite_rules(task_id, which)
            source = (suite_folder(task_id) / f"{which}.py").read_text("utf-8")
            catching = {test for test, named in rules.items() if broken & set(named)}
            for half, keep in ((True, catching), (False, set(rules) - catching)):
                if keep:
                    suite = Suite(
                        which, only(source, keep), BY_ID[task_id]["expected"]["entry_point"]
                    )
                    halves.append((task_id, name, which, half, suite))
    return halves


@pytest.fixture(scope="module")
def split_results():
    halves = split_suites()

    async def run_all():
        sandbox = Sandbox(Limits())
        runs = [
            sandbox.run((WRONG / t / f"{n}.py").read_text("utf-8"), suite)
            for t, n, _, _, suite in halves
        ]
        return await asyncio.gather(*runs)

    return [(h[:4], r) for h, r in zip(halves, asyncio.run(run_all()), strict=True)]


@pytest.mark.parametrize(("task_id", "name"), WRONG_SOLUTIONS)
def test_a_wrong_solution_fails_exactly_the_tests_naming_the_rules_it_breaks(
    split_results, task_id, name
):
    broken = breaks(WRONG / task_id / f"{name}.py")
    assert broken <= checked(task_id, "heldout"), f"held-out checks none of {broken}"
    for (
        task,
        wrong,
        which,
        naming,
    ), result in split_results:
        if (task, wrong) != (task_id, name):
            continue
        if naming:
            assert result.status == "failed", (which, "tests naming", broken, result)
        else:
            assert result.status == "passed", (which, "tests not naming", broken, result)
