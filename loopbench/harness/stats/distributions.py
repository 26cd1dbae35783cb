"""The distributions the intervals and ``power`` use: the normal and Student's t quantiles,
and the noncentral t's two tails beyond a critical value.

The normal quantile is the standard library's (``statistics.NormalDist``, to double
precision), so a table without repeats imports no scipy. The t functions are
``scipy.special``'s, imported on first use: ``scipy.special`` takes about 0.2 s to import
(``scipy.stats`` about 1 s), paid only by a table whose intervals need a t quantile and by
``power``.
"""

from __future__ import annotations

import math
from statistics import NormalDist


def normal_quantile(q: float) -> float:
    return NormalDist().inv_cdf(q)


def t_quantile(q: float, df: int) -> float:
    """The q quantile of Student's t with ``df`` degrees of freedom."""
    from scipy import special

    return float(special.stdtrit(df, q))


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
