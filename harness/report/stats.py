"""Statistics for tables and comparisons: Wilson intervals, exact McNemar, paired bootstrap."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

Z95 = 1.959963984540054


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """95% Wilson score interval; never zero-width at 0% or 100%. (nan, nan) when n is 0."""
    if n <= 0:
        return (math.nan, math.nan)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def mcnemar_exact(right_to_wrong: int, wrong_to_right: int) -> float:
    """Two-sided exact McNemar p-value: a binomial test on the discordant pairs.

    The tail is summed in log space: 2**n overflows a float past 1,023 discordant pairs,
    which a large results folder reaches."""
    n = right_to_wrong + wrong_to_right
    if n == 0:
        return 1.0
    k = min(right_to_wrong, wrong_to_right)
    i = np.arange(k + 1)
    log_terms = _log_comb(n, i) - n * math.log(2)
    top = float(log_terms.max())
    tail = math.exp(top) * float(np.exp(log_terms - top).sum())
    return min(1.0, 2 * tail)


def _log_comb(n: int, i: np.ndarray) -> np.ndarray:
    return np.array([math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1) for j in i])


@dataclass(frozen=True)
class PairedDifference:
    """After minus before, on runs matched by (task, repeat)."""

    n_pairs: int
    accuracy_before: float
    accuracy_after: float
    difference: float
    ci_low: float
    ci_high: float
    p_value: float
    """Exact McNemar on the discordant pairs."""
    p_value_by_task: float
    """Sign-flip permutation test on per-task mean differences (repeats kept together)."""
    right_to_wrong: list[str]
    wrong_to_right: list[str]
    cost_per_correct_before: float
    cost_per_correct_after: float
    cost_ci_low: float
    """Bootstrap interval of the change in cost per correct answer (after minus before)."""
    cost_ci_high: float


def paired_difference(
    tasks: ArrayLike,
    before: ArrayLike,
    after: ArrayLike,
    cost_before: ArrayLike,
    cost_after: ArrayLike,
    resamples: int = 2000,
    seed: int = 0,
) -> PairedDifference:
    """Compare two arms run on the same (task, repeat) pairs.

    Repeats of one task are not independent, so the intervals resample whole tasks
    (a cluster bootstrap) and the by-task test flips the sign of each task's mean
    difference, never of single runs.
    """
    b = np.asarray(before, dtype=float)
    a = np.asarray(after, dtype=float)
    cb = np.asarray(cost_before, dtype=float)
    ca = np.asarray(cost_after, dtype=float)
    labels = np.asarray(tasks)
    # Tasks numbered in order of first appearance; the bootstrap draws those numbers.
    cluster_of, _ = pd.factorize(labels, sort=False)
    sums = _ClusterSums(cluster_of, b, a, cb, ca)
    rng = np.random.default_rng(seed)
    diffs, cost_diffs = [], []
    for _ in range(resamples):
        # A resample takes whole tasks, some several times: its totals are the tasks'
        # totals weighted by how often each was drawn.
        drawn = np.bincount(rng.integers(0, sums.count, sums.count), minlength=sums.count)
        diffs.append(sums.accuracy_difference(drawn))
        cost_diffs.append(sums.cost_per_correct_difference(drawn))
    per_task = sums.after / sums.runs - sums.before / sums.runs
    r2w = [str(labels[i]) for i in np.flatnonzero((b == 1) & (a == 0))]
    w2r = [str(labels[i]) for i in np.flatnonzero((b == 0) & (a == 1))]
    return PairedDifference(
        n_pairs=len(b),
        accuracy_before=float(b.mean()),
        accuracy_after=float(a.mean()),
        difference=float(a.mean() - b.mean()),
        ci_low=float(np.percentile(diffs, 2.5)),
        ci_high=float(np.percentile(diffs, 97.5)),
        p_value=mcnemar_exact(len(r2w), len(w2r)),
        p_value_by_task=_sign_flip_p(per_task, rng),
        right_to_wrong=r2w,
        wrong_to_right=w2r,
        cost_per_correct_before=_per_correct(cb, b),
        cost_per_correct_after=_per_correct(ca, a),
        cost_ci_low=_percentile(cost_diffs, 2.5),
        cost_ci_high=_percentile(cost_diffs, 97.5),
    )


class _ClusterSums:
    """Per-task totals of the paired runs, so that a resample costs one pass over the tasks
    rather than over the runs (a million runs, 2,000 resamples)."""

    def __init__(
        self, cluster_of: np.ndarray, b: np.ndarray, a: np.ndarray, cb: np.ndarray, ca: np.ndarray
    ) -> None:
        self.count = int(cluster_of.max()) + 1 if len(cluster_of) else 0

        def total(values: np.ndarray) -> np.ndarray:
            return np.bincount(cluster_of, weights=values, minlength=self.count)

        self.runs = total(np.ones(len(cluster_of)))
        self.before, self.after = total(b), total(a)
        # A task with an unpriced run makes any resample that draws it unpriced (NaN), and
        # only those: a NaN total times a count of zero would otherwise poison them all.
        self.cost_before, self.cost_after = total(cb), total(ca)
        self.unpriced_before = np.isnan(self.cost_before)
        self.unpriced_after = np.isnan(self.cost_after)
        self.cost_before[self.unpriced_before] = 0.0
        self.cost_after[self.unpriced_after] = 0.0

    def accuracy_difference(self, drawn: np.ndarray) -> float:
        # Counts of whole runs sum exactly, so this is the mean over the drawn runs to the bit.
        runs = drawn @ self.runs
        return float(drawn @ self.after / runs - drawn @ self.before / runs)

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


def _sign_flip_p(per_task: np.ndarray, rng: np.random.Generator, rounds: int = 5000) -> float:
    observed = abs(per_task.mean())
    if not per_task.any():
        return 1.0
    signs = rng.choice([-1.0, 1.0], size=(rounds, len(per_task)))
    flipped = np.abs((signs * per_task).mean(axis=1))
    return float((1 + (flipped >= observed - 1e-12).sum()) / (rounds + 1))
