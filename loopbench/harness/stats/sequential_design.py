"""What ``run --until-separated`` is expected to spend, before a run: its power and mean rounds
at a given gap, and the fewest rounds at which it matches a fixed design's power.

Round k of the rule has the paired test's information I_k = tasks / Var(d_t; k repeats)
(``loopbench.harness.report.power.difference_variance``). The mean difference after k rounds has
covariance Var(mean_j, mean_k) = 1 / I_k for j < k (the later repeats are independent of
the earlier ones), so the looks' z are the canonical joint normal of group-sequential
theory: z_k = (gap I_k + W(I_k)) / sqrt(I_k) for a Brownian motion W. The rule
(``loopbench.harness.stats.separation``) is applied to paths of it: a crossing of the round's
efficacy bound, an interval within the margin, or futility (the likelihood boundary of
two gaps; of one, or the conditional power, in folders run before it). Paths are drawn from a fixed
seed, so the figures are the same every time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from statistics import NormalDist

import numpy as np

from loopbench.harness.stats.boundaries import FUTILITY_FROM, futility_bound
from loopbench.harness.stats.separation import SeparationRule

#: Simulated paths a figure (its standard error at most 0.5 / sqrt(PATHS)).
PATHS = 10_000
SEED = 43

_NORMAL = NormalDist()


@dataclass(frozen=True)
class Expected:
    """The rule's figures at one gap."""

    declared: float
    """Share of runs declaring a difference (false alarms at gap 0, else power)."""
    rounds: float
    """Mean rounds run."""
    futile: float
    """Share stopped for futility."""


def expected(
    rule: SeparationRule,
    information: Sequence[float],
    gap: float,
    paths: int = PATHS,
    tasks: int | None = None,
) -> Expected:
    """The rule on two arms whose accuracies differ by ``gap``, with ``information[k]`` the
    information (1 / variance of the mean difference) after round k + 1. Given ``tasks``,
    the information is the one the rule's z sees: its variance is the sum of the squared
    per-task differences, about zero rather than their mean, so a gap adds gap^2 / tasks to
    it (which matters on few tasks and many rounds)."""
    info = np.asarray(information[: rule.max_repeats], dtype=float)
    if tasks:
        info = 1 / (1 / info + gap**2 / tasks)
    looks = len(info)
    rng = np.random.default_rng(SEED)
    steps = np.diff(np.concatenate([[0.0], info]))
    motion = np.cumsum(rng.standard_normal((paths, looks)) * np.sqrt(steps), axis=1)
    z = (gap * info + motion) / np.sqrt(info)
    running = np.ones(paths, dtype=bool)
    declared = np.zeros(paths, dtype=bool)
    futile = np.zeros(paths, dtype=bool)
    rounds = np.full(paths, looks, dtype=float)
    bounds = _bounds(rule)
    for k in range(looks):
        fraction = (k + 1) / rule.max_repeats
        crossed = running & (np.abs(z[:, k]) >= bounds[k])
        declared |= crossed
        precision = math.sqrt(info[k])
        level = bounds[k] / precision
        estimate = z[:, k] / precision
        within = running & ~crossed & (np.abs(estimate) + level < rule.margin)
        stopped = crossed | within
        gives_up = rule.boundary != "bonferroni" and rule.futility and fraction < 1
        if gives_up and rule.futility_boundary != "conditional-power":
            far = rule.futility_boundary == "likelihood-two-gaps"
            bound = futility_bound(rule.margin * precision, far)
            quit_ = running & ~stopped & (np.abs(z[:, k]) < bound)
            futile |= quit_
            stopped |= quit_
        if gives_up and fraction >= FUTILITY_FROM:
            shift = np.maximum(rule.margin * math.sqrt(info[k]), np.abs(z[:, k]))
            power = _conditional_power(z[:, k], fraction, bounds[-1], shift / math.sqrt(fraction))
            quit_ = running & ~stopped & (power < rule.futility)
            futile |= quit_
            stopped |= quit_
        rounds[stopped] = k + 1
        running &= ~stopped
    return Expected(float(declared.mean()), float(rounds.mean()), float(futile.mean()))


def _bounds(rule: SeparationRule) -> list[float]:
    if rule.boundary != "bonferroni":
        return list(rule.bounds(2))
    return [_NORMAL.inv_cdf(1 - rule.look_alpha(2) / 2)] * rule.max_repeats


def _conditional_power(
    z: np.ndarray, fraction: float, bound: float, drift: np.ndarray
) -> np.ndarray:
    from scipy import special

    left = 1 - fraction
    mean = z * math.sqrt(fraction) + np.copysign(drift, z) * left
    sd = math.sqrt(left)
    power: np.ndarray = special.ndtr((mean - bound) / sd) + special.ndtr((-bound - mean) / sd)
    return power


def fewest_rounds(
    rule: SeparationRule,
    information: Sequence[float],
    gap: float,
    power: float,
    tasks: int | None = None,
) -> tuple[SeparationRule, Expected] | None:
    """The rule with the fewest rounds (up to ``len(information)``) whose power at ``gap``
    is at least ``power``, and its figures there; None when none reaches it."""
    for rounds in range(1, len(information) + 1):
        planned = replace(rule, max_repeats=rounds)
        found = expected(planned, information, gap, tasks=tasks)
        if found.declared >= power:
            return planned, found
    return None
