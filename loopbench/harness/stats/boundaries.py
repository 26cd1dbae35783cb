"""Group-sequential boundaries for ``run --until-separated``: when a look may call two arms
different, and when a difference worth finding is no longer likely.

**Efficacy.** The run looks after every round, at the information fraction t = round /
max rounds. Alpha is spent over the looks by a Lan-DeMets spending function, alpha(t):

- ``pocock`` (the default): alpha ln(1 + (e - 1) t), spread nearly evenly, so a real gap
  stops early (the fewest runs on average when there is a gap);
- ``obrien-fleming``: 2 - 2 Phi(z_{1-alpha/2} / sqrt(t)), little early, nearly all of
  alpha at the last look.

The look's two-sided bound c_k on the paired test's z is the one at which the chance of a
first crossing at look k, for identical arms, is alpha(t_k) - alpha(t_{k-1}). The z of
look k behaves as a Brownian motion at time t_k over sqrt(t_k) (independent increments),
so the chances are found by numerical integration of that motion's density over the
looks not yet stopped (Armitage, McPherson and Rowe's recursion). The alpha spent over
the looks sums to alpha. The bounds are computed as if nothing else stops a run, so the
futility stops below only lower the false alarms (a non-binding futility boundary).

The calendar fraction round / max rounds is the true information fraction when repeats
carry all the information; when tasks differ in a way the arms do not share, early rounds
carry more than their share, the looks' z are more correlated than assumed, and the
chance of a false alarm is lower still.

**Futility** (non-binding), by default on two likelihoods (``likelihood-two-gaps``): a
look stops an arm once no difference is clearly likelier than a gap a little above the
margin, in either direction, and far likelier than a gap of twice the margin. With eta =
margin / SE, the z a gap of the margin would give at this look, it stops when

    |z| < min(FUTILITY_SLOPE eta - FUTILITY_OFFSET / eta, eta - FAR_LOG_RATIO / (2 eta))

The first term: the likelihood of no difference is at least exp(FUTILITY_OFFSET *
FUTILITY_SLOPE * 2) (about 7) times that of a gap of 2 FUTILITY_SLOPE (1.2) margins, both
ways (the acceptance boundary of Wald's sequential probability ratio test, for each
direction). The second: it is at least exp(FAR_LOG_RATIO) (about 22,000) times that of a
gap of twice the margin. That ratio is a martingale under such a gap, so (Ville's
inequality) a gap of twice the margin or more is given up on at some look with a chance
of at most exp(-FAR_LOG_RATIO), 0.0045% (on normal paths), about what a fixed design of
80% power at the margin misses it by (0.004-0.017% over 200 to 50 tasks). Without it, the
first term alone (``likelihood``, the rule of folders run before this one) stopped 0.2% of
runs on a gap of twice the margin at 50 tasks, in the first looks where it rose above zero.

Futility is checked from the first round; early on eta is small and the bound below zero,
so it waits for evidence by itself. FUTILITY_SLOPE and FUTILITY_OFFSET were chosen on
simulated runs (``bench/stopping.py``, docs/power.md): the fewest runs on average, for
identical arms and for a gap of the margin together, at the power of the fixed design;
FAR_LOG_RATIO for misses at twice the margin no more often than the fixed design's.

The earlier futility boundary (``conditional-power``, the rule of folders run before the
likelihood one), at look k, the conditional power: the chance the last look
would find a difference if the true one were the margin (the smallest gap worth finding),
or the gap seen when that is larger, in the direction seen, given the z seen so far. With
B = z sqrt(t) and eta the z expected at the last look under that gap (the gap over the
standard error the look's pairs give, times sqrt(1 / t)):

    CP = P(|B + N(eta (1 - t), 1 - t)| >= c_K)

A run whose conditional power falls below ``FUTILITY`` stops, from ``FUTILITY_FROM`` of
the rounds on: a gap worth finding is no longer likely to be found.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from statistics import NormalDist
from typing import Literal

import numpy as np

Spending = Literal["pocock", "obrien-fleming"]
SPENDINGS: tuple[Spending, ...] = ("pocock", "obrien-fleming")

#: Conditional power under the margin below which a look stops for futility
#: (``conditional-power`` futility).
FUTILITY = 0.2
#: The likelihood futility boundary: |z| < FUTILITY_SLOPE eta - FUTILITY_OFFSET / eta.
FUTILITY_SLOPE = 0.6
FUTILITY_OFFSET = 1.6
#: ``likelihood-two-gaps`` also needs no difference to be exp(FAR_LOG_RATIO) times likelier
#: than a gap of FAR_GAP margins: |z| < (FAR_GAP / 2) eta - FAR_LOG_RATIO / (FAR_GAP eta).
FAR_GAP = 2.0
FAR_LOG_RATIO = 10.0
#: Futility is checked from this share of the rounds on: the first rounds' gap is too
#: noisy to give up on (a 30-point gap on 12 tasks can look like none after one round).
FUTILITY_FROM = 0.3
#: Grid points per standard deviation of one look's increment in the numerical integration.
_STEPS_PER_SD = 16
#: How far out the grid reaches, in standard deviations of the motion at the last look.
_REACH = 7.0
#: The most grid points (many looks: a finer step than the increments need).
_MOST_POINTS = 1601

_NORMAL = NormalDist()


def spent(alpha: float, fraction: float, spending: Spending) -> float:
    """The alpha spent by information fraction ``fraction`` (0 to 1)."""
    if fraction <= 0:
        return 0.0
    fraction = min(fraction, 1.0)
    if spending == "pocock":
        return alpha * math.log(1 + (math.e - 1) * fraction)
    from scipy import special

    z = -float(special.ndtri(alpha / 2))
    return 2 * float(special.ndtr(-z / math.sqrt(fraction)))


def _tail(x: np.ndarray, bound: float, sd: float) -> np.ndarray:
    """P(|x + N(0, sd^2)| >= bound) for each x."""
    from scipy import special

    upper = special.ndtr((x - bound) / sd)
    lower = special.ndtr((-bound - x) / sd)
    tails: np.ndarray = upper + lower
    return tails


@lru_cache(maxsize=64)
def efficacy_bounds(alpha: float, looks: int, spending: Spending) -> tuple[float, ...]:
    """The two-sided z bound of each of ``looks`` equally spaced looks."""
    fractions = [(k + 1) / looks for k in range(looks)]
    bounds: list[float] = []
    # The motion W(t) = z sqrt(t) on a grid, with its density among runs not yet stopped.
    half = min(int(_REACH * _STEPS_PER_SD * math.sqrt(looks)), _MOST_POINTS // 2)
    step = _REACH / half
    grid = np.arange(-half, half + 1) * step
    increment = math.sqrt(1 / looks)
    kernel = np.exp(-0.5 * ((grid[:, None] - grid[None, :]) / increment) ** 2)
    density: np.ndarray | None = None
    previous_t = 0.0
    for t in fractions:
        # guard: each-look-spends-its-increment
        target = spent(alpha, t, spending) - spent(alpha, previous_t, spending)
        sd = math.sqrt(t - previous_t)
        if density is None:
            bound = _first(target)
            new = np.exp(-0.5 * grid**2 / t) / math.sqrt(2 * math.pi * t)
        else:
            weights = density * step
            bound = _solve(_crossing(grid, weights, t, sd), target)
            new = kernel @ weights / (sd * math.sqrt(2 * math.pi))
        bounds.append(bound)
        density = np.where(np.abs(grid) < bound * math.sqrt(t), new, 0.0)
        previous_t = t
    return tuple(bounds)


def _crossing(
    grid: np.ndarray, weights: np.ndarray, t: float, sd: float
) -> Callable[[float], float]:
    """The chance of a first crossing of bound c at time ``t``, from the motion's weights
    at the look before, an increment of ``sd`` away."""

    def chance(c: float) -> float:
        return float(weights @ _tail(grid, c * math.sqrt(t), sd))

    return chance


def _first(target: float) -> float:
    """The first look's bound: the z with two-sided tail ``target``."""
    from scipy import special

    return math.inf if target <= 0 else -float(special.ndtri(target / 2))


def _solve(crossing: Callable[[float], float], target: float) -> float:
    """The bound c whose chance of a first crossing is ``target`` (bisection: the chance
    falls as c rises)."""
    if target <= 0:
        return math.inf
    low, high = 0.0, 12.0
    for _ in range(60):
        middle = (low + high) / 2
        if crossing(middle) > target:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def nominal_alpha(bound: float) -> float:
    """The two-sided p-value at which a look's z reaches ``bound``."""
    from scipy import special

    return 2 * float(special.ndtr(-bound))


def conditional_power(z: float, fraction: float, final_bound: float, drift: float) -> float:
    """The chance the last look crosses ``final_bound`` given the z at ``fraction``, if the
    z expected at the last look is ``drift`` (signed: the direction of the margin)."""
    if fraction >= 1:
        return float(abs(z) >= final_bound)
    left = 1 - fraction
    b = z * math.sqrt(fraction)
    sd = math.sqrt(left)
    mean = b + drift * left
    return (1 - _NORMAL.cdf((final_bound - mean) / sd)) + _NORMAL.cdf((-final_bound - mean) / sd)


def futility_bound(eta: float, far: bool = False) -> float:
    """The |z| below which a look stops for futility on the likelihood, when a gap of the
    margin would give a z of ``eta`` at this look (negative early: no stop); with ``far``,
    also no higher than where a gap of FAR_GAP margins is exp(FAR_LOG_RATIO) times less
    likely than none (``likelihood-two-gaps``)."""
    if eta <= 0:  # a margin of none: no gap to give up on
        return -math.inf
    near = FUTILITY_SLOPE * eta - FUTILITY_OFFSET / eta
    # guard: futility-spares-twice-the-margin
    if far:
        return min(near, FAR_GAP / 2 * eta - FAR_LOG_RATIO / (FAR_GAP * eta))
    return near
