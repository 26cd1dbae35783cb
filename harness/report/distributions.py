"""Student's t by quadrature: its quantiles, and the noncentral t's tail beyond a critical
value. Numpy only: scipy would take longer to import than a table takes to print.

The t distribution of T = Z / S, S = sqrt(V / df) with V chi-square(df), is an average of
normals over S; the average is a trapezoid rule in log V (``_chi_nodes``), where the
density is smooth and falls off fast both ways. The tests hold both to scipy's.
"""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist

import numpy as np

#: Quadrature points over log chi-square.
NODES = 1200
#: Numerical Recipes' erfcc: erfc(z) = t exp(-z^2 + poly(t)), t = 1 / (1 + z/2), to 1.2e-7.
_ERFC = (
    -1.26551223,
    1.00002368,
    0.37409196,
    0.09678418,
    -0.18628806,
    0.27886807,
    -1.13520398,
    1.48851587,
    -0.82215223,
    0.17087277,
)


def normal_quantile(q: float) -> float:
    return NormalDist().inv_cdf(q)


def _phi(x: np.ndarray) -> np.ndarray:
    """The standard normal distribution function, elementwise."""
    z = np.abs(x) / math.sqrt(2)
    t = 1 / (1 + 0.5 * z)
    poly = np.zeros_like(z)
    for coefficient in reversed(_ERFC):
        poly = coefficient + t * poly
    tail = 0.5 * t * np.exp(-z * z + poly)
    phi: np.ndarray = np.where(x >= 0, 1 - tail, tail)
    return phi


@lru_cache(maxsize=512)
def _chi_nodes(df: int) -> tuple[np.ndarray, np.ndarray]:
    """Points s = sqrt(V / df), V ~ chi-square(df), and weights with E[g(s)] = weights @ g(s)."""
    centre, spread = math.log(df), math.sqrt(2 / df)
    log_v = np.linspace(
        centre - 12 * spread - 50 / df, math.log(df + 15 * math.sqrt(2 * df) + 60), NODES
    )
    density = np.exp(df / 2 * (log_v - math.log(2)) - np.exp(log_v) / 2 - math.lgamma(df / 2))
    return np.sqrt(np.exp(log_v) / df), density / density.sum()


@lru_cache(maxsize=4096)
def t_quantile(q: float, df: int) -> float:
    """The q quantile (q >= 0.5) of Student's t with ``df`` degrees of freedom."""
    s, w = _chi_nodes(df)

    def cdf(x: float) -> float:
        return float(w @ _phi(x * s))

    lo, hi = 0.0, normal_quantile(q) + 1
    while cdf(hi) < q and hi < 1e12:
        lo, hi = hi, hi * 2
    while hi - lo > 1e-12 * hi:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < q else (lo, mid)
    return (lo + hi) / 2


def beyond(noncentrality: float, df: int, critical: float) -> float:
    """P(|T| > critical) for T noncentral t(df, noncentrality)."""
    s, w = _chi_nodes(df)
    return float(w @ (_phi(noncentrality - critical * s) + _phi(-noncentrality - critical * s)))


def t_power(noncentrality: float, df: int, alpha: float) -> float:
    """P(|T| > t_{1 - alpha/2, df}) for T noncentral t(df, noncentrality): the power of the
    two-sided t test."""
    return beyond(noncentrality, df, t_quantile(1 - alpha / 2, df))
