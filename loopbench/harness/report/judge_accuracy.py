"""A judge's accuracy carried into the numbers: the table's corrected column, ``table
--vs``'s corrected difference, and the note saying whose accuracy the table shows.

A folder graded by the ``judge`` grader reports the judge's verdicts. Without a
calibration (``judge_calibration.json``, written by ``loopbench judge calibrate``) the
table says so, and how to calibrate. With one counted for the folder's own grader, each
arm's accuracy is corrected for the judge's sensitivity and specificity
(``loopbench.harness.stats.judge_correction``): with the arm's own label counts where the
calibration covers the arm, else the pooled counts. The runs' judged verdicts are the
``correct`` of the runs graded (infrastructure failures and runs the judge failed to grade
left out, as accuracy leaves them), clustered by task as the accuracy interval is.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from loopbench.harness.report.judge_cost import not_graded
from loopbench.harness.report.model_axis import MODEL_AND_ARM, model_and_arm, model_keys
from loopbench.harness.results.judge_calibration import Calibration, load_calibration
from loopbench.harness.results.reading import read_experiment, runs_file
from loopbench.harness.results.statuses import INFRASTRUCTURE_STATUSES
from loopbench.harness.stats.judge_correction import (
    Corrected,
    JudgeRates,
    corrected_accuracy,
    corrected_difference,
    own_rates,
    rates_of,
)

#: The grader name whose verdicts are a judge model's.
JUDGE = "judge"
#: What a table shows of the corrected accuracy, as ``_with_interval`` reads it.
CORRECTED = "corrected_accuracy"
CALIBRATE = (
    "`loopbench judge sample RESULTS --per-arm N` writes replies for a person to label; "
    "`loopbench judge calibrate RESULTS --labels FILE` counts the judge's errors, and the "
    "table then corrects for them"
)


@dataclass(frozen=True)
class Judging:
    """How a folder's verdicts were made: by a judge or not, and its calibration, if any
    (``applies``: counted for the grader that graded these runs)."""

    by_judge: bool = False
    calibration: Calibration | None = None
    applies: bool = False
    grader: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, folder: Path | str) -> Judging:
        """The folder's: its experiment.json's grader and its judge_calibration.json."""
        meta = read_experiment(folder) or {}
        grader = meta.get("grader") if isinstance(meta.get("grader"), dict) else {}
        if not grader or grader.get("name") != JUDGE:
            return cls()
        calibration = load_calibration(runs_file(folder).parent)
        # guard: calibration-of-another-grader-does-not-apply
        applies = calibration is not None and calibration.grader == grader
        return cls(True, calibration, applies, grader)

    def rates(self, arm: str) -> tuple[JudgeRates, str]:
        """The counts that correct ``arm`` (an arm identity, after its model on a model
        axis): the arm's own when the labels hold right and wrong answers of it, else the
        pooled ones (``loopbench.harness.stats.judge_correction.own_rates``); and which."""
        assert self.calibration is not None
        for name in (arm, arm.rpartition(MODEL_AND_ARM)[2]):
            own = own_rates(self.calibration, name)
            # guard: corrected-uses-the-arms-own-counts
            if own is not None:
                return own, "arm"
        return rates_of(self.calibration.pooled), "pooled"

    def note(self) -> str:
        """Under the table: whose accuracy it shows, and the calibration that corrects it."""
        if not self.by_judge:
            return ""
        if self.calibration is None:
            # guard: judge-accuracy-said-uncorrected
            return (
                "Accuracy is the judge's verdicts, uncorrected: how often the judge is wrong "
                f"has not been measured. To correct it, {CALIBRATE}."
            )
        c = self.calibration
        if not self.applies:
            return (
                f"Accuracy is the judge's verdicts, uncorrected: the folder's calibration "
                f"(labels {c.labels_file}) was counted for another grader than the one that "
                f"graded these runs, so it does not apply. {CALIBRATE[0].upper()}{CALIBRATE[1:]}."
            )
        pooled = rates_of(c.pooled)
        covered = ", ".join(sorted(c.arms)) or "none"
        return (
            f"corrected: accuracy corrected for the judge's error (Rogan-Gladen) by the "
            f"calibration of labels {c.labels_file} (n = {pooled.labelled} labelled answers; "
            f"pooled sensitivity {pooled.sensitivity:.0%}, specificity "
            f"{pooled.specificity:.0%}); each arm with its own labels where they cover it "
            f"(arms: {covered}), else the pooled ones. Its 95% interval carries both the "
            "tasks' sampling and the labels' uncertainty; a dash where the judge is no "
            "better than chance on the labels. accuracy is the judge's own."
        )


def graded(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs with a verdict: no infrastructure failure, no judge failure."""
    return runs[~runs["status"].isin(INFRASTRUCTURE_STATUSES) & ~not_graded(runs)]


def _row_runs(frame: pd.DataFrame, summary: pd.DataFrame) -> Iterator[tuple[str, pd.DataFrame]]:
    """Each summary row's arm (after its model on a model axis) and runs."""
    keys = [k for k in ("model", "arm", "slice", "task") if k in summary and k in frame]
    for _, row in summary.iterrows():
        runs = frame
        for key in keys:
            runs = runs[runs[key] == row[key]]
        arm = model_and_arm(row["model"], row["arm"]) if "model" in summary else str(row["arm"])
        yield arm, runs


def with_corrected(frame: pd.DataFrame, summary: pd.DataFrame, judging: Judging) -> pd.DataFrame:
    """Each row's corrected accuracy with its 95% interval, and whose counts corrected it
    (``arm`` or ``pooled``), when the folder's calibration applies."""
    if not judging.applies or summary.empty:
        return summary
    found: dict[str, list[Any]] = {
        CORRECTED: [],
        f"{CORRECTED}_low": [],
        f"{CORRECTED}_high": [],
        "corrected_by": [],
    }
    for arm, runs in _row_runs(frame, summary):
        rates, by = judging.rates(arm)
        verdicts = graded(runs)
        result = corrected_accuracy(
            verdicts["task_id"].to_numpy(), verdicts["correct"].eq(True).to_numpy(), rates
        )
        for name, value in zip(found, (result.estimate, result.low, result.high, by), strict=True):
            found[name].append(value)
    return summary.assign(**found)


def with_corrected_reference(
    frame: pd.DataFrame, summary: pd.DataFrame, reference: str, judging: Judging
) -> pd.DataFrame:
    """``table --vs``'s paired difference corrected for the judge's error, each arm with
    its own counts, on the pairs ``with_reference`` makes, when the calibration applies."""
    if not judging.applies or "vs_difference" not in summary:
        return summary
    usable = graded(frame)
    on = ["task_id", "repeat", *model_keys(frame)]
    values: dict[str, list[float]] = {
        "vs_corrected": [],
        "vs_corrected_low": [],
        "vs_corrected_high": [],
    }
    for _, row in summary.iterrows():
        runs, base = usable[usable["arm"] == row["arm"]], usable[usable["arm"] == reference]
        if "model" in on:
            runs, base = runs[runs["model"] == row["model"]], base[base["model"] == row["model"]]
        pairs = runs.merge(base, on=on, suffixes=("", "_r"))
        result = Corrected(*(4 * [float("nan")]))
        if row["arm"] != reference and not pairs.empty:
            arm = model_and_arm(row["model"], row["arm"]) if "model" in summary else str(row["arm"])
            ref = model_and_arm(row["model"], reference) if "model" in summary else reference
            result = corrected_difference(
                pairs["task_id"].to_numpy(),
                (pairs["correct"].eq(True).to_numpy(), pairs["correct_r"].eq(True).to_numpy()),
                (judging.rates(arm)[0], judging.rates(ref)[0]),
            )
        values["vs_corrected"].append(result.estimate)
        values["vs_corrected_low"].append(result.low)
        values["vs_corrected_high"].append(result.high)
    return summary.assign(**values)
