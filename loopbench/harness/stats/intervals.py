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
- the paired test is ``loopbench.harness.stats.sign_flip``: one test, on per-task differences.

``wilson_interval`` on every run (runs as independent) is the interval "on these tasks":
how an arm did on exactly the tasks asked, which repeats do narrow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from loopbench.harness.stats.distributions import normal_quantile, t_quantile
from loopbench.harness.stats.sign_flip import sign_flip_p, task_differences

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
    # Held to its estimate: at 0% or 100% centre - half is p only to rounding (5e-17 off).
    # guard: wilson-interval-holds-estimate
    return (min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half)))


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
    # guard: estimated-design-effect-takes-t
    z = (
        t_quantile(quantile, tasks - 1)
        if most > fewest and tasks > 1
        else normal_quantile(quantile)
    )
    if run_variance <= 0 or tasks < 2:
        # guard: at-0-or-100-interval
        return Effective(fewest, z)
    estimate = float(values.sum()) / n
    spread = tasks / (tasks - 1) * float(((values - estimate * runs) ** 2).sum()) / (n * n)
    estimated = run_variance / spread if spread > 0 else most
    # guard: repeats-never-count-for-more
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
    low, high = wilson_interval(share * effective.runs, effective.runs, effective.z)
    return (min(low, share), max(high, share))  # share * runs / runs may be share off an ulp


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
    zero-width, even when no pair disagrees. Counts may be effective (not whole).

    When no pair disagrees his combination degenerates: the arms' correlation it estimates
    is 1, and the interval shrinks to nothing at 50% (to a few points elsewhere). A
    difference is at most the share of pairs that disagree, and none of n did: the interval
    is then that share's Wilson bound either side, z^2 / (n + z^2), which is what method 10
    gives at 0% and 100%."""
    n = both + only_a + only_b + neither
    if n <= 0:
        return (-1.0, 1.0)
    # guard: paired-interval-no-pair-disagreeing
    if only_a <= 0 and only_b <= 0:
        bound = wilson_interval(0.0, n, z)[1]
        return (-bound, bound)
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
    ones each arm got right and the ones both did.

    Every figure comes from the per-task differences the paired test signs, each task
    weighing the same however many of its pairs there are: the difference is their mean,
    so its sign is the test statistic's, and the interval is about that mean. With the
    same pairs on every task this is the difference over all pairs."""

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
    def tasks(self) -> int:
        """Tasks with at least one pair: the unit of the test and of the interval."""
        return int((self.pairs > 0).sum())

    def _per_task(self, right: np.ndarray) -> np.ndarray:
        kept = self.pairs > 0
        share: np.ndarray = right[kept] / self.pairs[kept]
        return share

    @property
    def accuracy_a(self) -> float:
        """Arm a's accuracy on the pairs, the mean over tasks of each task's (nan: none)."""
        return float(self._per_task(self.right_a).mean()) if self.tasks else math.nan

    @property
    def accuracy_b(self) -> float:
        """Arm b's, likewise."""
        return float(self._per_task(self.right_b).mean()) if self.tasks else math.nan

    def task_differences(self) -> np.ndarray:
        """Per task with pairs, d_t: arm a's right pairs less arm b's, over its pairs."""
        kept = self.pairs > 0
        return task_differences(self.right_a[kept], self.right_b[kept], self.pairs[kept])

    @property
    def difference(self) -> float:
        """Arm a's accuracy minus arm b's: the mean of the per-task differences (0 without
        pairs)."""
        return float(self.task_differences().mean()) if self.tasks else 0.0

    def p_value(self) -> float:
        """The paired test: sign flips of the per-task differences, two-sided, mid-p."""
        return sign_flip_p(self.right_a, self.right_b, self.pairs)

    def interval(self, level: float = LEVEL) -> tuple[float, float]:
        """Newcombe's interval for the difference on the effective number of pairs: the
        shares of pairs right on both arms, on one only and on neither, each task weighing
        the same, worth as many independent pairs as the spread of the d_t over tasks says
        (at least a pair a task, at most every pair: with m_t pairs on task t, N tasks,
        N^2 / sum(1 / m_t), every pair when all m_t are equal). It holds the difference."""
        if not self.tasks:
            return (-1.0, 1.0)
        both = self._per_task(self.both)
        only_a, only_b = self._per_task(self.right_a) - both, self._per_task(self.right_b) - both
        d, difference = self.task_differences(), self.difference
        run_variance = float(only_a.mean() + only_b.mean()) - difference**2  # a pair's a - b
        weights = 1 / self.pairs[self.pairs > 0]
        most = self.tasks**2 / float(weights.sum())
        effective = effective_runs(d, np.ones(self.tasks), run_variance, most, level)
        n = effective.runs
        neither = self._per_task(self.pairs - self.right_a - self.right_b + self.both)
        low, high = newcombe_interval(
            n * float(both.mean()),
            n * float(only_a.mean()),
            n * float(only_b.mean()),
            n * float(neither.mean()),
            effective.z,
        )
        return (min(low, difference), max(high, difference))


@dataclass(frozen=True)
class PairedDifference:
    """After minus before, on runs matched by (task, repeat). The accuracies, their
    difference, its interval and the test all weigh each task the same (``PairedTasks``),
    and so does cost per correct answer: on each side, the mean over tasks of a task's
    pairs' mean cost over the mean over tasks of its share correct. A task that kept more
    pairs after failures does not outweigh the others in cost either, so accuracy and cost
    are about the same pairs, counted alike (with as many pairs on every task, this is the
    pairs' cost over their correct answers)."""

    n_pairs: int
    accuracy_before: float
    accuracy_after: float
    difference: float
    """The mean of the per-task differences: the sign of the paired test's statistic."""
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
    task_of = pd.factorize(labels, sort=False)[0]  # once: the tasks' own numbers from here on
    paired = PairedTasks.of(task_of, a, b)
    low, high = paired.interval()
    p_value = paired.p_value()
    cost_before, cost_after = (np.asarray(cost, dtype=float) for cost in costs)
    means = _TaskMeans(task_of, b, a, cost_before, cost_after)
    cost_low, cost_high = _cost_interval(means, resamples, np.random.default_rng(seed))
    every_task = np.ones(means.count)
    per_correct_before, per_correct_after = means.per_correct(every_task)
    rise = per_correct_after - per_correct_before
    if not math.isnan(rise + cost_low + cost_high):  # a percentile interval, held to its estimate
        cost_low, cost_high = min(cost_low, rise), max(cost_high, rise)
    return PairedDifference(
        n_pairs=len(b),
        accuracy_before=paired.accuracy_b,
        accuracy_after=paired.accuracy_a,
        difference=paired.difference,
        ci_low=low,
        ci_high=high,
        p_value=p_value,
        p_value_by_task=p_value,
        right_to_wrong=list(map(str, labels[(b == 1) & (a == 0)])),
        wrong_to_right=list(map(str, labels[(b == 0) & (a == 1)])),
        cost_per_correct_before=per_correct_before,
        cost_per_correct_after=per_correct_after,
        cost_ci_low=cost_low,
        cost_ci_high=cost_high,
        tasks=paired.tasks,
    )


def _cost_interval(
    means: _TaskMeans, resamples: int, rng: np.random.Generator
) -> tuple[float, float]:
    """A cluster bootstrap of the change in cost per correct answer: whole tasks drawn."""
    diffs = []
    for _ in range(resamples):
        # A resample takes whole tasks, some several times: its figures are the tasks'
        # means weighted by how often each was drawn.
        drawn = np.bincount(rng.integers(0, means.count, means.count), minlength=means.count)
        before, after = means.per_correct(drawn)
        diffs.append(after - before)
    return _percentile(diffs, 2.5), _percentile(diffs, 97.5)


class _TaskMeans:
    """Per-task means of the paired runs (correct, cost), each task weighing the same as in
    the accuracies, so that a resample costs one pass over the tasks rather than over the
    runs (a million runs, 2,000 resamples)."""

    def __init__(
        self, cluster_of: np.ndarray, b: np.ndarray, a: np.ndarray, cb: np.ndarray, ca: np.ndarray
    ) -> None:
        self.count = int(cluster_of.max()) + 1 if len(cluster_of) else 0
        pairs = np.bincount(cluster_of, minlength=self.count).astype(float)

        def mean(values: np.ndarray) -> np.ndarray:
            totals = np.bincount(cluster_of, weights=values, minlength=self.count)
            # guard: compare-cost-per-correct-weighs
            means: np.ndarray = totals / pairs
            return means

        self.before, self.after = mean(b), mean(a)
        # A task with an unpriced run makes any resample that draws it unpriced (NaN), and
        # only those: a NaN mean times a count of zero would otherwise poison them all.
        self.cost_before, self.cost_after = mean(cb), mean(ca)
        self.unpriced_before = np.isnan(self.cost_before)
        self.unpriced_after = np.isnan(self.cost_after)
        self.cost_before[self.unpriced_before] = 0.0
        self.cost_after[self.unpriced_after] = 0.0

    def per_correct(self, drawn: np.ndarray) -> tuple[float, float]:
        """Cost per correct answer before and after, of the tasks ``drawn`` (how many
        times each): NaN on a side with nothing correct or an unpriced task drawn."""
        return (
            self._per_correct(drawn, self.cost_before, self.unpriced_before, self.before),
            self._per_correct(drawn, self.cost_after, self.unpriced_after, self.after),
        )

    @staticmethod
    def _per_correct(
        drawn: np.ndarray, cost: np.ndarray, unpriced: np.ndarray, correct: np.ndarray
    ) -> float:
        right = drawn @ correct
        # guard: resample-drawing-unpriced-task
        if not right or drawn[unpriced].any():
            return math.nan
        return float(drawn @ cost / right)


def _percentile(values: list[float], q: float) -> float:
    """NaN when nothing is defined (no price, or nothing correct in any resample)."""
    finite = [v for v in values if not math.isnan(v)]
    return float(np.percentile(finite, q)) if finite else math.nan
