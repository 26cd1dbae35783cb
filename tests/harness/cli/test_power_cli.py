"""``loopbench power`` through click: its md and json outputs, a finished run's estimates,
and bad input refused with exit code 2 and one line."""

import json
import math
import traceback

import pytest
from click.testing import CliRunner, Result

from loopbench.harness.cli.power import power_command
from loopbench.harness.report.power import (
    CONSERVATIVE,
    NORMAL_FROM,
    Design,
    design_power,
    tasks_needed,
)
from tests.harness.report.test_power import write_results


def power(*args: str) -> Result:
    return CliRunner().invoke(power_command, list(args))


def shown(*args: str) -> str:
    result = power(*args)
    assert result.exit_code == 0, result.output
    return result.output


def as_json(*args: str) -> dict:
    return json.loads(shown(*args, "--format", "json"))


def test_tasks_needed_in_md_with_the_table_of_repeats():
    out = shown("--baseline", "0.56", "--delta", "0.10")
    needed = tasks_needed(Design(0.56, 0.10, 3, 0.3, CONSERVATIVE))
    assert needed is not None and needed >= NORMAL_FROM  # normal theory: no mark
    assert f"**{needed} tasks** at 3 repeat(s) give 80% power" in out
    assert "ICC 0.30 (assumed; measure yours with --from)" in out
    assert "correlated 0.50 between the arms (assumed, conservatively" in out
    assert "sign flips of per-task differences" in out
    table = [line for line in out.splitlines() if line.startswith("| ")][1:]
    assert [line.split(" | ")[0] for line in table] == ["| 1", "| **3**", "| 5", "| 10", "| ∞"]
    assert "docs/power.md" in out


def test_json_carries_the_same_figures():
    report = as_json("--baseline", "0.56", "--delta", "0.10", "--repeats", "4", "--icc", "0.2")
    design = Design(0.56, 0.10, 4, 0.2, CONSERVATIVE)
    assert report["design"]["arm_b"] == pytest.approx(0.66)
    assert report["sources"] == {
        "baseline": "given",
        "repeats": "given",
        "icc": "given",
        "arm_correlation": "assumed, conservatively; measure yours with --from",
    }
    assert report["tasks_needed"] == tasks_needed(design)
    assert report["power_of_tasks"] is None
    assert [row["repeats"] for row in report["rows"]] == [4, 1, 3, 5, 10, None]
    assert report["normal_theory_from_tasks"] == NORMAL_FROM
    assert report["test"] == "sign flips of per-task differences, two-sided, mid-p"


def test_the_power_of_given_tasks():
    args = ["--baseline", "0.56", "--delta", "0.10", "--tasks", "12", "--repeats", "3"]
    report = as_json(*args, "--icc", "0.3")
    expected = design_power(Design(0.56, 0.10, 3, 0.3, CONSERVATIVE), 12)
    assert expected.method == "simulated" and report["method"] == "simulated"
    assert report["power_of_tasks"] == pytest.approx(expected.value)
    assert 0.05 < expected.value < 0.2
    out = shown(*args, "--icc", "0.3")
    assert f"**Power {expected.value:.0%}**‡ with 12 tasks at 3 repeat(s)" in out
    assert f"‡ Simulated: with repeats and fewer than {NORMAL_FROM} tasks" in out
    one = as_json(*args[:-1], "1", "--icc", "0.3")  # one run a task: exact, no mark
    assert one["method"] == "exact"


@pytest.mark.parametrize(
    "word, value", [("shared", 1.0), ("independent", 0.0), ("0.4", 0.4), ("SHARED", 1.0)]
)
def test_the_arm_correlation_takes_words_and_numbers(word, value):
    report = as_json("--baseline", "0.5", "--delta", "0.1", "--arm-correlation", word)
    assert report["design"]["arm_correlation"] == value
    assert report["sources"]["arm_correlation"] == "given"


def test_an_unshared_task_effect_leaves_a_floor_repeats_cannot_lower():
    report = as_json("--baseline", "0.5", "--delta", "0.1", "--arm-correlation", "independent")
    endless = report["rows"][-1]
    assert endless["repeats"] is None
    assert endless["sd"] ** 2 == pytest.approx(0.3 * (0.25 + 0.6 * 0.4))
    assert endless["tasks_needed"] > report["tasks_needed"] / 3


def test_from_a_run_estimates_and_says_what_it_could_detect(tmp_path):
    arms = {"cot": 0.45, "react": 0.55, "reflexion": 0.6}
    folder = write_results(tmp_path / "r", arms, 60, 4, 0.3, True, seed=2)
    report = as_json("--from", str(folder))
    found = report["from"]
    assert (found["arms"], found["tasks"], found["repeats"]) == (3, 60, 4)
    assert "design" not in report  # no --delta: only what the run could detect
    assert found["used"]["icc"] == {"value": found["icc"], "source": "estimated"}
    assert 0.02 < found["smallest_detectable"] < 0.3
    assert [p["arm"] for p in found["pairs"]] == sorted(set(arms) - {found["best"]})
    out = shown("--from", str(folder), "--delta", "0.1")
    assert f"**{folder}**: 3 arms, 60 tasks, 4 repeat(s)" in out
    assert "Smallest rise over" in out and "(estimated)" in out
    assert "**" in out.split("Arm A right")[1]  # the plan follows, at the estimates


def test_flags_win_over_the_estimates(tmp_path):
    folder = write_results(tmp_path / "r", {"a": 0.4, "b": 0.5}, 30, 3, 0.2, True, seed=1)
    report = as_json(
        "--from", str(folder), "--delta", "0.1", "--icc", "0.5", "--repeats", "7",
        "--baseline", "0.3", "--tasks", "40",
    )  # fmt: skip
    assert report["sources"] == {
        "baseline": "given",
        "repeats": "given",
        "icc": "given",
        "arm_correlation": "estimated",
    }
    assert (report["design"]["icc"], report["design"]["repeats"]) == (0.5, 7)
    assert report["design"]["tasks"] == 40
    assert report["from"]["used"]["icc"] == {"value": 0.5, "source": "given"}
    assert report["from"]["repeats"] == 3  # the run's own design stays the run's


def test_a_run_of_one_repeat_assumes_the_icc_and_says_so(tmp_path):
    folder = write_results(tmp_path / "r", {"a": 0.4, "b": 0.6}, 20, 1, 0.2, True, seed=1)
    report = as_json("--from", str(folder))
    assert report["from"]["icc"] is None
    assert report["from"]["used"]["icc"]["source"].startswith("assumed: each (arm, task)")
    assert not math.isnan(report["from"]["smallest_detectable"])


def refused(result: Result, *words: str) -> str:
    """The one error line, as tests/test_bad_input.py checks every command's."""
    text = result.output
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        text += "".join(traceback.format_exception(result.exception))
    assert result.exit_code == 2, text
    assert "Traceback" not in text
    last = text.strip().splitlines()[-1]
    assert last.startswith("Error: "), text
    for word in words:
        assert word in last, f"{word!r} not in {last!r}"
    return last


@pytest.mark.parametrize(
    "args, words",
    [
        (["--delta", "0.1"], ["--baseline"]),
        (["--baseline", "0.5"], ["--delta"]),
        (["--baseline", "1.2", "--delta", "0.1"], ["--baseline", "0<x<1"]),
        (["--baseline", "0", "--delta", "0.1"], ["--baseline", "0<x<1"]),
        (["--baseline", "0.95", "--delta", "0.1"], ["arm B at 1.05", "outside (0, 1)"]),
        (["--baseline", "0.3", "--delta", "-0.4"], ["arm B at -0.1"]),
        (["--baseline", "0.5", "--delta", "0"], ["--delta 0"]),
        (["--baseline", "0.5", "--delta", "nan"], ["--delta", "not a finite number"]),
        (["--baseline", "0.5", "--delta", "0.1", "--icc", "1.5"], ["--icc"]),
        (["--baseline", "0.5", "--delta", "0.1", "--tasks", "1"], ["--tasks"]),
        (["--baseline", "0.5", "--delta", "0.1", "--power", "0.01"], ["not above alpha"]),
        (["--baseline", "0.5", "--delta", "0.1", "--arm-correlation", "2"], ["shared"]),
        (["--baseline", "0.5", "--delta", "0.1", "--arm-correlation", "most"], ["shared"]),
    ],
)
def test_bad_values_are_refused_in_one_line(args, words):
    refused(power(*args), *words)


def test_bad_results_folders_are_refused_in_one_line(tmp_path):
    refused(power("--from", str(tmp_path / "none")), "no such file")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "runs.jsonl").write_text("")
    refused(power("--from", str(empty)), "no finished runs")
    one_arm = write_results(tmp_path / "a", {"cot": 0.5}, 10, 2, 0.2, True, seed=0)
    refused(power("--from", str(one_arm)), str(one_arm), "1 arm(s)", "run at least two")
    one_task = write_results(tmp_path / "t", {"a": 0.4, "b": 0.6}, 1, 3, 0.2, True, seed=0)
    refused(power("--from", str(one_task)), "1 task(s)")
    wrong = write_results(tmp_path / "w", {"a": 0.0, "b": 0.0}, 5, 2, 0.0, True, seed=0)
    refused(power("--from", str(wrong)), "0% of the time", "--baseline")
    assert power("--from", str(wrong), "--baseline", "0.2").exit_code == 0


def test_the_expected_runs_of_both_designs():
    """Beside the fixed design, the rounds of --until-separated that match its power, and
    the runs an arm each spends: fewer on average for the sequential rule when the arms
    share a task's difficulty."""
    args = ("--baseline", "0.5", "--delta", "0.05", "--tasks", "200", "--repeats", "7")
    args += ("--icc", "0.2", "--arm-correlation", "shared")
    plan = as_json(*args)["sequential"]
    assert plan["tasks"] == 200 and plan["fixed_runs"] == 1400 and plan["margin"] == 0.05
    assert plan["max_repeats"] >= 7
    assert plan["power"] >= plan["fixed_power"]
    assert plan["false_alarms"] <= 0.05 + 0.01  # simulated: within its error of alpha
    assert plan["runs_at_delta"] < plan["fixed_runs"]
    out = shown(*args)
    assert "**Expected runs an arm**: the fixed design, 200 tasks at 7 repeat(s): 1,400" in out
    assert f"--until-separated --margin 0.05 --max-repeats {plan['max_repeats']}" in out
    assert f"{plan['runs_at_delta']:,.0f} on average at this difference" in out


def test_the_expected_runs_plan_on_the_tasks_needed_when_none_are_given():
    report = as_json("--baseline", "0.56", "--delta", "0.10", "--arm-correlation", "shared")
    assert report["sequential"]["tasks"] == report["tasks_needed"]
    assert report["sequential"]["fixed_runs"] == report["tasks_needed"] * 3
