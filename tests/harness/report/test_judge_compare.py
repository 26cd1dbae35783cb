"""What compare makes of a judge: the corrected paired difference beside the judge's own,
the accuracy gate on the corrected one when both sides are calibrated, the judge's cost in
cost per correct only when asked, and pairs the judge failed to grade left out and said."""

import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.results.columns import read_frame
from loopbench.harness.results.frames import Pricing
from loopbench.harness.results.prices import load_prices
from loopbench.harness.stats.intervals import paired_difference
from loopbench.harness.stats.judge_correction import JudgeRates, corrected_difference

from .judge_folders import calibrate, judged, write_folder

TASKS = 100


def folders(tmp_path, passed_before, passed_after, name=""):
    """Two folders of one arm, one run a task: the judge passed the tasks given."""
    sides = []
    for side, passed in (("before", passed_before), ("after", passed_after)):
        runs = [judged("a", f"t{t}", 0, t in passed) for t in range(TASKS)]
        sides.append(write_folder(tmp_path / f"{side}{name}", runs))
    return sides


def compare_json(before, after, *flags):
    """The arm's JSON row and the exit code; cost per correct rises as accuracy falls, so
    its gate is set out of reach: these tests are about accuracy's."""
    result = CliRunner().invoke(
        main,
        ["compare", str(before), str(after), "--format", "json", "--max-cost-rise", "100", *flags],
    )
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)["arms"][0], result.exit_code


def test_a_fall_the_labels_cannot_vouch_for_is_no_regression_once_corrected(tmp_path):
    # The judge's own verdicts fall 30 points; a calibration of ten labels, the judge
    # barely better than chance on them, leaves the corrected fall anywhere.
    before, after = folders(tmp_path, set(range(70)), set(range(40)))
    row, code = compare_json(before, after)
    assert code == 1 and row["accuracy_gate"] == "judge" and row["regressed"]
    assert (
        "no calibration that applies in the baseline and the candidate" in row["accuracy_gate_why"]
    )
    for folder in (before, after):
        calibrate(folder, (3, 2, 3, 2))
    row, code = compare_json(before, after)
    assert code == 0 and row["accuracy_gate"] == "corrected" and not row["regressed"]
    assert row["corrected_ci_low"] < 0 < row["corrected_ci_high"]


def test_a_fall_within_the_threshold_regresses_once_corrected(tmp_path):
    # The judge's own fall, 8 points, is within --max-drop 10%; a judge that is right three
    # times in four hides half of it: corrected, 16 points, its interval below zero.
    before, after = folders(tmp_path, set(range(60)), set(range(8, 60)))
    row, code = compare_json(before, after, "--max-drop", "0.10")
    assert code == 0 and row["p_value"] < 0.05 and not row["regressed"]
    for folder in (before, after):
        calibrate(folder, (7500, 2500, 7500, 2500))
    row, code = compare_json(before, after, "--max-drop", "0.10")
    assert code == 1 and row["regressed"] and row["accuracy_gate"] == "corrected"
    assert row["corrected_difference"] == pytest.approx(-0.16)
    assert "corrected for the judges' error fell" in row["why"]


def test_one_side_calibrated_keeps_the_judges_own_gate_and_says_so(tmp_path):
    before, after = folders(tmp_path, set(range(60)), set(range(8, 60)))
    calibrate(before, (7500, 2500, 7500, 2500))
    row, _ = compare_json(before, after, "--max-drop", "0.10")
    assert row["accuracy_gate"] == "judge" and row["corrected_difference"] is None
    assert "in the candidate" in row["accuracy_gate_why"]


def test_each_side_is_corrected_with_its_own_calibration(tmp_path):
    before, after = folders(tmp_path, set(range(60)), set(range(8, 70)))
    calibrate(before, (80, 20, 70, 30), {"a": (90, 10, 60, 40)})
    calibrate(after, (85, 15, 75, 25))
    row, _ = compare_json(before, after)
    tasks = np.array([f"t{t}" for t in range(TASKS)])
    expected = corrected_difference(
        tasks,
        (np.isin(np.arange(TASKS), range(8, 70)), np.isin(np.arange(TASKS), range(60))),
        (JudgeRates(85, 15, 75, 25), JudgeRates(90, 10, 60, 40)),
    )
    assert row["corrected_difference"] == pytest.approx(expected.estimate)
    assert row["corrected_ci_low"] == pytest.approx(expected.low)
    assert row["corrected_ci_high"] == pytest.approx(expected.high)


def test_markdown_and_junit_show_the_corrected_difference_and_the_gate(tmp_path):
    before, after = folders(tmp_path, set(range(60)), set(range(8, 60)))
    for folder in (before, after):
        calibrate(folder, (7500, 2500, 7500, 2500))
    shown = CliRunner().invoke(main, ["compare", str(before), str(after)]).stdout
    assert "corrected [CI]" in shown and "-16% [" in shown
    assert "the difference corrected for each side's judge" in shown
    junit = CliRunner().invoke(main, ["compare", str(before), str(after), "--format", "junit"])
    text = ET.fromstring(junit.stdout_bytes).find(".//failure").text
    assert "corrected difference -16.0 points" in text and "accuracy gate:" in text


def test_the_judges_cost_counts_in_cost_per_correct_only_when_asked(tmp_path):
    before, after = folders(tmp_path, set(range(60)), set(range(50)))
    plain, _ = compare_json(before, after)
    costed, _ = compare_json(before, after, "--with-judge-cost")
    pricing = Pricing(load_prices())
    frames = [read_frame(f, pricing) for f in (before, after)]
    tasks = frames[0]["task_id"].to_numpy()
    right = [f["correct"].eq(True).to_numpy() for f in frames]
    for with_judge, row in ((False, plain), (True, costed)):
        costs = tuple(
            f["cost_usd"].to_numpy() + (f["judge_cost_usd"].to_numpy() if with_judge else 0)
            for f in frames
        )
        expected = paired_difference(tasks, right[0], right[1], costs)
        assert row["cost_per_correct_before"] == pytest.approx(expected.cost_per_correct_before)
        assert row["cost_per_correct_after"] == pytest.approx(expected.cost_per_correct_after)
    assert costed["cost_per_correct_before"] > plain["cost_per_correct_before"]


def test_pairs_the_judge_failed_to_grade_are_left_out_and_said(tmp_path):
    before, after = folders(tmp_path, set(range(60)), set(range(60)))
    runs = [judged("a", f"t{t}", 0, t < 60) for t in range(TASKS)]
    runs[5] = judged("a", "t5", 0, True, grade_status="judge_api_error")
    write_folder(after, runs)
    row, _ = compare_json(before, after)
    assert row["n_pairs"] == TASKS - 1 and row["left_out"]["ungraded_pairs"] == 1
    assert row["difference"] == pytest.approx(0)
    shown = CliRunner().invoke(main, ["compare", str(before), str(after)]).stdout
    assert "1 pair where the judge failed to grade a side's run" in shown
