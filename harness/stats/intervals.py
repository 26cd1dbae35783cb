"""Intervals about tasks like these, and the paired comparison of two arms.

Repeats of one task are correlated samples of it, never independent evidence, so every
figure here clusters by task (docs/statistics.md says why and shows the coverage):

- an accuracy interval is Wilson's score interval on the *effective* number of runs:
  n / design effect, the design effect being the cluster-robust variance of the accuracy
  over the variance n independent runs would give, bounded by 1 (repeats of a task as
  good as new tasks) and by the mean runs per task (every repeat of a task alike). At 0%
  or 100% nothing says how repeats agree, so the bound that counts tasks is taken. With
  repeats the critical value is Student's t on tasks - 1 degrees of freedom, since the
  design effect is estimated; with one run per task it is the normal quantile, and the
  interval is the usual Wilson interval;
- a paired difference has Newcombe's score interval (his method 10) on the effective
  number of pairs, the same way;
- the paired test is ``harness.stats.sign_flip``: one test, on per-task differences.

``wilson_interval`` on every run (runs as independent) is the interval "on these tasks":
how an arm did on exactly the tasks asked, which repeats do narrow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from harness.stats.distributions import normal_quantile, t_quantile
from harness.stats.sign_flip import sign_flip_p

LEVEL = 0.95
Z95 = normal_quantile(0.975)


def wilson_interval(successes: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval; never zero-width at 0% or 100%. (nan, nan) when n is 0."""
    if n <= 0:
        return (math.nan, math.nan)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(max(0.0, p * (1 - p) / n + z * z / (4 * n * n))) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True)
class Effective:
    """How many independent runs a set of clustered runs is worth, and the critical value
    an interval on it takes."""

    runs: float
    z: float


def effective_runs(
    values: np.ndarray,
    runs: np.ndarray,
    run_variance: float,
    most: float | None = None,
    level: float = LEVEL,
) -> Effective:
    """How many independent runs the estimate sum(values) / sum(runs) is worth, per task
    given: a run's variance, were runs independent, over the cluster-robust variance of the
    estimate. At least the runs of tasks whose repeats always agree (``fewest``), at most
    ``most`` (default: every run). A run variance of 0 (0% or 100%, no pair disagreeing)
    says nothing of how repeats agree, so the tasks are counted."""
    n = float(runs.sum())
    tasks = int((runs > 0).sum())
    fewest = n * n / float((runs * runs).sum())
    most = n if most is None else max(most, fewest)
    quantile = 1 - (1 - level) / 2
    # With repeats the design effect is estimated: t on the tasks' degrees of freedom.
    z = (
        t_quantile(quantile, tasks - 1)
        if most > fewest and tasks > 1
        else normal_quantile(quantile)
    )
    if run_variance <= 0 or tasks < 2:
        return Effective(fewest, z)
    estimate = float(values.sum()) / n
    spread = tasks / (tasks - 1) * float(((values - estimate * runs) ** 2).sum()) / (n * n)
    estimated = run_variance / spread if spread > 0 else most
    return Effective(min(most, max(fewest, estimated)), z)


def clustered_interval(
    successes: np.ndarray, runs: np.ndarray, most: float | None = None, level: float = LEVEL
) -> tuple[float, float]:
    """Wilson's interval on the effective number of runs: sum(successes) / sum(runs) as an
    estimate about tasks like these. Per task: successes (a count, or a share times a
    weight) and runs. (nan, nan) without runs."""
    if not len(runs) or runs.sum() <= 0:
        return (math.nan, math.nan)
    share = float(successes.sum()) / float(runs.sum())
    effective = effective_runs(successes, runs, share * (1 - share), most, level)
    return wilson_interval(share * effective.runs, effective.runs, effective.z)


def task_totals(tasks: ArrayLike, *values: ArrayLike) -> tuple[np.ndarray, ...]:
    """Per task (in order of first appearance): the number of rows, then the sum of each of
    ``values`` over its rows."""
    codes, labels = pd.factorize(np.asarray(tasks), sort=False)
    count = len(labels)
    sums = [np.bincount(codes, weights=np.asarray(v, dtype=float), minlength=count) for v in values]
    return (np.bincount(codes, minlength=count).astype(float), *sums)


def accuracy_interval(tasks: ArrayLike, correct: ArrayLike) -> tuple[float, float]:
    """The interval on an arm's accuracy about tasks like these: runs clustered by task."""
    runs, right = task_totals(tasks, correct)
    return clustered_interval(right, runs)


def newcombe_interval(
    both: float, only_a: float, only_b: float, neither: float, z: float
) -> tuple[float, float]:
    """Newcombe's score interval (his method 10) for p_a - p_b on paired outcomes: never
    zero-width, even when no pair disagrees. Counts may be effective (not whole)."""
    n = both + only_a + only_b + neither
    if n <= 0:
        return (-1.0, 1.0)
    p1, p2 = (both + only_a) / n, (both + only_b) / n
    l1, u1 = wilson_interval(both + only_a, n, z)
    l2, u2 = wilson_interval(both + only_b, n, z)
    margins = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    phi = (both * neither - only_a * only_b) / math.sqrt(margins) if margins > 0 else 0.0
    below = math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    above = math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return (max(-1.0, p1 - p2 - below), min(1.0, p1 - p2 + above))


@dataclass(frozen=True)
class PairedTasks:
    """Two arms' runs paired by (task, repeat), totalled per task: pairs, and of them the
    ones each arm got right and the ones both did."""

    pairs: np.ndarray
    right_a: np.ndarray
    right_b: np.ndarray
    both: np.ndarray

    @classmethod
    def of(cls, tasks: ArrayLike, a: ArrayLike, b: ArrayLike) -> PairedTasks:
        """From paired runs' outcomes (1 right, 0 not) of arm a and arm b, with their task."""
        right_a, right_b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        return cls(*task_totals(tasks, right_a, right_b, right_a * right_b))

    @property
    def difference(self) -> float:
        """Arm a's accuracy minus arm b's over the pairs."""
        n = float(self.pairs.sum())
        return float(self.right_a.sum() - self.right_b.sum()) / n if n else 0.0

    def p_value(self) -> float:
        """The paired test: sign flips of the per-task differences, two-sided, mid-p."""
        return sign_flip_p(self.right_a, self.right_b, self.pairs)

    def interval(self, level: float = LEVEL) -> tuple[float, float]:
        """Newcombe's interval for a - b on the effective number of pairs (tasks clustered)."""
        if not self.pairs.sum():
            return (-1.0, 1.0)
        only_a, only_b = self.right_a - self.both, self.right_b - self.both
        n, d = float(self.pairs.sum()), self.difference
        run_variance = float(only_a.sum() + only_b.sum()) / n - d * d  # of one pair's a - b
        effective = effective_runs(only_a - only_b, self.pairs, run_variance, level=level)
        scale, z = effective.runs / n, effective.z
        neither = self.pairs - self.right_a - self.right_b + self.both
        return newcombe_interval(
            scale * float(self.both.sum()),
            scale * float(only_a.sum()),
            scale * float(only_b.sum()),
            scale * float(neither.sum()),
            z,
        )


@dataclass(frozen=True)
class PairedDifference:
    """After minus before, on runs matched by (task, repeat)."""

    n_pairs: int
    accuracy_before: float
    accuracy_after: float
    difference: float
    ci_low: float
    """Newcombe's interval on the effective number of pairs (tasks clustered)."""
    ci_high: float
    p_value: float
    """The paired test: a sign-flip test on per-task differences, two-sided, mid-p."""
    p_value_by_task: float
    """The same p (kept for readers of the JSON written before there was one test)."""
    right_to_wrong: list[str]
    wrong_to_right: list[str]
    cost_per_correct_before: float
    cost_per_correct_after: float
    cost_ci_low: float
    """Bootstrap interval of the change in cost per correct answer (after minus before)."""
    cost_ci_high: float
    tasks: int = 0
    """Tasks with at least one pair: the unit of the test and the intervals."""


def paired_difference(
    tasks: ArrayLike,
    before: ArrayLike,
    after: ArrayLike,
    costs: tuple[ArrayLike, ArrayLike],
    resamples: int = 2000,
    seed: int = 0,
) -> PairedDifference:
    """Compare two arms run on the same (task, repeat) pairs: the test and the accuracy
    interval cluster by task; the cost interval resamples whole tasks (a cluster bootstrap)."""
    b = np.asarray(before, dtype=float)
    a = np.asarray(after, dtype=float)
    labels = np.asarray(tasks)
    paired = PairedTasks.of(labels, a, b)
    low, high = paired.interval()
    p_value = paired.p_value()
    cost_before, cost_after = (np.asarray(cost, dtype=float) for cost in costs)
    sums = _ClusterSums(pd.factorize(labels, sort=False)[0], b, a, cost_before, cost_after)
    cost_low, cost_high = _cost_interval(sums, resamples, np.random.default_rng(seed))
    return PairedDifference(
        n_pairs=len(b),
        accuracy_before=float(b.mean()),
        accuracy_after=float(a.mean()),
        difference=float(a.mean() - b.mean()),
        ci_low=low,
        ci_high=high,
        p_value=p_value,
        p_value_by_task=p_value,
        right_to_wrong=[str(labels[i]) for i in np.flatnonzero((b == 1) & (a == 0))],
        wrong_to_right=[str(labels[i]) for i in np.flatnonzero((b == 0) & (a == 1))],
        cost_per_correct_before=_per_correct(cost_before, b),
        cost_per_correct_after=_per_correct(cost_after, a),
        cost_ci_low=cost_low,
        cost_ci_high=cost_high,
        tasks=int((paired.pairs > 0).sum()),
    )


def _cost_interval(
    sums: _ClusterSums, resamples: int, rng: np.random.Generator
) -> tuple[float, float]:
    """A cluster bootstrap of the change in cost per correct answer: whole tasks drawn."""
    diffs = []
    for _ in range(resamples):
        # A resample takes whole tasks, some several times: its totals are the tasks'
        # totals weighted by how often each was drawn.
        drawn = np.bincount(rng.integers(0, sums.count, sums.count), minlength=sums.count)
        diffs.append(sums.cost_per_correct_difference(drawn))
    return _percentile(diffs, 2.5), _percentile(diffs, 97.5)


class _ClusterSums:
    """Per-task totals of the paired runs, so that a resample costs one pass over the tasks
    rather than over the runs (a million runs, 2,000 resamples)."""

    def __init__(
        self, cluster_of: np.ndarray, b: np.ndarray, a: np.ndarray, cb: np.ndarray, ca: np.ndarray
    ) -> None:
        self.count = int(cluster_of.max()) + 1 if len(cluster_of) else 0

        def total(values: np.ndarray) -> np.ndarray:
            return np.bincount(cluster_of, weights=values, minlength=self.count)

        self.before, self.after = total(b), total(a)
        # A task with an unpriced run makes any resample that draws it unpriced (NaN), and
        # only those: a NaN total times a count of zero would otherwise poison them all.
        self.cost_before, self.cost_after = total(cb), total(ca)
        self.unpriced_before = np.isnan(self.cost_before)
        self.unpriced_after = np.isnan(self.cost_after)
        self.cost_before[self.unpriced_before] = 0.0
        self.cost_after[self.unpriced_after] = 0.0

    def cost_per_correct_difference(self, drawn: np.ndarray) -> float:
        after = self._per_correct(drawn, self.cost_after, self.unpriced_after, self.after)
        before = self._per_correct(drawn, self.cost_before, self.unpriced_before, self.before)
        return after - before

    @staticmethod
    def _per_correct(
        drawn: np.ndarray, cost: np.ndarray, unpriced: np.ndarray, correct: np.ndarray
    ) -> float:
        right = drawn @ correct
        if not right or drawn[unpriced].any():
            return math.nan
        return float(drawn @ cost / right)


def _percentile(values: list[float], q: float) -> float:
    """NaN when nothing is defined (no price, or nothing correct in any resample)."""
    finite = [v for v in values if not math.isnan(v)]
    return float(np.percentile(finite, q)) if finite else math.nan


def _per_correct(cost: np.ndarray, correct: np.ndarray) -> float:
    right = correct.sum()
    return float(cost.sum() / right) if right else math.nan
