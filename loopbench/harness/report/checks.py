"""Per-arm measures of the answers a pattern gives on its way (seed 003, 3.5 and 3.6).

- Answer changes, for arms that answer more than once (reflection's draft, reflexion's
  attempts, best_of_n's candidates, self_consistency's samples): runs whose first
  answer was wrong and whose final answer is right, and the reverse.
- Check measures, for arms whose answers a check judged (best_of_n's verifier,
  reflexion's check): coverage (runs with an accepted answer), precision (correct among
  them), the check's measured acceptance rates of right and wrong answers (r and f),
  and the precision p*r / (p*r + (1-p)*f) the chapter predicts from them, with p the
  share of judged answers that were right.

- Code measures, for arms run on a coding task set (seed 003, 3.5): the first attempt's
  pass rate on the held-out suite, answers on the way whose code changed, those that
  changed without changing the held-out verdict, and the check's false accepts (passed
  the check, failed held-out) and false rejects (the reverse).

Each takes one arm's graded runs (records as a DataFrame) and gives NaN where the arm
has nothing to measure.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from loopbench.harness.report.cost import verifier_precision

CHECK_COLUMNS = ("coverage", "precision", "check_r", "check_f", "predicted_precision")
CODE_COLUMNS = ("first_pass", "code_edits", "edits_same_result", "false_accepts", "false_rejects")


class Metrics:
    """One arm's ``metrics`` column, each distinct dict read once: rows whose metrics are
    equal share one dict (``loopbench.harness.results.columns``), so a million runs hold a few
    thousand."""

    def __init__(self, column: pd.Series) -> None:
        cells = column.to_numpy(dtype=object)
        ids = np.fromiter(map(id, cells), dtype=np.uintp, count=len(cells))
        _, first, self._codes = np.unique(ids, return_index=True, return_inverse=True)
        self._dicts: list[dict[str, float]] = [cells[i] for i in first]
        self._counts = np.bincount(self._codes, minlength=len(first))

    def values(self, key: str) -> np.ndarray:
        """Each run's ``key`` metric, 0 where it has none."""
        return np.array([m.get(key, 0.0) for m in self._dicts], dtype=float)[self._codes]

    def total(self, key: str) -> float:
        return float(np.dot(self._counts, [m.get(key, 0.0) for m in self._dicts]))

    def has(self, key: str) -> bool:
        """Whether some run has the metric."""
        return any(key in m for m in self._dicts)


def answer_changes(graded: pd.DataFrame) -> dict[str, float]:
    """Wrong-to-right and right-to-wrong between a run's first answer and its final one.

    A run without a final answer (a budget, none accepted) went to neither: what it lost
    shows in accuracy and coverage, not here.
    """
    first = graded["first_correct"]
    if first.isna().all():
        return {"wrong_to_right": math.nan, "right_to_wrong": math.nan}
    return {
        "wrong_to_right": float((first.eq(False) & graded["correct"].eq(True)).sum()),
        "right_to_wrong": float((first.eq(True) & graded["correct"].eq(False)).sum()),
    }


def check_measures(graded: pd.DataFrame, metrics: Metrics | None = None) -> dict[str, float]:
    """Coverage, precision, r, f and the predicted precision of the arm's check; ``metrics``:
    the runs' metrics, if read already."""

    metrics = Metrics(graded["metrics"]) if metrics is None else metrics
    total = metrics.total
    judged = total("judged") if len(graded) else 0.0
    if not judged:
        return dict.fromkeys(CHECK_COLUMNS, math.nan)
    right = total("judged_correct")
    p = right / judged
    r = total("accepted_correct") / right if right else math.nan
    f = total("accepted_wrong") / (judged - right) if judged > right else math.nan
    accepted = graded["status"].eq("answered") & (metrics.values("last_accepted") == 1.0)
    if right == 0:  # nothing right reached the check: whatever it accepts is wrong
        predicted = 0.0 if f > 0 else math.nan
    elif right == judged:
        predicted = 1.0 if r > 0 else math.nan
    else:
        predicted = verifier_precision(p, r, f)
    return {
        "coverage": float(accepted.mean()),
        "precision": float(graded.loc[accepted, "correct"].eq(True).mean())
        if accepted.any()
        else math.nan,
        "check_r": r,
        "check_f": f,
        "predicted_precision": predicted,
    }


def code_measures(graded: pd.DataFrame, metrics: Metrics | None = None) -> dict[str, float]:
    """First-attempt pass rate, edits, edits without effect, and the check's false verdicts;
    ``metrics``: the runs' metrics, if read already.

    A run with no answer on the way (direct) made one attempt, its final answer; a run that
    ended without an answer passed nothing.
    """
    metrics = Metrics(graded["metrics"]) if metrics is None else metrics
    if not len(graded) or not metrics.has("code_edits"):
        return dict.fromkeys(CODE_COLUMNS, math.nan)
    total = metrics.total

    first = graded["first_correct"].where(graded["first_correct"].notna(), graded["correct"])
    # guard: false-accepts-need-check
    judged = total("judged") > 0  # an arm without a check has no false verdicts to count
    return {
        "first_pass": float(first.eq(True).mean()),
        "code_edits": total("code_edits"),
        "edits_same_result": total("edits_same_result"),
        "false_accepts": total("accepted_wrong") if judged else math.nan,
        "false_rejects": total("judged_correct") - total("accepted_correct")
        if judged
        else math.nan,
    }
