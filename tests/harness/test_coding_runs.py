"""The fixes-versus-breakages experiment end to end: `run` then `table` on coding task sets,
with the scripted coder served on loopback and every test run in the real sandbox.

The scripted coder (``loopbench.harness.fakes.code_responder``) plays each task a known part, so
every count in the table is predicted here from those parts, not read back from a run.
"""

import json
from dataclasses import replace

import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.fakes.code_responder import CodeResponder, part
from loopbench.harness.fakes.fake_server import FakeServer
from loopbench.harness.results.reading import read_records
from loopbench.tasks.loading import load_taskset

SECRET = "sk-test-secret-never-written-0002"
ARMS = [
    "direct",
    "reflection:cycles=2",
    "reflexion:attempts=3,check=tests",
    "reflexion:check=self_tests",
]


def invoke(args):
    env = {"LOOPBENCH_API_KEY": SECRET}
    return CliRunner().invoke(main, args, env=env, catch_exceptions=False)


def run_grid(taskset, folder, *extra):
    with FakeServer(CodeResponder(taskset)) as server:
        result = invoke(
            [
                "run",
                "--tasks",
                str(taskset.path) if taskset.name == "coding" else taskset.name,
                "--base-url",
                server.base_url,
                "--model",
                "fake",
                "--out",
                str(folder),
                "--quiet",
                *[a for arm in ARMS for a in ("--arm", arm)],
                *extra,
            ]
        )
    assert result.exit_code == 0, result.output
    return result


def summary(folder):
    result = invoke(["table", str(folder), "--format", "json"])
    assert result.exit_code == 0, result.output
    return {row["arm"]: row for row in json.loads(result.output)}


@pytest.fixture(scope="module")
def coding_run(tmp_path_factory):
    taskset = load_taskset("coding")
    folder = tmp_path_factory.mktemp("coding") / "results"
    printed = run_grid(taskset, folder, "--paired")
    return taskset, folder, printed


def parts(taskset):
    roles = [part(t.id) for t in taskset.tasks]
    return roles.count("wrong first"), roles.count("broken by review"), roles.count("right")


def test_the_table_counts_fixes_breakages_and_false_accepts(coding_run):
    taskset, folder, _ = coding_run
    wrong, broken, right = parts(taskset)
    n = len(taskset.tasks)
    rows = summary(folder)

    direct = rows["direct"]
    assert direct["accuracy"] == pytest.approx((broken + right) / n)
    assert direct["first_pass"] == direct["accuracy"]

    tests = rows["reflexion:attempts=3,check=tests"]
    assert tests["first_pass"] == pytest.approx((broken + right) / n)
    assert tests["accuracy"] == 1.0
    assert (tests["wrong_to_right"], tests["right_to_wrong"]) == (wrong, 0)
    assert (tests["false_accepts"], tests["false_rejects"]) == (0, 0)

    own = rows["reflexion:check=self_tests"]
    assert own["false_accepts"] == wrong  # its own tests only ask whether the name exists
    assert own["wrong_to_right"] == 0 and own["accuracy"] == pytest.approx((broken + right) / n)

    review = rows["reflection:cycles=2"]
    assert (review["wrong_to_right"], review["right_to_wrong"]) == (0, broken)
    assert review["code_edits"] == broken + right
    assert review["edits_same_result"] == right
    assert review["false_accepts"] is None  # no check, nothing to count


def test_a_coding_run_records_a_code_answer(coding_run):
    _, folder, _ = coding_run
    records = read_records(folder)
    assert {r.answer_kind for r in records} == {"code"}
    assert {r.tools_offered for r in records} == {False}  # the coding set has no tools


def test_paired_arms_repair_the_same_first_attempt(coding_run):
    taskset, folder, _ = coding_run
    records = read_records(folder)
    assert len(records) == len(ARMS) * len(taskset.tasks)
    # One arm paid for each task's first attempt; the three others replayed it.
    assert sum(r.cache_hits for r in records) == 3 * len(taskset.tasks)


def test_the_printed_table_shows_the_coding_columns(coding_run):
    _, _, printed = coding_run
    header = next(line for line in printed.output.splitlines() if line.startswith("| arm"))
    for column in ("first pass", "w→r", "r→w", "edits", "no effect", "false acc", "false rej"):
        assert column in header
    assert "every verdict is the held-out suite's" in printed.output


def test_no_key_reaches_the_results(coding_run):
    _, folder, printed = coding_run
    for path in folder.iterdir():
        assert SECRET not in path.read_text(errors="replace"), path
    assert SECRET not in printed.output


def test_humaneval_runs_through_the_same_experiment(tmp_path, monkeypatch):
    full = load_taskset("humaneval")
    subset = replace(full, tasks=full.tasks[:12])
    monkeypatch.setattr("loopbench.harness.plan.load_taskset", lambda spec, *given: subset)
    folder = tmp_path / "humaneval"
    run_grid(subset, folder)
    wrong, broken, right = parts(subset)
    rows = summary(folder)
    tests = rows["reflexion:attempts=3,check=tests"]
    assert tests["wrong_to_right"] == wrong and tests["right_to_wrong"] == 0
    assert rows["reflection:cycles=2"]["right_to_wrong"] == broken
    assert rows["direct"]["accuracy"] == pytest.approx((broken + right) / len(subset.tasks))


def test_grade_checks_a_candidate_by_hand(tmp_path):
    taskset = load_taskset("coding")
    task = next(t for t in taskset.tasks if t.id == "roman_numerals")
    code = tmp_path / "candidate.py"
    code.write_text(task.suites.reference)
    for suite in ("feedback", "heldout"):
        result = invoke(
            [
                "grade",
                "--task",
                "coding/roman_numerals",
                "--code-file",
                str(code),
                "--suite",
                suite,
                "--format",
                "json",
            ]
        )
        assert result.exit_code == 0
        printed = json.loads(result.output.splitlines()[-1])
        assert set(printed) >= {"status", "passed", "failed", "first_failure", "seconds"}
        assert printed["status"] == "passed" and printed["failed"] == 0
    code.write_text("def parse_roman(text):\n    return 0\n")
    result = invoke(
        ["grade", "--task", "coding/roman_numerals", "--code-file", str(code), "--format", "json"]
    )
    printed = json.loads(result.output.splitlines()[-1])
    assert printed["status"] == "failed" and printed["first_failure"]["test"].startswith("test_")


@pytest.mark.parametrize(
    ("task", "message"),
    [
        ("coding/no_such_task", "no task 'no_such_task' in coding"),
        ("depot/q1", "depot is not a coding task set"),
        ("roman_numerals", "write SET/ID"),
    ],
)
def test_grade_refuses_a_task_it_cannot_find(tmp_path, task, message):
    code = tmp_path / "candidate.py"
    code.write_text("x = 1\n")
    result = invoke(["grade", "--task", task, "--code-file", str(code)])
    assert result.exit_code == 2 and message in result.output


def test_compare_reports_the_repair_measures_of_coding_arms(coding_run):
    taskset, folder, _ = coding_run
    wrong, _, _ = parts(taskset)
    printed = invoke(["compare", str(folder), str(folder)])
    assert printed.exit_code == 0, printed.output
    assert "Coding runs, on the held-out suite" in printed.output
    assert f"fixes {wrong} → {wrong}" in printed.output
    rows = json.loads(invoke(["compare", str(folder), str(folder), "--format", "json"]).output)
    tests = next(r for r in rows["arms"] if r["arm"] == "reflexion:attempts=3,check=tests")
    assert (tests["wrong_to_right_before"], tests["wrong_to_right_after"]) == (wrong, wrong)
    assert tests["false_accepts_after"] == 0


def test_grade_takes_a_humaneval_problem(tmp_path):
    code = tmp_path / "candidate.py"
    code.write_text("def truncate_number(number: float) -> float:\n    return number % 1.0\n")
    result = invoke(
        ["grade", "--task", "humaneval/HumanEval_2", "--code-file", str(code), "--format", "json"]
    )
    assert json.loads(result.output.splitlines()[-1])["status"] == "passed"
    code.write_text("def truncate_number(number: float) -> float:\n    return number\n")
    result = invoke(["grade", "--task", "humaneval/HumanEval_2", "--code-file", str(code)])
    assert result.output.startswith("failed") and "first failure" in result.output
