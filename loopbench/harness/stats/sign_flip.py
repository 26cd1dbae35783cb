"""The one paired test: a sign-flip test on per-task differences, two-sided, with mid-p.

Two arms ran the same tasks; for each task t, d_t is the mean of arm B's paired runs of t
minus the mean of arm A's. Tasks are the unit: repeats of a task stay together, since
they are correlated samples of one task, never independent evidence. Under "no
difference" each d_t is as likely to be +|d_t| as -|d_t|, so the statistic S = sum of d_t
is referred to the distribution of sum of +-|d_t| over every choice of signs.

The p-value is two-sided with mid-p: P(|S*| > |S|) + P(|S*| = |S|) / 2. The mid-p corrects
the discreteness that makes the conventional p conservative with few tasks or many tied
differences (with one repeat this is McNemar's mid-p test); its false-alarm rate stays at
or below alpha over the grid in ``docs/statistics.md`` (``bench/paired_test.py``).

The distribution is exact while it is small to compute: each d_t times L, the least common
multiple of the tasks' run counts, is a whole number, and the sums of signed whole numbers
are convolved. Past ``EXACT_TASKS`` tasks with a difference (or an L too large), the
normal approximation with the permutation variance sum of d_t^2 is used: the permutation
distribution is symmetric, so the approximation's error falls as 1/N, and with that many
tasks it is well inside Monte Carlo error.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

#: Up to this many tasks with a non-zero difference the null distribution is exact.
EXACT_TASKS = 200
#: The largest lattice (2 * sum of |d_t| L, points) the exact distribution is built on.
EXACT_POINTS = 1_000_000


def task_differences(
    after: Sequence[int] | np.ndarray, before: Sequence[int] | np.ndarray, runs: np.ndarray
) -> np.ndarray:
    """Per task, (right runs of B - right runs of A) / paired runs: the d_t the test uses."""
    difference = np.asarray(after, dtype=float) - np.asarray(before, dtype=float)
    per_task: np.ndarray = difference / np.asarray(runs, dtype=float)
    return per_task


def sign_flip_p(
    after: Sequence[int] | np.ndarray,
    before: Sequence[int] | np.ndarray,
    runs: Sequence[int] | np.ndarray,
) -> float:
    """Two-sided mid-p of the sign-flip test: per task, the right runs of each arm among
    its ``runs`` paired runs (whole numbers). 1.0 when no task differs."""
    a = np.asarray(after, dtype=np.int64)
    b = np.asarray(before, dtype=np.int64)
    m = np.asarray(runs, dtype=np.int64)
    differs = (a != b) & (m > 0)
    a, b, m = a[differs], b[differs], m[differs]
    if not len(m):
        return 1.0
    lattice = _lcm(np.unique(m))
    if len(m) <= EXACT_TASKS and lattice is not None:
        # guard: unequal-repeats-tested-their-common
        steps = (a - b) * (lattice // m)  # d_t * L, exactly
        if 2 * int(np.abs(steps).sum()) + 1 <= EXACT_POINTS:
            return _exact(steps)
    return _normal(task_differences(a, b, m))


def _lcm(values: np.ndarray) -> int | None:
    """Their least common multiple; None past EXACT_POINTS (no lattice worth building)."""
    lcm = 1
    for value in values.tolist():
        lcm = lcm * value // math.gcd(lcm, value)
        if lcm > EXACT_POINTS:
            return None
    return lcm


def _exact(steps: np.ndarray) -> float:
    """Mid-p of |sum of steps| against every choice of signs, on the whole-number lattice."""
    sizes, counts = np.unique(np.abs(steps), return_counts=True)
    dist = _null(tuple(zip(sizes.tolist(), counts.tolist(), strict=True)))
    total = len(dist) // 2
    observed = abs(int(steps.sum()))
    beyond = dist[total + observed + 1 :].sum() + dist[: total - observed].sum()
    at = dist[total + observed] + (dist[total - observed] if observed else 0.0)
    # guard: paired-test-counts-tie-at
    return float(min(1.0, beyond + at / 2))


@lru_cache(maxsize=4096)
def _null(sizes: tuple[tuple[int, int], ...]) -> np.ndarray:
    """The distribution of the sum of signed steps, for (size, how many) pairs; index total
    is 0. Equal sizes are taken together: c signs of size k sum to k (2 B - c), B
    binomial(c, 1/2). Kept: many tables share one (a simulation's experiments do)."""
    dist = np.ones(1)
    for size, count in sizes:
        spread = np.zeros(2 * size * count + 1)
        spread[:: 2 * size] = _fair_binomial(count)
        dist = np.convolve(dist, spread)
    return dist


def _fair_binomial(count: int) -> np.ndarray:
    """P(B = 0..count) for B binomial(count, 1/2); count is at most EXACT_TASKS, so neither
    the binomial coefficients nor 2**-count leave the range of a float."""
    from scipy import special  # imported here: a table without a paired test needs no scipy

    pmf: np.ndarray = special.binom(count, np.arange(count + 1)) * 0.5**count
    return pmf


def _normal(d: np.ndarray) -> float:
    """S against N(0, sum of d_t^2), the permutation distribution's own variance."""
    # guard: past-exact-range-permutation
    z = abs(float(d.sum())) / math.sqrt(float((d * d).sum()))
    return min(1.0, math.erfc(z / math.sqrt(2)))
