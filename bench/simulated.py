"""Simulated tasks for the statistics benches: each task's chance of a right run drawn from a
known distribution, runs of a task correlated through it.

A task's chance P is Beta distributed with mean ``mean`` and intraclass correlation ``icc``
(for right-or-wrong runs with chance P, the ICC is Var(P) / (mean (1 - mean)), which for
Beta(a, b) is 1 / (a + b + 1)); ``icc`` 0 is every task alike. Two arms on the same tasks
are tied by the arm correlation ``kappa`` = Corr(P_A, P_B):

- ``comonotone``: B's chance is A's quantile mapped onto B's Beta (a shared difficulty),
  taken with probability k, and an independent draw otherwise; k is set so that the
  correlation of the two chances is ``kappa`` (computed on a fine quantile grid);
- ``logit``: a random task effect on the logit scale for each arm, the two normal effects
  correlated; means, spread and correlation solved by Gauss-Hermite quadrature for the
  accuracies, the pooled ICC and ``kappa`` asked.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache

import numpy as np
from scipy import stats

#: Gauss-Hermite points and weights for expectations over a standard normal.
_Z, _W = np.polynomial.hermite_e.hermegauss(60)
_W = _W / _W.sum()
_U = (np.arange(20_000) + 0.5) / 20_000  # a quantile grid


def beta_shape(mean: float, icc: float) -> tuple[float, float]:
    size = 1 / icc - 1
    return mean * size, (1 - mean) * size


def task_chances(
    mean: float, icc: float, shape: tuple[int, ...], rng: np.random.Generator
) -> np.ndarray:
    if icc == 0:
        return np.full(shape, mean)
    return rng.beta(*beta_shape(mean, icc), size=shape)


@cache
def _comonotone_correlation(p_a: float, p_b: float, icc: float) -> float:
    qa = stats.beta.ppf(_U, *beta_shape(p_a, icc))
    qb = stats.beta.ppf(_U, *beta_shape(p_b, icc))
    return float(np.corrcoef(qa, qb)[0, 1])


def paired_chances(
    model: str,
    p_a: float,
    p_b: float,
    icc: float,
    kappa: float,
    shape: tuple[int, ...],
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Both arms' chances per task, (sims, tasks) each."""
    if icc == 0:
        return np.full(shape, p_a), np.full(shape, p_b)
    if model == "comonotone":
        share = min(1.0, kappa / _comonotone_correlation(p_a, p_b, icc))
        a = rng.beta(*beta_shape(p_a, icc), size=shape)
        mapped = stats.beta.ppf(stats.beta.cdf(a, *beta_shape(p_a, icc)), *beta_shape(p_b, icc))
        fresh = rng.beta(*beta_shape(p_b, icc), size=shape)
        return a, np.where(rng.random(shape) < share, mapped, fresh)
    mu_a, mu_b, tau, r = logit_parameters(p_a, p_b, icc, kappa)
    u = rng.normal(size=shape)
    v = r * u + math.sqrt(max(0.0, 1 - r * r)) * rng.normal(size=shape)
    return _expit(mu_a + tau * u), _expit(mu_b + tau * v)


def _expit(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _root(f: Callable[[float], float], lo: float, hi: float) -> float:
    """The root of an increasing function on [lo, hi], by bisection."""
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
    return (lo + hi) / 2


def _location(p: float, tau: float) -> float:
    return _root(lambda mu: float(_W @ _expit(mu + tau * _Z)) - p, -40, 40)


@cache
def logit_parameters(p_a: float, p_b: float, icc: float, kappa: float) -> tuple[float, ...]:
    """mu_A, mu_B, tau and the effects' correlation r giving the accuracies, the pooled ICC
    (Var P_A + Var P_B) / (v_A + v_B) and Corr(P_A, P_B) = kappa."""

    def pooled_icc(tau: float) -> float:
        between = sum(
            float(_W @ _expit(_location(p, tau) + tau * _Z) ** 2) - p * p for p in (p_a, p_b)
        )
        return between / (p_a * (1 - p_a) + p_b * (1 - p_b))

    tau = _root(lambda t: pooled_icc(t) - icc, 0, 30)
    mu_a, mu_b = _location(p_a, tau), _location(p_b, tau)
    pa, pb = _expit(mu_a + tau * _Z), _expit(mu_b + tau * _Z)
    sd_a = math.sqrt(float(_W @ pa**2) - p_a**2)
    sd_b = math.sqrt(float(_W @ pb**2) - p_b**2)

    def correlation(r: float) -> float:
        v = r * _Z[:, None] + math.sqrt(max(0.0, 1 - r * r)) * _Z[None, :]
        joint = _W[:, None] * _W[None, :] * pa[:, None] * _expit(mu_b + tau * v)
        return (float(joint.sum()) - p_a * p_b) / (sd_a * sd_b)

    r = _root(lambda x: correlation(x) - kappa, -1, 1) if kappa < correlation(1.0) else 1.0
    return mu_a, mu_b, tau, r
