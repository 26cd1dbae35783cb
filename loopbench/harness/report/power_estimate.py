"""What a finished run says about its own design: its tasks, repeats, accuracy, ICC and arm
correlation, and what each arm's per-task differences from the best arm could detect.

The ICC by one-way ANOVA on the runs of each (arm, task), sums of squares pooled over the
arms (each arm about its own mean) and truncated at 0; kappa by the method of moments from
the observed variance of per-task differences of each arm against the best arm. Apart from
the model and its formulas (``loopbench.harness.report.power``, which it uses) because it reads
records, while the formulas need none: they plan a run before it happens.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from loopbench.harness.report.model_axis import model_and_arm
from loopbench.harness.report.power import PowerError, detectable_shift, difference_variance
from loopbench.harness.results.records import RunRecord
from loopbench.harness.results.statuses import INFRASTRUCTURE_STATUSES


@dataclass(frozen=True)
class PairEstimate:
    """One arm against the best arm, on the tasks both ran."""

    arm: str
    accuracy: float
    difference: float
    """Its accuracy minus the best arm's, over the runs of the shared tasks; nan when none."""
    tasks: int
    """Tasks both ran."""
    sd: float
    """Observed sd of the per-task mean differences; nan below 2 shared tasks."""
    detectable: float | None
    """The smallest mean difference these tasks detect at this sd; None below 2 tasks or
    when every task's difference was the same (the sd is 0: nothing to scale by)."""


@dataclass(frozen=True)
class Estimates:
    """What a finished run says about its own design."""

    arms: int
    tasks: int
    repeats: int
    """The most common number of graded runs of an (arm, task)."""
    baseline: float
    """Accuracy over every arm's graded runs."""
    icc: float | None
    """One-way ANOVA, pooled over arms; None when no (arm, task) ran twice."""
    arm_correlation: float | None
    """Method of moments from the pairs' sd; None when the ICC is 0 or unknown."""
    best: str
    """The most accurate arm that shares a task with another."""
    pairs: list[PairEstimate]


#: Each arm's graded runs by task: 1.0 for a run graded correct, else 0.0.
Cells = dict[str, dict[str, list[float]]]


def estimate(
    records: Sequence[RunRecord], alpha: float, power: float, source: Path | None = None
) -> Estimates:
    """Tasks, repeats, accuracy, ICC and arm correlation of a finished run, and each arm's
    per-task differences from the best arm. Runs that failed on infrastructure are left
    out, as in the table; a run not graded correct counts as wrong. ``PowerError`` when
    the records cannot be paired, its line naming ``source`` (their results folder)."""
    where = "" if source is None else f"{source}: "
    cells = _graded_cells(records, where)
    sizes = Counter(len(runs) for by_task in cells.values() for runs in by_task.values())
    repeats = max(sizes, key=lambda n: (sizes[n], n))
    accuracy = {
        arm: _mean([y for runs in by_task.values() for y in runs]) for arm, by_task in cells.items()
    }
    best = _best(cells, accuracy, where)
    pairs = [
        _against(arm, accuracy[arm], cells[arm], cells[best], alpha, power)
        for arm in sorted(cells)
        if arm != best
    ]
    all_runs = [y for by_task in cells.values() for runs in by_task.values() for y in runs]
    icc = pooled_icc([list(by_task.values()) for by_task in cells.values()])
    return Estimates(
        len(cells),
        len({t for by_task in cells.values() for t in by_task}),
        repeats,
        _mean(all_runs),
        icc,
        _arm_correlation(pairs, accuracy[best], icc, repeats),
        best,
        pairs,
    )


def _graded_cells(records: Sequence[RunRecord], where: str) -> Cells:
    """The runs by arm and task, each model's arms apart; refused below two arms or two
    tasks (the paired test compares two arms over tasks)."""
    cells: Cells = defaultdict(lambda: defaultdict(list))
    # guard: power-from-keeps-each-model
    several = len({r.model for r in records}) > 1  # a model axis: each model's arms apart
    for r in records:
        if r.status not in INFRASTRUCTURE_STATUSES:
            arm = model_and_arm(r.model, r.arm) if several else r.arm
            cells[arm][r.task_id].append(1.0 if r.correct is True else 0.0)
    tasks = {t for by_task in cells.values() for t in by_task}
    if len(cells) < 2:
        raise PowerError(
            f"{where}{len(cells)} arm(s) with graded runs ({', '.join(cells) or 'none'}): power is "
            "about the difference between two arms; run at least two"
        )
    if len(tasks) < 2:
        raise PowerError(
            f"{where}{len(tasks)} task(s) with graded runs: tasks are the unit of the paired test; "
            "run at least two"
        )
    return cells


def _against(
    arm: str,
    accuracy: float,
    runs: dict[str, list[float]],
    best: dict[str, list[float]],
    alpha: float,
    power: float,
) -> PairEstimate:
    """``arm`` (its runs by task) against the best arm, on the tasks both ran."""
    shared = sorted(set(runs) & set(best))
    d = np.array([_mean(runs[t]) - _mean(best[t]) for t in shared])
    sd = float(d.std(ddof=1)) if len(d) > 1 else math.nan
    difference = (
        _mean([y for t in shared for y in runs[t]]) - _mean([y for t in shared for y in best[t]])
        if shared
        else math.nan
    )
    return PairEstimate(
        arm, accuracy, difference, len(shared), sd, _detectable(len(d), sd, alpha, power)
    )


def _best(cells: Cells, accuracy: dict[str, float], where: str) -> str:
    """The most accurate arm among those that share a task with another arm: the others are
    compared with it. Refused when no two arms graded a task in common (nothing to pair)."""
    paired = [
        arm
        for arm in sorted(cells)
        if any(set(cells[arm]) & set(cells[other]) for other in cells if other != arm)
    ]
    # guard: power-from-refuses-arms-with
    if not paired:
        raise PowerError(
            f"{where}no two of the {len(cells)} arms have graded runs of a task in common: the "
            "paired test compares arms on the tasks both ran; run the arms on the same tasks"
        )
    return max(paired, key=lambda arm: accuracy[arm])


def _detectable(tasks: int, sd: float, alpha: float, power: float) -> float | None:
    """The smallest mean difference ``tasks`` tasks detect at this sd, by normal theory;
    None when nothing scales it (sd 0 or nan) or no number of agreeing tasks would reject."""
    if not sd > 0:
        return None
    shift = detectable_shift(tasks, alpha, power)
    return shift * sd / math.sqrt(tasks) if math.isfinite(shift) else None


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def pooled_icc(arms: Sequence[Sequence[Sequence[float]]]) -> float | None:
    """One-way ANOVA ICC of runs grouped by task, sums of squares pooled over arms (each
    arm about its own mean, so arms' accuracies do not count as task effects):
    (MSB - MSW) / (MSB + (n0 - 1) MSW), n0 the ANOVA's mean group size, truncated at 0.
    None when no task ran twice in an arm (no within-task spread to compare with)."""
    between = within = 0.0
    df_between = df_within = 0
    size_terms = 0.0
    for groups in arms:
        runs = [y for group in groups for y in group]
        grand = _mean(runs)
        between += sum(len(g) * (_mean(g) - grand) ** 2 for g in groups)
        within += sum((y - _mean(g)) ** 2 for g in groups for y in g)
        df_between += len(groups) - 1
        df_within += len(runs) - len(groups)
        size_terms += len(runs) - sum(len(g) ** 2 for g in groups) / len(runs)
    if df_within == 0 or df_between == 0:
        return None
    msb, msw = between / df_between, within / df_within
    n0 = size_terms / df_between
    if msb + (n0 - 1) * msw <= 0:
        return 0.0
    # guard: icc-estimator
    return max(0.0, (msb - msw) / (msb + (n0 - 1) * msw))


def _arm_correlation(
    pairs: Sequence[PairEstimate], best: float, icc: float | None, repeats: int
) -> float | None:
    """kappa solving, summed over the pairs, observed Var(d) = the model's Var(d): the
    model is linear in kappa. Clipped to [0, 1]; None when it does not enter (ICC 0)."""
    if not icc:
        return None
    gap = weight = 0.0
    for pair in pairs:
        if math.isnan(pair.sd):
            continue
        v_a, v_b = pair.accuracy * (1 - pair.accuracy), best * (1 - best)
        gap += difference_variance(pair.accuracy, best, repeats, icc, 0.0) - pair.sd**2
        weight += 2 * icc * math.sqrt(v_a * v_b)
    if weight == 0:
        return None
    return min(1.0, max(0.0, gap / weight))
