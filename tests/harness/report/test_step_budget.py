"""The step budget read from correct runs (``loopbench.harness.report.step_budget``), on folders
written record by record: the budget, what it saves, the runs left out, an arm with no
correct run, and where it is shown (table, API, report)."""

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from loopbench.harness.api import load
from loopbench.harness.cli.main import main
from loopbench.harness.errors import BadInput
from loopbench.harness.report.html.render import report_html
from loopbench.harness.report.step_budget import (
    BadShare,
    smallest_budget,
    step_budget,
    step_budgets,
)
from loopbench.harness.results.columns import read_frame
from loopbench.harness.results.frames import Pricing
from loopbench.harness.results.prices import load_prices

from .judge_folders import judged, write_folder
from .test_table import record

#: A failed run's tokens: 40,000 in and 1,000 out cost $0.012 at gpt-5-mini's prices.
FAILED_TOKENS = (40_000, 1_000, 0)


def run(arm, task, turns, correct=True, status="answered", repeat=0, tokens=(1000, 100, 0)):
    r = record(arm=arm, task=task, repeat=repeat, status=status, correct=correct, tokens=tokens)
    return r.model_copy(update={"turns": turns})


def example_runs():
    """The worked example of docs/results.md: react right ten times, wrong or cut four
    times, one api_error; direct never right."""
    right = [run("react", f"t{i}", turns) for i, turns in enumerate([2, 2, 3, 3, 3, 4, 4, 5, 6, 9])]
    failed = [
        run("react", "t10", 12, status="step_budget", tokens=FAILED_TOKENS),
        run("react", "t11", 12, status="step_budget", tokens=FAILED_TOKENS),
        run("react", "t12", 8, correct=False, tokens=FAILED_TOKENS),
        run("react", "t13", 5, correct=False, tokens=FAILED_TOKENS),
    ]
    lost = [run("react", "t14", 20, status="api_error", tokens=FAILED_TOKENS)]
    direct = [run("direct", f"t{i}", 1, correct=False) for i in range(3)]
    return right + failed + lost + direct


def example_folder(tmp_path: Path) -> Path:
    return write_folder(tmp_path / "results", example_runs(), grader=None)


def budget_row(printed: str, arm: str) -> str:
    """The arm's row in the step budget table under the main one."""
    below = printed.split("**Step budget**", 1)[1]
    return next(line for line in below.splitlines() if line.startswith(f"| {arm} "))


def frame_of(folder: Path):
    return read_frame(folder, Pricing(load_prices()))


def test_budget_is_the_smallest_keeping_the_share():
    turns = [2, 2, 3, 3, 3, 4, 4, 5, 6, 9]
    assert smallest_budget(np.array(turns), 0.9) == 6
    assert smallest_budget(np.array(turns), 0.95) == 9
    assert smallest_budget(np.array(turns), 0.5) == 3
    # 0.95 of 20 runs is 19 of them, not 20, whatever the float product says.
    twenty = np.array([*[3] * 19, 30])
    assert smallest_budget(twenty, 0.95) == 3


def test_savings_are_the_turns_and_cost_beyond_the_budget(tmp_path):
    frame = frame_of(example_folder(tmp_path))
    react = step_budget(frame[frame["arm"] == "react"], 0.9)
    assert react.budget == 6 and react.correct_runs == 10 and react.correct_cut == 1
    # Failed 12, 12 (cut by the arm's own budget), 8 and 5: three beyond 6 turns.
    assert react.failed_runs == 4 and react.failed_over == 3
    assert react.turns_saved == (12 - 6) + (12 - 6) + (8 - 6)
    # $0.012 a run, spread evenly over its turns: 6/12, 6/12 and 2/8 of it.
    assert react.cost_saved_usd == pytest.approx(0.012 * (0.5 + 0.5 + 0.25))
    assert react.correct_turns_p50 == 3.5 and react.failed_turns_p50 == 10


def test_runs_not_graded_are_left_out(tmp_path):
    runs = [
        run("a", "t1", 3),
        run("a", "t2", 30, status="api_error"),
        run("a", "t3", 30, status="pattern_error"),
        run("a", "t4", 30, status="tool_error"),
        judged("a", "t5", 0, True, grade_status="judge_api_error").model_copy(update={"turns": 30}),
        run("a", "t6", 5, correct=False),
    ]
    frame = frame_of(write_folder(tmp_path / "r", runs, grader=None))
    budget = step_budget(frame, 0.95)
    assert budget.correct_runs == 1 and budget.failed_runs == 1
    assert budget.budget == 3 and budget.turns_saved == 2 and budget.failed_turns_p90 == 5


def test_an_arm_with_no_correct_run_has_no_budget_and_says_so(tmp_path):
    folder = example_folder(tmp_path)
    budgets = step_budgets(frame_of(folder), 0.9).set_index("arm")
    assert math.isnan(budgets.loc["direct", "step_budget"])
    assert budgets.loc["direct", "step_budget_turns_saved"] == 0
    printed = CliRunner().invoke(main, ["table", str(folder), "--step-budget", "0.9"])
    assert printed.exit_code == 0, printed.output
    assert "none: no correct run" in budget_row(printed.output, "direct")


@pytest.mark.parametrize("share", ["0", "1.5", "2"])
def test_a_share_outside_0_to_1_is_refused_in_one_line(tmp_path, share):
    folder = example_folder(tmp_path)
    result = CliRunner().invoke(main, ["table", str(folder), f"--step-budget={share}"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "above 0 and at most 1" in result.output
    with pytest.raises(BadShare):
        step_budget(frame_of(folder), float(share))


def test_the_flag_alone_keeps_95_percent(tmp_path):
    result = CliRunner().invoke(main, ["table", str(example_folder(tmp_path)), "--step-budget"])
    assert result.exit_code == 0, result.output
    assert "budget (95% kept)" in result.output
    assert "| 9 " in budget_row(result.output, "react")  # the 10th of 10 correct runs' turns


def test_json_and_csv_carry_the_budget_and_plain_tables_do_not(tmp_path):
    folder = example_folder(tmp_path)
    out = CliRunner().invoke(
        main, ["table", str(folder), "--format", "json", "--step-budget", "0.9"]
    )
    rows = {row["arm"]: row for row in json.loads(out.output)}
    assert rows["react"]["step_budget"] == 6 and rows["react"]["step_budget_turns_saved"] == 14
    assert rows["direct"]["step_budget"] is None
    csv = CliRunner().invoke(main, ["table", str(folder), "--format", "csv", "--step-budget"])
    assert "step_budget_cost_saved_usd" in csv.output.splitlines()[0]
    plain = CliRunner().invoke(main, ["table", str(folder), "--format", "json"])
    assert "step_budget" not in json.loads(plain.output)[0]


def test_the_api_gives_the_budgets_as_table_shows_them(tmp_path):
    summary = load(example_folder(tmp_path)).step_budgets(0.9).set_index("arm")
    assert summary.loc["react", "step_budget"] == 6
    assert summary.loc["react", "step_budget_failed_over"] == 3
    with pytest.raises(BadInput, match="cannot group by 'arms'"):
        load(example_folder(tmp_path)).step_budgets(by="arms")


def test_by_slice_gives_each_row_its_own_budget(tmp_path):
    runs = [run("a", "t1", 2), run("a", "t2", 9, correct=False)]
    runs += [run("a", "t3", 7).model_copy(update={"slice": "private"})]
    folder = write_folder(tmp_path / "r", runs, grader=None)
    out = CliRunner().invoke(
        main, ["table", str(folder), "--by", "slice", "--format", "json", "--step-budget"]
    )
    rows = {row["slice"]: row for row in json.loads(out.output)}
    assert rows["public"]["step_budget"] == 2 and rows["private"]["step_budget"] == 7


def test_the_report_has_a_step_budget_section(tmp_path):
    page = report_html(example_folder(tmp_path), Pricing(load_prices()))
    section = re.search(r'<section id="step-budget">.*?</section>', page, re.S)
    assert section, "no step budget section"
    assert "95% of correct runs kept" in section.group(0)
    assert "none: no correct run" in section.group(0)


def test_the_report_has_no_step_budget_section_without_a_graded_run(tmp_path):
    runs = [run("a", f"t{i}", 4, status="api_error") for i in range(3)]
    page = report_html(write_folder(tmp_path / "r", runs, grader=None), Pricing(load_prices()))
    assert 'id="step-budget"' not in page and "Step budget" not in page


def test_the_worked_example_in_docs_is_what_table_prints(tmp_path):
    """docs/results.md's listing is this folder's ``table --step-budget 0.9``."""
    docs = (Path(__file__).parents[3] / "docs" / "results.md").read_text()
    listing = docs.split("<!-- step budget example -->", 1)[1].split("```text\n", 1)[1]
    listing = listing.split("```", 1)[0]
    printed = CliRunner().invoke(
        main, ["table", str(example_folder(tmp_path)), "--step-budget", "0.9"]
    )
    assert printed.exit_code == 0, printed.output
    budget_part = printed.output.split("**Step budget**", 1)[1]
    shown = [line for line in listing.splitlines() if line.startswith("|")]
    assert shown and all(line in budget_part for line in shown)


@pytest.mark.parametrize("fmt", ["html", "latex"])
def test_html_and_latex_tables_have_the_budget_table_under_the_main_one(tmp_path, fmt):
    folder = example_folder(tmp_path)
    out = CliRunner().invoke(main, ["table", str(folder), "--format", fmt, "--step-budget"])
    assert out.exit_code == 0, out.output
    main_table, budget_table = out.output.split("Step budget", 1)
    assert "none: no correct run" in budget_table and "no correct run" not in main_table
