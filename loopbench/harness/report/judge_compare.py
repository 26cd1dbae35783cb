"""What a judge changes in ``compare``: its cost in cost per correct answer when asked
(``--with-judge-cost``), and the paired difference corrected for each side's judge.

With both sides' calibrations applying (each counted for its own folder's grader), each
side's verdicts are corrected with its own folder's calibration, each arm with its own
counts where the calibration covers it (``loopbench.harness.stats.judge_correction``), and the
accuracy gate keeps its rule on the corrected difference: a fall beyond ``max_drop`` whose
interval (at 1 - alpha) lies below zero. Otherwise the gate is the judge's own verdicts',
as for any grader, and the comparison says why it did not correct them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from loopbench.harness.report.deciding_digits import percent_beyond
from loopbench.harness.report.judge_accuracy import Judging
from loopbench.harness.report.verdict import ROUNDING, Criterion
from loopbench.harness.stats.judge_correction import Corrected, corrected_difference

#: Which difference the accuracy gate used.
CORRECTED_GATE = "corrected"
JUDGE_GATE = "judge"


@dataclass(frozen=True)
class JudgeChoice:
    """What ``compare`` makes of the sides' judges: their cost counted in cost per correct
    answer or not, and each side's judging (baseline, candidate)."""

    with_judge_cost: bool = False
    judging: tuple[Judging, Judging] = field(default_factory=lambda: (Judging(), Judging()))


@dataclass(frozen=True)
class JudgedDifference:
    """An arm's difference as the judges' calibrations correct it (None when a side has
    none that applies), and which difference the accuracy gate used, and why."""

    corrected: Corrected | None
    level: float
    gate: str
    why: str

    def row(self) -> dict[str, Any]:
        c = self.corrected
        return {
            "corrected_difference": _none_if_nan(c.estimate) if c else None,
            "corrected_ci_low": _none_if_nan(c.low) if c else None,
            "corrected_ci_high": _none_if_nan(c.high) if c else None,
            "corrected_level": self.level,
            "accuracy_gate": self.gate,
            "accuracy_gate_why": self.why,
        }


def _none_if_nan(value: float) -> float | None:
    return None if math.isnan(value) else value


_SIDES = ("baseline", "candidate")


def judged_difference(
    pairs: pd.DataFrame, arm: str, judged: JudgeChoice, alpha: float
) -> JudgedDifference | None:
    """The arm's corrected difference (candidate minus baseline) on its pairs; None when
    neither side was graded by a judge."""
    before, after = judged.judging
    if not (before.by_judge or after.by_judge):
        return None
    level = 1 - alpha
    missing = [side for side, j in zip(_SIDES, (before, after), strict=True) if not j.applies]
    if missing:
        return JudgedDifference(
            None,
            level,
            JUDGE_GATE,
            f"the judge's own verdicts, uncorrected: no calibration that applies in the "
            f"{' and the '.join(missing)} (`loopbench judge calibrate`)",
        )
    result = corrected_difference(
        pairs["task_id"].to_numpy(),
        (pairs["correct_a"].eq(True).to_numpy(), pairs["correct_b"].eq(True).to_numpy()),
        (after.rates(arm)[0], before.rates(arm)[0]),
        level=level,
    )
    return JudgedDifference(
        result,
        level,
        CORRECTED_GATE,
        "the difference corrected for each side's judge (its own folder's calibration)",
    )


def judge_corrected_accuracy(
    corrected: Corrected, tasks: int, max_drop: float, alpha: float
) -> Criterion:
    """The accuracy gate's rule on the corrected difference: a fall beyond ``max_drop``
    whose interval at 1 - ``alpha`` lies below zero."""
    if math.isnan(corrected.estimate):
        return Criterion(
            "accuracy",
            False,
            False,
            "accuracy not judged: a side's judge is no better than chance on its labels, "
            "so its verdicts cannot be corrected",
        )
    # guard: corrected-gate-needs-interval-below-zero
    if -corrected.estimate > max_drop + ROUNDING and corrected.high < 0:
        fall, limit = percent_beyond(-corrected.estimate, max_drop)
        return Criterion(
            "accuracy",
            True,
            True,
            f"accuracy corrected for the judges' error fell {fall} (more than {limit}) on "
            f"{tasks} tasks, its {1 - alpha:.0%} interval below zero",
        )
    return Criterion(
        "accuracy", False, True, "accuracy (corrected for the judges) within thresholds"
    )


def paid(pairs: pd.DataFrame, suffix: str, with_judge_cost: bool) -> np.ndarray[Any, Any]:
    """Each pair's side's cost: the run's, and its judge's when asked (unknown where a
    judged run's judge had no price)."""
    cost = pairs["cost_usd" + suffix].to_numpy(dtype=float, na_value=math.nan)
    name = "judge_cost_usd" + suffix
    # guard: compare-judge-cost-only-when-asked
    if not with_judge_cost or name not in pairs:
        return cost
    judge = pd.to_numeric(pairs[name]).to_numpy(dtype=float, na_value=math.nan)
    tokens = "judge_tokens_in" + suffix
    judged = pairs[tokens].notna().to_numpy() if tokens in pairs else ~np.isnan(judge)
    return cost + np.where(judged | ~np.isnan(judge), judge, 0.0)
