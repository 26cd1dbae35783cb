"""The distributions the intervals and ``power`` use: the normal and Student's t quantiles,
and the noncentral t's two tails beyond a critical value.

The normal quantile is the standard library's (``statistics.NormalDist``, to double
precision), and so is the t quantile's arithmetic (``t_quantile``), so a table imports no
scipy: ``scipy.special`` takes about 0.2 s to import (``scipy.stats`` about 1 s). The
noncentral t is ``scipy.special``'s, imported on first use, by ``power``.
"""

from __future__ import annotations

import math
from statistics import NormalDist

#: Degrees of freedom from which the t quantile is its expansion about the normal's alone:
#: it and scipy agree to 3e-13 there, and nearer as df grows.
_EXPANDED_FROM = 1000


def normal_quantile(q: float) -> float:
    return NormalDist().inv_cdf(q)


def t_quantile(q: float, df: int) -> float:
    """The q quantile of Student's t with ``df`` (whole) degrees of freedom, to double
    precision: the expansion about the normal quantile (Abramowitz and Stegun 26.7.5),
    refined by Newton's method on the exact distribution function below ``_EXPANDED_FROM``
    degrees of freedom."""
    if not 0.0 < q < 1.0:
        return math.nan if not 0.0 <= q <= 1.0 else math.copysign(math.inf, q - 0.5)
    if q < 0.5:
        return -t_quantile(1.0 - q, df)
    if q == 0.5:
        return 0.0
    if df == 1:
        return math.tan(math.pi * (q - 0.5))
    if df == 2:
        return (2 * q - 1) / math.sqrt(2 * q * (1 - q))
    t = _expanded(normal_quantile(q), df)
    if df >= _EXPANDED_FROM:
        return t
    inside = 2 * q - 1  # P(|T| < t)
    for _ in range(100):
        step = (_inside(t, df) - inside) / (2 * _density(t, df))
        t -= step
        if abs(step) <= 1e-15 * abs(t):
            break
    return t


def _expanded(z: float, df: int) -> float:
    """The t quantile's expansion in 1/df about the normal quantile ``z`` (A&S 26.7.5)."""
    z2 = z * z
    terms = (
        (z2 + 1) / 4,
        ((5 * z2 + 16) * z2 + 3) / 96,
        (((3 * z2 + 19) * z2 + 17) * z2 - 15) / 384,
        ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) / 92160,
    )
    return z * (1 + math.fsum(term / float(df) ** (n + 1) for n, term in enumerate(terms)))


def _inside(t: float, df: int) -> float:
    """P(|T| < t) for Student's t of whole ``df`` degrees of freedom, t > 0: the finite sums
    of A&S 26.7.3 and 26.7.4 (every term positive)."""
    theta = math.atan(t / math.sqrt(df))
    cos2 = math.cos(theta) ** 2
    if df % 2:  # odd
        term = total = 1.0
        for k in range(1, (df - 1) // 2):
            term *= cos2 * (2 * k) / (2 * k + 1)
            total += term
        series = math.sin(theta) * math.cos(theta) * total if df > 1 else 0.0
        return 2 / math.pi * (theta + series)
    term = total = 1.0
    for k in range(1, df // 2):
        term *= cos2 * (2 * k - 1) / (2 * k)
        total += term
    return math.sin(theta) * total


def _density(t: float, df: int) -> float:
    """Student's t density at t."""
    log = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return math.exp(log - (df + 1) / 2 * math.log1p(t * t / df))


def beyond(noncentrality: float, df: int, critical: float) -> float:
    """P(|T| > critical) for T noncentral t(df, noncentrality).

    scipy's noncentral t is nan far in a tail (at 999 degrees of freedom and a shift of 7.3,
    P(T < -3.3)): there, T's normal approximation N(shift, 1 + shift^2 / (2 df)) stands in,
    whose error that far out is below any power worth printing."""
    from scipy import special

    below = special.nctdtr(df, noncentrality, [-critical, critical])
    tails = [float(below[0]), 1 - float(below[1])]
    # guard: noncentral-t-nan-tail-approximated
    if not all(math.isfinite(tail) for tail in tails):
        spread = math.sqrt(1 + noncentrality**2 / (2 * df))
        normal = NormalDist(noncentrality, spread)
        approximate = [normal.cdf(-critical), 1 - normal.cdf(critical)]
        tails = [t if math.isfinite(t) else a for t, a in zip(tails, approximate, strict=True)]
    return min(1.0, max(0.0, tails[0] + tails[1]))


def t_power(noncentrality: float, df: int, alpha: float) -> float:
    """P(|T| > t_{1 - alpha/2, df}) for T noncentral t(df, noncentrality): the power of the
    two-sided t test."""
    return beyond(noncentrality, df, t_quantile(1 - alpha / 2, df))
