"""Accuracy as a judge reports it, corrected for how often the judge is wrong.

A judge model passes a right answer with probability *sensitivity* and fails a wrong one
with probability *specificity*; both are estimated from answers a person labelled
(``loopbench judge calibrate``). If an arm's true accuracy is p, the judge passes a share
q = p * se + (1 - p) * (1 - sp) of its answers, so (Rogan and Gladen, 1978)

    p = (q + sp - 1) / (se + sp - 1),

defined while the judge is better than chance (se + sp > 1), held to [0, 1].

Its interval carries both uncertainties, by simulation: the judged share q is drawn as the
accuracy interval sees it (Jeffreys' Beta on the effective number of runs, tasks clustered:
``loopbench.harness.stats.intervals``), sensitivity and specificity from their Jeffreys posteriors
on the labels' counts, each draw corrected, and the 2.5th and 97.5th percentiles taken. A
paired difference draws both arms' judged shares together by resampling tasks (Dirichlet
weights, the Bayesian bootstrap), so the pairing is kept, and each arm is corrected with its
own calibration: a judge that favours one arm's style is not credited to that arm.
``bench/judge_correction.py`` measures the coverage; docs/statistics.md quotes it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from loopbench.harness.results.judge_calibration import Calibration, LabelCounts
from loopbench.harness.stats.intervals import LEVEL, effective_runs, task_totals

DRAWS = 4000
#: Beyond this many tasks, a paired difference's judged shares are drawn from their normal
#: approximation instead of resampling tasks (each draw would weigh every task).
MOST_RESAMPLED_TASKS = 20_000


@dataclass(frozen=True)
class JudgeRates:
    """A calibration's counts: answers a person labelled, by the person's label and the
    judge's verdict."""

    true_pass: int
    """Right by the person, passed by the judge."""
    false_fail: int
    """Right by the person, failed by the judge."""
    true_fail: int
    """Wrong by the person, failed by the judge."""
    false_pass: int
    """Wrong by the person, passed by the judge."""

    @property
    def labelled(self) -> int:
        return self.true_pass + self.false_fail + self.true_fail + self.false_pass

    @property
    def sensitivity(self) -> float:
        """The share of right answers the judge passes (nan without any)."""
        right = self.true_pass + self.false_fail
        return self.true_pass / right if right else math.nan

    @property
    def specificity(self) -> float:
        """The share of wrong answers the judge fails (nan without any)."""
        wrong = self.true_fail + self.false_pass
        return self.true_fail / wrong if wrong else math.nan

    def __add__(self, other: JudgeRates) -> JudgeRates:
        return JudgeRates(
            self.true_pass + other.true_pass,
            self.false_fail + other.false_fail,
            self.true_fail + other.true_fail,
            self.false_pass + other.false_pass,
        )

    def draws(self, rng: np.random.Generator, count: int) -> tuple[np.ndarray, np.ndarray]:
        """Sensitivity and specificity drawn from their Jeffreys posteriors."""
        se = rng.beta(self.true_pass + 0.5, self.false_fail + 0.5, count)
        sp = rng.beta(self.true_fail + 0.5, self.false_pass + 0.5, count)
        return se, sp


def rates_of(counts: LabelCounts) -> JudgeRates:
    """A calibration's counts (``loopbench.harness.results.judge_calibration``) as rates."""
    return JudgeRates(counts.true_pass, counts.false_fail, counts.true_fail, counts.false_pass)


def own_rates(calibration: Calibration, arm: str) -> JudgeRates | None:
    """An arm's own rates when the labels hold both right and wrong answers of it (a judge
    may treat arms differently, and a difference the labels are too few to show would still
    bias a pooled correction); None when they do not."""
    counts = calibration.arms.get(arm)
    if counts is None:
        return None
    own = rates_of(counts)
    # guard: arm-rates-own-when-labels-cover
    if own.true_pass + own.false_fail and own.true_fail + own.false_pass:
        return own
    return None


def arm_rates(calibration: Calibration, arm: str) -> JudgeRates:
    """The rates that correct an arm: its own (``own_rates``), else the pooled ones."""
    return own_rates(calibration, arm) or rates_of(calibration.pooled)


def corrected(judged: float | np.ndarray, se: float | np.ndarray, sp: float | np.ndarray) -> Any:
    """Rogan-Gladen: the true share from the judged one; nan where the judge is no better
    than chance (se + sp <= 1), else held to [0, 1]."""
    informative = np.asarray(se) + np.asarray(sp) - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        value = (np.asarray(judged) + np.asarray(sp) - 1) / informative
    # guard: judge-no-better-than-chance-not-corrected
    value = np.where(informative > 0, np.clip(value, 0.0, 1.0), np.nan)
    return float(value) if np.ndim(value) == 0 else value


@dataclass(frozen=True)
class Corrected:
    """A corrected figure and its interval; nan throughout when the judge is no better than
    chance on the labels (nothing to correct with)."""

    estimate: float
    low: float
    high: float
    judged: float
    """The figure as the judge reported it, uncorrected."""


def _interval(
    estimate: float, values: np.ndarray, lowest: float, level: float
) -> tuple[float, float]:
    """Percentiles of the corrected draws, held to the estimate. A draw whose judge is no
    better than chance could be anything: it counts as ``lowest`` for the lower bound and
    as 1 for the upper one."""
    tail = (1 - level) / 2
    low = np.quantile(np.nan_to_num(values, nan=lowest), tail)
    high = np.quantile(np.nan_to_num(values, nan=1.0), 1 - tail)
    return (min(float(low), estimate), max(float(high), estimate))


def corrected_accuracy(
    tasks: ArrayLike,
    judged: ArrayLike,
    rates: JudgeRates,
    level: float = LEVEL,
    draws: int = DRAWS,
    seed: int = 0,
) -> Corrected:
    """An arm's accuracy corrected for its judge's error: runs' judged verdicts (1 passed,
    0 failed) with their task, and the calibration that applies to the arm."""
    runs, passed = task_totals(tasks, judged)
    n = float(runs.sum())
    if n <= 0:
        return Corrected(math.nan, math.nan, math.nan, math.nan)
    share = float(passed.sum()) / n
    estimate = corrected(share, rates.sensitivity, rates.specificity)
    if math.isnan(estimate):
        return Corrected(math.nan, math.nan, math.nan, share)
    effective = effective_runs(passed, runs, share * (1 - share)).runs
    rng = np.random.default_rng(seed)
    shares = rng.beta(share * effective + 0.5, (1 - share) * effective + 0.5, draws)
    se, sp = rates.draws(rng, draws)
    low, high = _interval(estimate, corrected(shares, se, sp), 0.0, level)
    return Corrected(estimate, low, high, share)


def corrected_difference(
    tasks: ArrayLike,
    judged: tuple[ArrayLike, ArrayLike],
    rates: tuple[JudgeRates, JudgeRates],
    level: float = LEVEL,
    draws: int = DRAWS,
    seed: int = 0,
) -> Corrected:
    """Arm a's corrected accuracy minus arm b's, on runs paired by (task, repeat) (their
    judged verdicts, a's then b's): each
    task weighs the same (as ``PairedTasks``), each arm corrected with its own rates."""
    runs, passed_a, passed_b = task_totals(tasks, *judged)
    kept = runs > 0
    share_a, share_b = passed_a[kept] / runs[kept], passed_b[kept] / runs[kept]
    if not len(share_a):
        return Corrected(math.nan, math.nan, math.nan, math.nan)
    rates_a, rates_b = rates
    point_a = corrected(float(share_a.mean()), rates_a.sensitivity, rates_a.specificity)
    point_b = corrected(float(share_b.mean()), rates_b.sensitivity, rates_b.specificity)
    difference = float(share_a.mean() - share_b.mean())
    estimate = point_a - point_b
    if math.isnan(estimate):
        return Corrected(math.nan, math.nan, math.nan, difference)
    rng = np.random.default_rng(seed)
    drawn_a, drawn_b = _paired_shares(share_a, share_b, rng, draws)
    se_a, sp_a = rates_a.draws(rng, draws)
    se_b, sp_b = rates_b.draws(rng, draws)
    differences = corrected(drawn_a, se_a, sp_a) - corrected(drawn_b, se_b, sp_b)
    low, high = _interval(estimate, differences, -1.0, level)
    return Corrected(estimate, low, high, difference)


def _paired_shares(
    a: np.ndarray, b: np.ndarray, rng: np.random.Generator, draws: int
) -> tuple[np.ndarray, np.ndarray]:
    """Both arms' judged shares, drawn together: task means under Dirichlet weights (the
    Bayesian bootstrap); past ``MOST_RESAMPLED_TASKS`` tasks, from the normal approximation
    with the tasks' covariance."""
    count = len(a)
    if count > MOST_RESAMPLED_TASKS:
        covariance = np.cov(np.vstack([a, b])) / count if count > 1 else np.zeros((2, 2))
        drawn = rng.multivariate_normal([a.mean(), b.mean()], covariance, draws)
        return np.clip(drawn[:, 0], 0, 1), np.clip(drawn[:, 1], 0, 1)
    drawn_a, drawn_b = np.empty(draws), np.empty(draws)
    chunk = max(1, 2_000_000 // count)
    for start in range(0, draws, chunk):
        weights = rng.dirichlet(np.ones(count), min(chunk, draws - start))
        drawn_a[start : start + len(weights)] = weights @ a
        drawn_b[start : start + len(weights)] = weights @ b
    return drawn_a, drawn_b
