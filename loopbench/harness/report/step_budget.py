"""A step budget set from the runs that succeeded, and what it would have saved.

Agents succeed quickly and fail slowly: a long run is more likely lost than about to
succeed. So a budget on model calls (an arm's ``max_steps``) can be read off the runs
that were right: the smallest budget at or under which a share of them (95% by default)
finished. Runs that were wrong, or were cut by the arm's own budget (``step_budget``),
spent turns beyond it; a run of ``t`` turns and ``c`` dollars cut at ``b < t`` would have
saved ``t - b`` turns and about ``c * (t - b) / t`` dollars. That dollar figure is an
estimate: it spreads a run's cost evenly over its turns, where later turns carry more
context and usually cost more.

Only graded runs count, as in accuracy: runs that ended in ``api_error``,
``pattern_error`` or ``tool_error`` and runs whose judge failed say nothing of the
pattern and are left out. The saving is on this folder's runs, as they went: a budget
this tight would also have cut the correct runs above it (counted in ``correct_cut``),
and a run cut earlier is a failure, not a saving, when it would have come right.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from loopbench.harness.errors import BadInput
from loopbench.harness.report.judge_cost import not_graded
from loopbench.harness.report.model_axis import model_keys
from loopbench.harness.report.table import GROUPINGS
from loopbench.harness.results.statuses import INFRASTRUCTURE_STATUSES

#: The share of correct runs a budget keeps unless told otherwise.
KEEP_SHARE = 0.95
#: The high percentile of turns shown beside the median.
HIGH_PERCENTILE = 0.9


class BadShare(BadInput):
    """A share of correct runs to keep that is not above 0 and at most 1."""


@dataclass(frozen=True)
class StepBudget:
    """One arm's turns, right and wrong, and the budget its correct runs suggest."""

    share: float
    """The share of correct runs the budget keeps."""
    correct_runs: int
    correct_turns_p50: float
    correct_turns_p90: float
    failed_runs: int
    """Graded runs that were not right (wrong, unanswered, or cut by a limit)."""
    failed_turns_p50: float
    failed_turns_p90: float
    budget: float
    """The smallest max_steps with ``share`` of the correct runs at or under it; NaN when
    the arm has no correct run."""
    correct_cut: int
    """Correct runs above the budget: what keeping ``share`` gives up."""
    failed_over: int
    """Failed runs that went beyond the budget."""
    turns_saved: float
    """Turns those runs spent beyond the budget."""
    cost_saved_usd: float
    """About what those turns cost (each run's cost spread evenly over its turns); NaN
    when a run's cost is unknown."""

    def columns(self) -> dict[str, object]:
        """The figures as a table's columns, each named ``step_budget_...``."""
        return {
            ("step_budget" if name == "budget" else f"step_budget_{name}"): value
            for name, value in asdict(self).items()
        }


def check_share(share: float) -> float:
    """``share`` when it is a share of runs to keep: above 0 and at most 1."""
    # guard: step-budget-share-in-range
    if not 0 < share <= 1:
        raise BadShare(
            f"--step-budget {share}: the share of correct runs to keep is above 0 and at "
            "most 1 (e.g. 0.95)"
        )
    return share


def counted_runs(runs: pd.DataFrame) -> np.ndarray:
    """Which of ``runs`` a budget is read from: graded, as accuracy counts them, with their
    turns recorded."""
    counted: np.ndarray = pd.to_numeric(runs["turns"]).notna().to_numpy(copy=True)
    # guard: step-budget-leaves-out-ungraded
    counted &= ~(runs["status"].isin(INFRASTRUCTURE_STATUSES) | not_graded(runs)).to_numpy()
    return counted


def smallest_budget(correct_turns: np.ndarray, share: float) -> float:
    """The smallest whole number of turns with at least ``share`` of ``correct_turns`` at or
    under it; NaN with none."""
    if not len(correct_turns):
        return math.nan
    # The tolerance keeps 0.95 * 20 at 19 runs, not 20 (the float product is 19.000...04).
    needed = max(1, math.ceil(share * len(correct_turns) - 1e-9))
    # guard: step-budget-smallest-keeping-share
    return float(np.sort(correct_turns)[needed - 1])


def step_budget(runs: pd.DataFrame, share: float = KEEP_SHARE) -> StepBudget:
    """The step budget of one arm's ``runs`` (every status; the ungraded are left out)."""
    counted = counted_runs(runs)
    right, turns, cost = _arrays(runs)
    return _budget(right[counted], turns[counted], cost[counted], check_share(share))


def _arrays(runs: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each run's verdict (right or not), turns and cost."""
    return (
        runs["correct"].eq(True).to_numpy(),
        pd.to_numeric(runs["turns"]).to_numpy(dtype=float),
        pd.to_numeric(runs["cost_usd"]).to_numpy(dtype=float),
    )


def _budget(right: np.ndarray, turns: np.ndarray, cost: np.ndarray, share: float) -> StepBudget:
    """The budget of one arm's counted runs, given as their verdicts, turns and costs."""
    good, bad = turns[right], turns[~right]
    budget = smallest_budget(good, share)
    # guard: step-budget-saves-only-beyond
    over = bad > budget if not math.isnan(budget) else np.zeros(len(bad), dtype=bool)
    beyond = bad[over] - budget
    spent = cost[~right][over]
    saved_cost = float((spent * beyond / bad[over]).sum()) if len(beyond) else 0.0
    return StepBudget(
        share=share,
        correct_runs=len(good),
        correct_turns_p50=_quantile(good, 0.5),
        correct_turns_p90=_quantile(good, HIGH_PERCENTILE),
        failed_runs=len(bad),
        failed_turns_p50=_quantile(bad, 0.5),
        failed_turns_p90=_quantile(bad, HIGH_PERCENTILE),
        budget=budget,
        correct_cut=int((good > budget).sum()),
        failed_over=int(over.sum()),
        turns_saved=float(beyond.sum()),
        cost_saved_usd=saved_cost,  # NaN when an unpriced run is among them
    )


def _quantile(values: np.ndarray, q: float) -> float:
    return float(np.quantile(values, q)) if len(values) else math.nan


def step_budgets(
    frame: pd.DataFrame, share: float = KEEP_SHARE, by: Sequence[str] = ()
) -> pd.DataFrame:
    """One row per arm (per model on a model axis, and per ``by`` column): its keys and
    its ``StepBudget``'s columns."""
    for column in by:
        if column not in GROUPINGS:
            raise BadInput(f"cannot group by {column!r}; choose one of {', '.join(GROUPINGS)}")
    check_share(share)
    keys = list(dict.fromkeys([*model_keys(frame), "arm", *by]))
    # Once over the whole frame, then each arm's positions: a million runs in a fraction
    # of a second, where taking each arm's rows of every column took most of one.
    counted = counted_runs(frame)
    right, turns, cost = _arrays(frame)
    rows = []
    for group, positions in (
        frame[keys].groupby(keys, sort=True, dropna=False, observed=True).indices.items()
    ):
        values = group if isinstance(group, tuple) else (group,)
        kept = positions[counted[positions]]
        budget = _budget(right[kept], turns[kept], cost[kept], share)
        rows.append(dict(zip(keys, values, strict=True)) | budget.columns())
    return pd.DataFrame(rows).sort_values(keys, na_position="last", ignore_index=True)


def with_step_budget(
    summary: pd.DataFrame, frame: pd.DataFrame, share: float, by: str | None = None
) -> pd.DataFrame:
    """``summary`` (a table's, one row per arm or arm and ``by``) with each row's step
    budget columns added."""
    budgets = step_budgets(frame, share, [by] if by else [])
    keys = [k for k in budgets.columns if not k.startswith("step_budget")]
    return summary.merge(budgets, on=keys, how="left")
