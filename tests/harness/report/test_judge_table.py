"""What the table shows of a judge: its cost in a column of its own and out of cost per
correct unless asked, the runs it failed to grade out of accuracy and counted, and its
accuracy said uncorrected, or corrected by the folder's calibration."""

import json
from collections import defaultdict

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from loopbench.harness.api import load
from loopbench.harness.cli.main import main
from loopbench.harness.report.table import Measures, summarize
from loopbench.harness.results.columns import read_frame
from loopbench.harness.results.frames import Pricing, records_frame
from loopbench.harness.results.prices import load_prices
from loopbench.harness.results.reading import read_records
from loopbench.harness.stats.judge_correction import (
    JudgeRates,
    corrected_accuracy,
    corrected_difference,
)

from .judge_folders import JUDGE_GRADER, calibrate, judged, verdicts, write_folder
from .test_table import record

PRICING = Pricing(load_prices())


def table_json(folder, *flags):
    result = CliRunner().invoke(main, ["table", str(folder), "--format", "json", *flags])
    assert result.exit_code == 0, result.output
    return {row["arm"]: row for row in json.loads(result.output)}


def table_md(folder, *flags):
    result = CliRunner().invoke(main, ["table", str(folder), *flags])
    assert result.exit_code == 0, result.output
    return result.output


def folder_with_failures(tmp_path):
    runs = verdicts({"direct": 0.5, "cot": 0.7}, seed=3)
    runs[0] = judged("direct", "t0", 0, True, grade_status="judge_api_error")
    runs[1] = judged("direct", "t0", 1, True, grade_status="judge_unreadable")
    runs[2] = judged("direct", "t0", 2, True, grade_status="judge_unreadable", judge_cost=0.5)
    return write_folder(tmp_path / "judged", runs), runs


def test_the_judges_cost_column_sums_the_records(tmp_path):
    folder, runs = folder_with_failures(tmp_path)
    rows = table_json(folder)
    for arm in ("direct", "cot"):
        expected = sum(r.judge_cost_usd for r in runs if r.arm == arm)
        assert rows[arm]["judge_cost_usd"] == pytest.approx(expected)
        assert rows[arm]["judge_tokens_in"] == pytest.approx(400)
    assert "judge $" in table_md(folder)


def test_cost_per_correct_is_the_runs_cost_unless_asked(tmp_path):
    folder, runs = folder_with_failures(tmp_path)
    plain, with_judge = table_json(folder), table_json(folder, "--with-judge-cost")
    for arm in ("direct", "cot"):
        row = plain[arm]
        assert row["cost_per_correct"] == pytest.approx(row["cost_usd"] / row["correct"])
        judge = sum(r.judge_cost_usd for r in runs if r.arm == arm)
        assert with_judge[arm]["cost_per_correct"] == pytest.approx(
            (row["cost_usd"] + judge) / row["correct"]
        )
        assert with_judge[arm]["cost_usd"] == pytest.approx(row["cost_usd"])
    assert "$/correct (with judge $)" in table_md(folder, "--with-judge-cost")
    assert "| $/correct " in table_md(folder)


def test_runs_the_judge_failed_are_out_of_accuracy_in_cost_and_counted(tmp_path):
    folder, runs = folder_with_failures(tmp_path)
    row = table_json(folder)["direct"]
    mine = [r for r in runs if r.arm == "direct"]
    graded = [r for r in mine if r.grade_status is None]
    assert row["n"] == len(mine) == 36
    assert row["accuracy"] == pytest.approx(sum(bool(r.correct) for r in graded) / len(graded))
    frame = read_frame(folder, PRICING)
    assert row["cost_usd"] == pytest.approx(frame.loc[frame["arm"] == "direct", "cost_usd"].sum())
    assert row["not_graded"] == 3 and row["not_graded_judge_unreadable"] == 2
    note = table_md(folder)
    assert "3 run(s) not graded: the judge failed" in note
    assert "`loopbench grade --regrade RESULTS`" in note


def test_an_uncalibrated_judge_is_said_uncorrected(tmp_path):
    folder, _ = folder_with_failures(tmp_path)
    shown = table_md(folder)
    assert "Accuracy is the judge's verdicts, uncorrected" in shown
    assert "loopbench judge sample" in shown and "judge calibrate" in shown
    assert "corrected [95% CI]" not in shown


def test_a_calibration_of_another_grader_does_not_apply(tmp_path):
    folder, _ = folder_with_failures(tmp_path)
    other = JUDGE_GRADER | {"identity": {"p": "another prompt"}}
    calibrate(folder, (40, 10, 35, 15), grader=other)
    shown = table_md(folder)
    assert "does not apply" in shown and "corrected [95% CI]" not in shown


def test_the_corrected_column_is_corrected_accuracy_with_each_arms_counts(tmp_path):
    folder, runs = folder_with_failures(tmp_path)
    calibrate(folder, (40, 10, 35, 15), {"cot": (30, 2, 20, 8)})
    rows = table_json(folder)
    for arm, rates in (("cot", JudgeRates(30, 2, 20, 8)), ("direct", JudgeRates(40, 10, 35, 15))):
        graded = [r for r in runs if r.arm == arm and r.grade_status is None]
        expected = corrected_accuracy(
            np.array([r.task_id for r in graded]),
            np.array([bool(r.correct) for r in graded]),
            rates,
        )
        row = rows[arm]
        assert row["corrected_accuracy"] == pytest.approx(expected.estimate)
        assert row["corrected_accuracy_low"] == pytest.approx(expected.low)
        assert row["corrected_accuracy_high"] == pytest.approx(expected.high)
        assert row["corrected_by"] == ("arm" if arm == "cot" else "pooled")
    shown = table_md(folder)
    assert "corrected [95% CI]" in shown and "labels labels.csv (n = 100" in shown


def test_table_vs_gives_the_corrected_paired_difference(tmp_path):
    folder, runs = folder_with_failures(tmp_path)
    calibrate(folder, (40, 10, 35, 15), {"cot": (30, 2, 20, 8)})
    row = table_json(folder, "--vs", "direct")["cot"]
    graded = {(r.arm, r.task_id, r.repeat): r.correct for r in runs if r.grade_status is None}
    # In the folder's order: the tasks are resampled in order of first appearance.
    keys = [k[1:] for k in graded if k[0] == "cot" and ("direct", *k[1:]) in graded]
    expected = corrected_difference(
        np.array([task for task, _ in keys]),
        (
            np.array([bool(graded[("cot", *k)]) for k in keys]),
            np.array([bool(graded[("direct", *k)]) for k in keys]),
        ),
        (JudgeRates(30, 2, 20, 8), JudgeRates(40, 10, 35, 15)),
    )
    assert row["vs_corrected"] == pytest.approx(expected.estimate)
    assert row["vs_corrected_low"] == pytest.approx(expected.low)
    assert row["vs_corrected_high"] == pytest.approx(expected.high)
    assert "vs direct corrected [95% CI]" in table_md(folder, "--vs", "direct")


def test_the_api_table_corrects_as_the_command_does(tmp_path):
    folder, _ = folder_with_failures(tmp_path)
    calibrate(folder, (40, 10, 35, 15))
    api = load(folder).table().set_index("arm")
    command = table_json(folder)
    assert api.loc["cot", "corrected_accuracy"] == pytest.approx(
        command["cot"]["corrected_accuracy"]
    )
    assert "corrected:" in load(folder).printed().text


def test_a_folder_without_a_judge_reads_and_tables_as_before(tmp_path):
    runs = [record(arm="a", task=f"t{i}", correct=i % 2 == 0) for i in range(6)]
    folder = write_folder(tmp_path / "plain", runs, grader={"name": "exact", "options": {}})
    rows = table_json(folder)["a"]
    assert not any(key.startswith(("judge_", "not_graded", "corrected")) for key in rows)
    shown = table_md(folder)
    assert "judge $" not in shown and "judge" not in shown.split("\n\n", 2)[1]
    frame = read_frame(folder, PRICING)
    assert frame["grade_status"].isna().all() and frame["judge_cost_usd"].isna().all()


def test_the_columns_read_the_judges_fields_as_the_record_model_does(tmp_path):
    folder, _ = folder_with_failures(tmp_path)
    fast = read_frame(folder, PRICING)
    slow = records_frame(read_records(folder), PRICING)
    for name in ("grade_status", "judge_tokens_in", "judge_tokens_out", "judge_cost_usd"):
        pd.testing.assert_series_equal(fast[name], slow[name], check_dtype=False)


def test_a_summary_built_in_memory_leaves_judge_failures_out_of_accuracy():
    runs = [
        judged("a", "t1", 0, True),
        judged("a", "t2", 0, False),
        judged("a", "t3", 0, True, grade_status="judge_api_error"),
    ]
    row = summarize(records_frame(runs, PRICING), measures=Measures()).iloc[0]
    assert row["n"] == 3 and row["accuracy"] == pytest.approx(0.5)


def test_the_html_report_says_whose_accuracy_it_shows(tmp_path):
    from loopbench.harness.report.html._page import build_page

    folder, _ = folder_with_failures(tmp_path)
    page = build_page(folder, PRICING)
    assert any("Accuracy is the judge's verdicts, uncorrected" in note for note in page.notes)
    assert any("3 run(s) not graded" in note for note in page.notes)


def test_otlp_spans_and_the_report_run_list_carry_the_judges_fields(tmp_path):
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope

    from loopbench.harness.report.html._runs import run_list
    from loopbench.harness.results.otlp_spans import run_spans

    failed = judged("a", "t1", 0, True, grade_status="judge_unreadable")
    plain = record(arm="a", task="t2")
    scope = InstrumentationScope("test")
    spans = [run_spans(r, [], Resource.create({}), scope, 0)[0] for r in (failed, plain)]
    assert spans[0].attributes["loopbench.grade_status"] == "judge_unreadable"
    assert spans[0].attributes["loopbench.judge_cost_usd"] == pytest.approx(0.001)
    assert not any("judge" in key or "grade_status" in key for key in spans[1].attributes)
    folder = write_folder(tmp_path / "listed", [failed, plain])
    listed = run_list(folder, [failed, plain], [0.0, 0.0], defaultdict(tuple)).runs
    by_task = {run["task"]: run for run in listed}
    assert by_task["t1"]["grade_status"] == "judge_unreadable"
    assert by_task["t1"]["judge_tokens_in"] == 400
    assert "grade_status" not in by_task["t2"]


@pytest.mark.parametrize("by", ["slice", "task"])
def test_a_broken_down_table_corrects_each_row_on_its_own_runs(tmp_path, by):
    folder, runs = folder_with_failures(tmp_path)
    calibrate(folder, (40, 10, 35, 15))
    result = CliRunner().invoke(main, ["table", str(folder), "--by", by, "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    row = next(r for r in rows if r["arm"] == "cot" and (by == "slice" or r["task"] == "t3"))
    graded = [
        r
        for r in runs
        if r.arm == "cot" and r.grade_status is None and (by == "slice" or r.task_id == "t3")
    ]
    expected = corrected_accuracy(
        np.array([r.task_id for r in graded]),
        np.array([bool(r.correct) for r in graded]),
        JudgeRates(40, 10, 35, 15),
    )
    assert row["corrected_accuracy"] == pytest.approx(expected.estimate)


def test_on_a_model_axis_each_models_arm_takes_the_arms_counts(tmp_path):
    runs = [
        judged("cot", f"t{t}", 0, t % 3 != 0, model=model)
        for model in ("gpt-5-mini", "big")
        for t in range(12)
    ]
    folder = write_folder(tmp_path / "models", runs)
    calibrate(folder, (40, 10, 35, 15), {"cot": (30, 2, 20, 8)})
    result = CliRunner().invoke(main, ["table", str(folder), "--format", "json"])
    rows = json.loads(result.output)
    assert {row["model"] for row in rows} == {"gpt-5-mini", "big"}
    assert all(row["corrected_by"] == "arm" for row in rows)


def test_exports_hold_the_judges_fields(tmp_path):
    from loopbench.harness.cli.export import export_command

    folder, runs = folder_with_failures(tmp_path)
    out = tmp_path / "runs.csv"
    result = CliRunner().invoke(export_command, [str(folder), "--format", "csv", "-o", str(out)])
    assert result.exit_code == 0, result.output
    exported = pd.read_csv(out)
    assert exported["judge_cost_usd"].sum() == pytest.approx(sum(r.judge_cost_usd for r in runs))
    assert exported["grade_status"].notna().sum() == 3
    assert (exported["judge_tokens_out"] == 20).all()
