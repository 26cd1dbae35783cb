"""``loopbench judge calibrate``: labels counted against the judge's verdicts, the rates and
kappa with intervals that hold the judge's true rates, a judge that treats arms differently
named (and one that does not, not), and every refusal one line naming file, line and field."""

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.results.judge_calibration import load_calibration
from loopbench.harness.results.records import RunRecord
from loopbench.harness.stats.judge_agreement import arms_tests, cohens_kappa, equal_shares_p
from loopbench.harness.stats.judge_correction import JudgeRates
from tests.harness.cli.judge_folders import JUDGE, ScriptedArm, label_sample, simulate, write_folder


def judge(*args: str):
    return CliRunner().invoke(main, ["judge", *args])


def record(run_id: str, arm: str, correct: bool | None) -> RunRecord:
    return RunRecord(
        run_id=run_id,
        arm=arm,
        task_id=run_id,
        repeat=0,
        status="answered",
        answer="an answer",
        correct=correct,
        grade_status=None if correct is not None else "judge_unreadable",
    )


def write_labels(path: Path, rows: list[tuple[str, str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["run_id", "arm", "answer", "label"])
        for run_id, label in rows:
            writer.writerow([run_id, "x", "an answer", label])
    return path


@pytest.fixture
def small(tmp_path: Path) -> Path:
    """Four runs of arm a (judged pass, pass, fail, fail), one the judge could not read."""
    records = [record("r1", "a", True), record("r2", "a", True), record("r3", "a", False)]
    records += [record("r4", "a", False), record("r5", "a", None)]
    return write_folder(tmp_path / "results", records, questions=False)


def test_labels_are_counted_against_the_verdicts(small: Path, tmp_path: Path) -> None:
    labels = write_labels(
        tmp_path / "l.csv",
        [
            ("r1", "PASS"),
            ("r2", " no "),
            ("r3", "Correct"),
            ("r4", "wrong"),
            ("r5", "1"),
            ("x", ""),
        ],
    )
    outcome = judge("calibrate", str(small), "--labels", str(labels), "--format", "json")
    assert outcome.exit_code == 0, outcome.output
    report = json.loads(outcome.output)
    assert report["labelled"] == 4 and report["skipped_no_verdict"] == 1
    saved = load_calibration(small)
    assert saved is not None
    counts = saved.pooled
    assert (counts.true_pass, counts.false_pass, counts.false_fail, counts.true_fail) == (
        1,
        1,
        1,
        1,
    )
    assert saved.grader == JUDGE and saved.arms == {"a": counts}
    assert saved.labels_sha256 == __import__("hashlib").sha256(labels.read_bytes()).hexdigest()
    assert report["pooled"]["agreement"]["value"] == 0.5 and report["arms_tests"] == []


@pytest.mark.parametrize(
    ("rows", "said"),
    [
        ([("r1", "pass"), ("r2", "maybe")], ":3: label 'maybe' is neither right"),
        ([("r1", "pass"), ("nope", "fail")], ":3: run_id 'nope' is not a run of"),
        ([("r1", "pass"), ("r1", "fail")], ":3: run_id 'r1' is labelled again (first on line 2)"),
        ([("r1", ""), ("r2", "")], ": no label filled in"),
    ],
)
def test_bad_labels_are_one_line_naming_the_line(
    small: Path, tmp_path: Path, rows: list[tuple[str, str]], said: str
) -> None:
    labels = write_labels(tmp_path / "l.csv", rows)
    outcome = judge("calibrate", str(small), "--labels", str(labels))
    assert outcome.exit_code == 2
    assert outcome.output.strip().count("\n") == 0
    assert f"{labels}{said}" in outcome.output
    assert load_calibration(small) is None


def test_a_file_without_a_label_column_is_refused(small: Path, tmp_path: Path) -> None:
    labels = tmp_path / "l.csv"
    labels.write_text("run_id,verdict\nr1,pass\n", encoding="utf-8")
    outcome = judge("calibrate", str(small), "--labels", str(labels))
    assert outcome.exit_code == 2 and f"{labels}:1: no 'label' column" in outcome.output


def test_a_line_is_named_past_answers_of_several_lines(small: Path, tmp_path: Path) -> None:
    labels = tmp_path / "l.csv"
    labels.write_text('run_id,answer,label\nr1,"two\nlines",pass\nr2,x,soso\n', encoding="utf-8")
    outcome = judge("calibrate", str(small), "--labels", str(labels))
    assert f"{labels}:4: label 'soso'" in outcome.output


def labelled_folder(tmp_path: Path, arms: dict[str, ScriptedArm], per_arm: int, seed: int):
    sim = simulate(arms, per_arm // 2, 2, np.random.default_rng(seed))
    results = write_folder(tmp_path / "results", sim.records, questions=False)
    assert judge("sample", str(results), "--per-arm", str(per_arm)).exit_code == 0
    labels = label_sample(results / "judge_sample.csv", sim.truth)
    outcome = judge("calibrate", str(results), "--labels", str(labels), "--format", "json")
    assert outcome.exit_code == 0, outcome.output
    return json.loads(outcome.output), outcome


def test_the_intervals_hold_the_judges_true_rates(tmp_path: Path) -> None:
    report, _ = labelled_folder(tmp_path, {"a": ScriptedArm(0.5, 0.85, 0.7)}, 2000, 5)
    pooled = report["pooled"]
    assert pooled["sensitivity"]["low"] <= 0.85 <= pooled["sensitivity"]["high"]
    assert pooled["specificity"]["low"] <= 0.7 <= pooled["specificity"]["high"]
    assert pooled["sensitivity"]["high"] - pooled["sensitivity"]["low"] < 0.05
    agreement = 0.5 * 0.85 + 0.5 * 0.7  # about: the simulated accuracy is near 0.5
    assert pooled["agreement"]["low"] - 0.03 <= agreement <= pooled["agreement"]["high"] + 0.03


def test_a_judge_that_favours_one_arm_is_named(tmp_path: Path) -> None:
    arms = {"cot": ScriptedArm(0.6, 0.9, 0.5), "direct": ScriptedArm(0.6, 0.9, 0.9)}
    report, _ = labelled_folder(tmp_path, arms, 300, 2)
    assert report["bias"].startswith(
        "the judge passes wrong answers of cot more often than of direct"
    )
    assert "each arm is corrected with its own rates" in report["bias"]
    (specificity,) = [t for t in report["arms_tests"] if t["rate"] == "specificity"]
    assert specificity["differs"] and specificity["p_value"] < 0.05
    text = judge(
        "calibrate",
        str(tmp_path / "results"),
        "--labels",
        str(tmp_path / "results" / "judge_sample.csv"),
    )
    assert "Arms: the judge passes wrong answers of cot" in text.output
    assert "| cot " in text.output and "| direct " in text.output


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_judge_fair_to_both_arms_is_not_accused(tmp_path: Path, seed: int) -> None:
    arms = {"cot": ScriptedArm(0.6, 0.85, 0.8), "direct": ScriptedArm(0.5, 0.85, 0.8)}
    report, _ = labelled_folder(tmp_path, arms, 300, seed)
    assert report["bias"].startswith("the judge treats the arms alike")
    assert not any(t["differs"] for t in report["arms_tests"])


def test_the_kappa_interval_is_statsmodels() -> None:
    sm = pytest.importorskip("statsmodels.stats.inter_rater")
    for rates in (JudgeRates(40, 5, 30, 10), JudgeRates(90, 30, 12, 8), JudgeRates(3, 1, 0, 2)):
        ours = cohens_kappa(rates)
        table = [[rates.true_pass, rates.false_pass], [rates.false_fail, rates.true_fail]]
        theirs = sm.cohens_kappa(table)
        assert ours.value == pytest.approx(theirs.kappa)
        assert ours.low == pytest.approx(max(-1, theirs.kappa_low))
        assert ours.high == pytest.approx(min(1, theirs.kappa_upp))


def test_kappa_by_hand_and_where_undefined() -> None:
    # 50 labels, 35 agree; the judge passes 30, the person 25: chance 0.6*0.5+0.4*0.5 = 0.5.
    kappa = cohens_kappa(JudgeRates(true_pass=20, false_fail=5, true_fail=15, false_pass=10))
    assert kappa.value == pytest.approx((0.7 - 0.5) / 0.5)
    assert math.isnan(cohens_kappa(JudgeRates(5, 0, 0, 0)).value)


def test_the_arms_tests_are_fisher_for_two_and_likelihood_ratio_for_more() -> None:
    stats = pytest.importorskip("scipy.stats")
    assert equal_shares_p([(9, 1), (3, 7)]) == pytest.approx(
        stats.fisher_exact([[9, 1], [3, 7]]).pvalue
    )
    three = [(30, 10), (20, 20), (35, 5)]
    g = stats.chi2_contingency(three, correction=False, lambda_="log-likelihood").pvalue
    assert equal_shares_p(three) == pytest.approx(g)
    tests = arms_tests(
        {"a": JudgeRates(30, 10, 5, 5), "b": JudgeRates(20, 20, 0, 0), "c": JudgeRates(35, 5, 5, 5)}
    )
    assert [t.rate for t in tests] == ["sensitivity", "specificity"]
    assert tests[0].lowest == ("b", 0.5) and tests[0].highest == ("c", 35 / 40)
    assert tests[0].describe().startswith("the judge fails right answers of b more often than of c")


def test_an_arm_without_labels_of_a_kind_is_left_out_of_that_test() -> None:
    # Arm b has no answer labelled wrong: its specificity is unknown, not tested.
    tests = arms_tests({"a": JudgeRates(30, 10, 5, 5), "b": JudgeRates(20, 20, 0, 0)})
    assert [t.rate for t in tests] == ["sensitivity"]


def test_a_file_saved_again_with_semicolons_or_tabs_reads(small: Path, tmp_path: Path) -> None:
    for delimiter in (";", "\t"):
        labels = tmp_path / "l.csv"
        labels.write_text(
            delimiter.join(["run_id", "answer", "label"])
            + "\n"
            + delimiter.join(["r1", "1,5", "pass"])
            + "\n",
            encoding="utf-8",
        )
        outcome = judge("calibrate", str(small), "--labels", str(labels), "--format", "json")
        assert outcome.exit_code == 0, outcome.output
        assert json.loads(outcome.output)["labelled"] == 1


def test_an_answer_longer_than_the_csv_modules_limit_reads_back(tmp_path: Path) -> None:
    long = RunRecord(
        run_id="long",
        arm="a",
        task_id="t",
        repeat=0,
        status="answered",
        answer="x" * 300_000,
        correct=True,
    )
    results = write_folder(tmp_path / "results", [long], questions=False)
    assert judge("sample", str(results), "--per-arm", "1").exit_code == 0
    labels = label_sample(results / "judge_sample.csv", {"long": True})
    outcome = judge("calibrate", str(results), "--labels", str(labels), "--format", "json")
    assert outcome.exit_code == 0, outcome.output
    assert json.loads(outcome.output)["labelled"] == 1


def test_labels_without_run_ids_name_runs_by_arm_task_and_repeat(
    small: Path, tmp_path: Path
) -> None:
    labels = tmp_path / "l.csv"
    labels.write_text(
        "arm,task_id,repeat,label\na,r1,0,pass\na,r3,0,pass\na,r4,0,fail\n", encoding="utf-8"
    )
    outcome = judge("calibrate", str(small), "--labels", str(labels))
    assert outcome.exit_code == 0, outcome.output
    calibration = load_calibration(small)
    assert calibration is not None
    assert calibration.pooled.model_dump() == {
        "true_pass": 1,
        "false_fail": 1,
        "true_fail": 1,
        "false_pass": 0,
    }
    missing = tmp_path / "m.csv"
    missing.write_text("arm,task_id,repeat,label\na,r9,0,pass\n", encoding="utf-8")
    outcome = judge("calibrate", str(small), "--labels", str(missing))
    assert outcome.exit_code == 2
    assert f"{missing}:2: arm 'a', task_id 'r9', repeat 0 is not a run of" in outcome.output


def test_a_place_in_the_grid_held_by_runs_of_several_models_needs_run_ids(
    tmp_path: Path,
) -> None:
    both = [record("r1", "a", True), record("r2", "a", False)]
    both[1] = both[1].model_copy(update={"task_id": "r1", "model": "other"})
    folder = write_folder(tmp_path / "results", both, questions=False)
    labels = tmp_path / "l.csv"
    labels.write_text("arm,task_id,repeat,label\na,r1,0,pass\n", encoding="utf-8")
    outcome = judge("calibrate", str(folder), "--labels", str(labels))
    assert outcome.exit_code == 2
    assert "is more than one run of" in outcome.output and "label by run_id" in outcome.output


def test_reading_labels_leaves_the_csv_modules_limit_as_it_was(small: Path, tmp_path: Path) -> None:
    # The limit is process-wide: a task file read after the labels keeps its own refusal.
    before = csv.field_size_limit()
    labels = write_labels(tmp_path / "l.csv", [("r1", "pass")])
    assert judge("calibrate", str(small), "--labels", str(labels)).exit_code == 0
    bad = write_labels(tmp_path / "bad.csv", [("r1", "soso")])
    assert judge("calibrate", str(small), "--labels", str(bad)).exit_code == 2
    assert csv.field_size_limit() == before
