"""``loopbench power`` at the edges: an ICC of 0 or 1, fewer tasks than the test can reject
with, arms with no task in common, accuracies at 0 or 1, huge and tiny values. Each answers
with a right figure or one line and exit code 2, never a traceback."""

import json
import math

import pytest
from scipy import stats

from loopbench.harness.report.power import (
    Design,
    design_power,
    difference_variance,
    fewest_tasks,
    plan,
    tasks_needed,
)
from loopbench.harness.report.power_estimate import estimate
from loopbench.harness.report.power_exact import discordance, one_run_power
from loopbench.harness.results.reading import read_records
from loopbench.harness.results.records import RunRecord
from loopbench.harness.stats.distributions import beyond
from loopbench.harness.stats.sign_flip import sign_flip_p
from tests.harness.cli.test_power_cli import as_json, power, refused, shown


@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.0625, 0.1, 0.3, 0.001])
def test_the_fewest_tasks_are_where_the_paired_test_first_rejects(alpha):
    fewest = fewest_tasks(alpha)
    for tasks in range(1, fewest + 3):
        agreeing = sign_flip_p([1] * tasks, [0] * tasks, [1] * tasks)
        assert (agreeing < alpha) == (tasks >= fewest), tasks


def test_tasks_needed_is_never_fewer_than_the_test_can_reject_with():
    """At ICC 0 with repeats without end every task's difference is delta: power 1 from 5
    tasks on at alpha 0.05, and none below."""
    design = Design(0.56, 0.10, 3, 0.0)
    assert tasks_needed(design, math.inf) == 5
    assert design_power(design, 4, math.inf).value == 0.0
    assert design_power(design, 5, math.inf).value == 1.0
    for row in plan(Design(0.2, 0.7, 1, 0.0, alpha=0.01)):
        assert row.tasks_needed is not None and row.tasks_needed >= fewest_tasks(0.01)


def test_the_power_of_fewer_tasks_than_can_reject_is_zero_and_the_output_says_why():
    report = as_json("--baseline", "0.5", "--delta", "0.4", "--tasks", "4", "--repeats", "1")
    assert report["power_of_tasks"] == 0.0 and report["fewest_tasks"] == 5
    out = shown("--baseline", "0.5", "--delta", "0.4", "--tasks", "4", "--repeats", "1")
    assert "No outcome of 4 tasks rejects at alpha 0.05" in out
    assert "needs at least 5 tasks" in out


def test_an_icc_of_1_makes_repeats_copies_and_the_power_exact():
    design = Design(0.56, 0.10, 3, 1.0)
    found = design_power(design, 40)
    assert found.method == "exact"
    assert found.value == one_run_power(40, (0.56, 0.66, 1.0, design.arm_correlation), 0.05)
    assert tasks_needed(design, 1) == tasks_needed(design, 10) == tasks_needed(design, math.inf)
    report = as_json("--baseline", "0.56", "--delta", "0.1", "--icc", "1", "--tasks", "30")
    assert {row["method"] for row in report["rows"]} == {"exact"}


def test_an_arm_correlation_the_accuracies_do_not_allow_keeps_the_difference():
    """At ICC 1 arms of 50% and 60% cannot share every task: the weaker arm's right tasks
    are at most the stronger's. The difference stays delta, its variance delta - delta^2."""
    p10, p01 = discordance(0.5, 0.6, 1.0, 1.0)
    assert p10 == 0 and p01 == pytest.approx(0.1)
    assert difference_variance(0.5, 0.6, 3, 1.0, 1.0) == pytest.approx(0.1 - 0.01)


def test_the_noncentral_t_far_in_a_tail_is_a_number_where_scipy_gives_nan():
    value = beyond(7.296, 999, 3.3068)
    assert value == pytest.approx(stats.nct.sf(3.3068, 999, 7.296), abs=1e-9)
    # And so the tasks needed fall as repeats rise, at a small alpha as at 0.05.
    design = Design(0.5, 0.1, 3, 0.3, alpha=0.001)
    needed = [tasks_needed(design, r) for r in (3, 5, 10, math.inf)]
    assert needed == sorted(needed, reverse=True)


def _runs(folder, cells):
    """A results folder: (arm, task, correct) cells, two repeats each."""
    lines = [
        RunRecord(
            arm=arm, task_id=task, repeat=r, status="answered", correct=right, task_set="s"
        ).model_dump_json()
        for arm, task, right in cells
        for r in range(2)
    ]
    folder.mkdir()
    (folder / "runs.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def test_arms_with_no_task_in_common_are_refused_in_one_line(tmp_path):
    cells = [("a", f"t{t}", t % 2 == 0) for t in range(5)]
    cells += [("b", f"u{t}", t % 3 == 0) for t in range(5)]
    folder = _runs(tmp_path / "r", cells)
    refused(power("--from", str(folder)), str(folder), "no two of the 2 arms", "in common")


def test_an_arm_sharing_no_task_with_the_best_shows_dashes_and_json_nulls(tmp_path):
    cells = [(arm, f"t{t}", (t + i) % 3 == 0) for i, arm in enumerate("ab") for t in range(8)]
    cells += [("c", f"u{t}", True) for t in range(8)]  # always right, on tasks of its own
    folder = _runs(tmp_path / "r", cells)
    found = estimate(read_records(folder), 0.05, 0.8)
    assert found.best in ("a", "b")  # c shares no task: it is not the reference
    report = as_json("--from", str(folder))
    alone = next(p for p in report["from"]["pairs"] if p["arm"] == "c")
    assert alone["tasks"] == 0 and alone["difference"] is None and alone["sd"] is None
    row = next(line for line in shown("--from", str(folder)).splitlines() if "| c |" in line)
    assert row.split(" | ")[2:5] == ["—", "0", "—"]


def test_a_run_always_right_plans_at_a_baseline_given(tmp_path):
    folder = _runs(tmp_path / "r", [(arm, f"t{t}", True) for arm in "ab" for t in range(6)])
    refused(power("--from", str(folder)), "100% of the time", "--baseline")
    report = as_json("--from", str(folder), "--baseline", "0.5", "--delta", "0.2")
    assert report["from"]["pairs"][0]["detectable"] is None  # every difference was 0
    json.dumps(report, allow_nan=False)


@pytest.mark.parametrize(
    "args",
    [
        ["--alpha", "1e-300", "--repeats", "1"],
        ["--delta", "1e-300", "--repeats", "1"],
        ["--tasks", "1000000000000000", "--repeats", "1"],
        ["--power", "0.999999", "--repeats", "1"],
        ["--icc", "0", "--repeats", "1", "--tasks", "20"],
        ["--icc", "1", "--arm-correlation", "shared", "--tasks", "20"],
    ],
)
def test_huge_and_tiny_values_give_a_figure(args):
    report = as_json("--baseline", "0.5", *(["--delta", "0.1"] if "--delta" not in args else []),
                     *args)  # fmt: skip
    for row in report["rows"]:
        assert row["tasks_needed"] is None or row["tasks_needed"] >= report["fewest_tasks"]
        assert row["power"] is None or 0 <= row["power"] <= 1


def test_more_repeats_than_a_design_takes_are_refused_in_one_line():
    refused(power("--baseline", "0.5", "--delta", "0.1", "--repeats", "10000001"), "--repeats")
