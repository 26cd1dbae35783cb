"""The paired test's power where normal theory does not hold: few tasks.

With one run a task the power is exact whatever the tasks are like: each task gives one
pair of runs, independent of the other tasks', that disagrees one way with chance
p10 = E[P_A (1 - P_B)] and the other with p01 = E[(1 - P_A) P_B], and the test is
McNemar's mid-p on the pairs that disagree. Both chances follow from the accuracies, the
ICC and the arm correlation alone: E[P_A P_B] = p_A p_B + kappa rho sqrt(v_A v_B).

With repeats and few tasks, the power depends on how difficulty is spread over the tasks,
which the ICC and the arm correlation do not say; it is simulated under one stated model,
the model of ``bench/simulated.py``: each arm's chance on a task Beta distributed with the
arm's accuracy and the ICC, arm B's chance the quantile of arm A's on B's Beta with a
probability set to give the arm correlation (a shared difficulty), an independent draw
otherwise. ``SIMULATIONS`` experiments, the same random numbers for every design, so the
power is a smooth function of the design (±1 point of Monte Carlo error at most).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from loopbench.harness.stats.sign_flip import sign_flip_p

SIMULATIONS = 2000
#: The quantile grid the Beta chances are drawn on.
GRID = 4096
#: Beyond this many tasks the exact one-run power is left to normal theory (it is O(N^2)).
EXACT_UP_TO = 3000


def discordance(p_a: float, p_b: float, icc: float, kappa: float) -> tuple[float, float]:
    """P(a run of A right and B's wrong), P(A's wrong and B's right), on one task."""
    # guard: one-run-task-shared-difficulty
    both = p_a * p_b + kappa * icc * math.sqrt(p_a * (1 - p_a) * p_b * (1 - p_b))
    both = min(both, p_a, p_b)  # no more than the weaker arm is right: kappa as feasible
    return p_a - both, p_b - both


#: An arm's accuracy, the other's, the ICC and the arm correlation.
Chances = tuple[float, float, float, float]


def one_run_power(tasks: int, chances: Chances, alpha: float) -> float:
    """Exact power of McNemar's mid-p test on ``tasks`` tasks run once an arm."""
    p10, p01 = discordance(*chances)
    q = p10 + p01
    if q <= 0:
        return 0.0
    discordant = _binomial(tasks, q)
    power = 0.0
    for d in np.flatnonzero(discordant > 1e-15).tolist():
        if d:
            power += discordant[d] * float(_binomial(d, p01 / q)[_mid_p_rejects(d, alpha)].sum())
    return min(1.0, power)


def _binomial(n: int, p: float) -> np.ndarray:
    """P(K = 0..n) for K binomial(n, p)."""
    from scipy import stats  # only `power` needs it: slow to import

    probabilities: np.ndarray = stats.binom.pmf(np.arange(n + 1), n, p)
    return probabilities


@lru_cache(maxsize=4096)
def _mid_p_rejects(discordant: int, alpha: float) -> np.ndarray:
    """Which counts 0..d of pairs favouring B the mid-p test rejects at ``alpha``: with m the
    smaller of the two counts, mid-p = 2 P(K < m) + P(K = m), or 1 - P(K = m) / 2 at a tie."""
    fair = _binomial(discordant, 0.5)
    below = np.concatenate(([0.0], np.cumsum(fair)))  # below[m] = P(K < m)
    m = np.minimum(np.arange(discordant + 1), discordant - np.arange(discordant + 1))
    tie = 2 * m == discordant
    mid = np.where(tie, 1 - fair[m] / 2, 2 * below[m] + fair[m])
    rejects: np.ndarray = mid < alpha
    return rejects


def simulated_power(tasks: int, repeats: int, chances: Chances, alpha: float) -> float:
    """The paired test's rejection rate over simulated experiments of ``tasks`` tasks,
    ``repeats`` runs an arm a task; ``chances``: p_A, p_B, ICC, kappa."""
    p_a, p_b, icc, kappa = chances
    rng = np.random.default_rng(0)
    shape = (SIMULATIONS, tasks)
    if icc == 0:
        chance_a, chance_b = np.full(shape, p_a), np.full(shape, p_b)
    else:
        grid_a, grid_b, share = _quantiles(p_a, p_b, icc, kappa)
        own = rng.integers(0, GRID, shape)
        other = rng.integers(0, GRID, shape)
        chance_a = grid_a[own]
        chance_b = np.where(rng.random(shape) < share, grid_b[own], grid_b[other])
    a, b = rng.binomial(repeats, chance_a), rng.binomial(repeats, chance_b)
    runs = np.full(tasks, repeats)
    return float(np.mean([sign_flip_p(y, x, runs) < alpha for x, y in zip(a, b, strict=True)]))


@lru_cache(maxsize=256)
def _quantiles(
    p_a: float, p_b: float, icc: float, kappa: float
) -> tuple[np.ndarray, np.ndarray, float]:
    """Both arms' Beta quantiles on one grid, and the share of tasks whose B chance is A's
    quantile mapped, for Corr(P_A, P_B) = kappa (at most 1: a shared difficulty)."""
    from scipy import stats  # only where few tasks are simulated: slow to import

    size = 1 / icc - 1
    u = (np.arange(GRID) + 0.5) / GRID
    grid_a = stats.beta.ppf(u, p_a * size, (1 - p_a) * size)
    grid_b = stats.beta.ppf(u, p_b * size, (1 - p_b) * size)
    if not (grid_a.std() > 0 and grid_b.std() > 0):  # an arm always right or wrong
        return grid_a, grid_b, 0.0
    shared = float(np.corrcoef(grid_a, grid_b)[0, 1])
    return grid_a, grid_b, min(1.0, kappa / shared) if shared > 0 else 0.0
