"""Each criterion of ``compare``'s verdict on an arm, judged on its own.

Accuracy regresses when it falls by more than ``max_drop`` and the paired test's p is
below ``alpha``. Cost per correct answer regresses when it rises by more than
``max_rise`` and its bootstrap interval lies above zero; it is not judged when it is
unknown on a side (calls that reported no usage, runs without a price, no run correct)
or was nothing in the baseline (a rise from zero has no ratio). A verdict's figures are
printed with the digits that put them on their side of the threshold (a fall of 5.26%
beyond 5% is "5.3%", not "5%").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from loopbench.harness.report.deciding_digits import below, percent_beyond
from loopbench.harness.stats.intervals import PairedDifference


@dataclass(frozen=True)
class Criterion:
    """One criterion's verdict on an arm: ``accuracy`` or ``cost`` (per correct answer).
    A criterion not judged (cost without prices or usage) is neither ok nor regressed."""

    name: str
    regressed: bool
    judged: bool
    why: str


#: A fall that is ``max_drop`` but for float rounding (a mean of thirds) is not more than it.
ROUNDING = 1e-9


def judge_accuracy(p: PairedDifference, max_drop: float, alpha: float) -> Criterion:
    """The difference is the mean of the per-task differences the test signs, so a fall
    is a fall of the tasks: a change that improved them is never a regression."""
    # guard: compare-fall-max-drop-but
    if -p.difference > max_drop + ROUNDING and p.p_value < alpha:
        fall, limit = percent_beyond(-p.difference, max_drop)
        return Criterion(
            "accuracy",
            True,
            True,
            f"accuracy fell {fall} (more than {limit}) on {p.tasks} tasks, paired p = "
            f"{below(p.p_value, alpha)}",
        )
    return Criterion("accuracy", False, True, "accuracy within thresholds")


def judge_cost(p: PairedDifference, max_rise: float, usage_unknown: int = 0) -> Criterion:
    if usage_unknown:  # tokens not reported are unknown, not zero: cost cannot be judged
        return Criterion(
            "cost",
            False,
            False,
            f"cost not compared: {usage_unknown} model calls reported no token usage",
        )
    before, after = p.cost_per_correct_before, p.cost_per_correct_after
    for side, accuracy, value in (
        ("baseline", p.accuracy_before, before),
        ("candidate", p.accuracy_after, after),
    ):
        # guard: ci-cost-unknown-side-not
        if math.isnan(value):
            cause = "no run was correct" if accuracy == 0 else "runs without a price"
            return Criterion("cost", False, False, f"cost not compared: {cause} in the {side}")
    if before == 0:
        return Criterion("cost", False, False, "cost not compared: the baseline cost nothing")
    # guard: ci-cost-rise-beyond-threshold
    if after / before - 1 > max_rise and p.cost_ci_low > 0:
        rise, limit = percent_beyond(after / before - 1, max_rise)
        return Criterion(
            "cost",
            True,
            True,
            f"cost per correct rose {rise} (more than {limit}), interval above zero",
        )
    return Criterion("cost", False, True, "cost per correct within thresholds")


__all__ = ["Criterion", "judge_accuracy", "judge_cost"]
