"""Power of a paired comparison of two arms, before a run: how many tasks a decision needs.

The design: arms A and B run on the same N tasks, R repeats each, and each run is right
or wrong. A is right with probability p_A (the baseline), B with p_B = p_A + delta. The
analysis is loopbench's own (``stats.paired_difference``): per task the mean difference
d_t = mean(B's runs of t) - mean(A's runs of t), repeats of a task kept together, the
tasks the unit, tested two-sided at alpha. Its power here is that of the one-sample t
test on the N values d_t. (loopbench's by-task p is a sign-flip test on the same d_t,
more conservative with few tasks or many tied ones: its power is lower; docs/power.md.)

The model. Task t has a success probability per arm, P_A,t and P_B,t, with means p_A
and p_B; runs are independent given their task. With v = p(1 - p):

- the ICC rho is the share of a run's variance that lies between tasks:
  Var(P_A,t) = rho v_A and Var(P_B,t) = rho v_B, the same rho for both arms;
- the arm correlation kappa = Corr(P_A,t, P_B,t): 1 when the arms share the task's
  difficulty ("shared", the exchangeable model: one correlation rho between any two
  runs of a task, of either arm), 0 when a task's difficulty for one arm says nothing
  of the other ("independent").

A mean of R runs given the task has variance P(1 - P)/R, and E[P(1 - P)] = v - Var(P)
= (1 - rho) v; runs of the two arms are independent given the task, so

    Var(mean_A,t)              = rho v_A + (1 - rho) v_A / R = v_A (rho + (1 - rho)/R)
    Cov(mean_A,t, mean_B,t)    = Cov(P_A,t, P_B,t) = kappa rho sqrt(v_A v_B)
    Var(d_t) = (v_A + v_B)(rho + (1 - rho)/R) - 2 kappa rho sqrt(v_A v_B)
             = rho (v_A + v_B - 2 kappa sqrt(v_A v_B))    between tasks: repeats leave it
             + (1 - rho)(v_A + v_B) / R                   run to run: repeats average it out

With kappa = 1 the first term is rho (sqrt(v_A) - sqrt(v_B))^2, nearly zero: a shared
task difficulty cancels in the difference, and repeats cut the noise almost as well as
tasks do. Only when the arms' task effects differ (kappa < 1) is there a floor that no
number of repeats removes.

Power: with sigma^2 = Var(d_t), t = mean(d) / (sd(d) / sqrt(N)) follows a noncentral t
with N - 1 degrees of freedom and noncentrality delta sqrt(N) / sigma, and the power is
P(|t| > t_{1 - alpha/2, N-1}). The t distributions are computed here by quadrature over
the chi-square of the sample variance (no scipy at run time); the tests check them
against scipy and the whole formula against simulated runs (``bench/power_check.py``),
which it matches within about 0.04 from max(MIN_TASKS, RELIABLE * rho^2) tasks.

What a finished run says of its own design is estimated in ``harness.report.power_estimate``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist

import numpy as np

SHARED = 1.0
INDEPENDENT = 0.0
#: Repeats always shown beside the ones asked for; inf: repeats without end.
REPEATS_SHOWN: tuple[float, ...] = (1, 3, 5, 10, math.inf)
#: Beyond this many tasks, "tasks needed" is reported as out of reach.
MAX_TASKS = 10**9
#: Simulation backs the formula (within about 0.04 of the simulated power under both
#: models of bench/power_check.py) from this many tasks, and from RELIABLE * ICC^2 tasks.
#: Below, power depends on how difficulty is spread over the tasks, which the ICC alone
#: does not say: the two models, alike in accuracies and ICC, part by up to 0.6 at 10 tasks.
MIN_TASKS = 10
RELIABLE = 500
#: Quadrature points over log chi-square; the tests hold the t distributions to scipy's.
NODES = 1200


class PowerError(ValueError):
    """Inputs a power analysis cannot use (exit code 2)."""


def difference_variance(
    p_a: float, p_b: float, repeats: float, icc: float, arm_correlation: float = SHARED
) -> float:
    """Var(d_t): the variance of one task's mean difference over ``repeats`` runs an arm."""
    v_a, v_b = p_a * (1 - p_a), p_b * (1 - p_b)
    between = icc * (v_a + v_b - 2 * arm_correlation * math.sqrt(v_a * v_b))
    return max(0.0, between + (1 - icc) * (v_a + v_b) / repeats)


def reliable_from(icc: float) -> int:
    """The fewest tasks for which simulation backs the formula at this ICC."""
    return max(MIN_TASKS, math.ceil(RELIABLE * icc**2 - 1e-9))


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
    """Points s = sqrt(V / df), V ~ chi-square(df), and weights with E[g(s)] = weights @ g(s):
    the trapezoid rule in log V, where the density is smooth and falls off fast both ways."""
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

    lo, hi = 0.0, NormalDist().inv_cdf(q) + 1
    while cdf(hi) < q and hi < 1e12:
        lo, hi = hi, hi * 2
    while hi - lo > 1e-12 * hi:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < q else (lo, mid)
    return (lo + hi) / 2


def t_power(noncentrality: float, df: int, alpha: float) -> float:
    """P(|T| > t_{1 - alpha/2, df}) for T noncentral t(df, noncentrality)."""
    critical = t_quantile(1 - alpha / 2, df)
    s, w = _chi_nodes(df)
    return float(w @ (_phi(noncentrality - critical * s) + _phi(-noncentrality - critical * s)))


def paired_power(tasks: int, sd: float, delta: float, alpha: float) -> float:
    """Power of the paired test on ``tasks`` per-task differences of mean ``delta``, sd ``sd``."""
    if sd <= 0:
        return 1.0
    return t_power(abs(delta) * math.sqrt(tasks) / sd, tasks - 1, alpha)


def tasks_needed(sd: float, delta: float, alpha: float, power: float) -> int | None:
    """The fewest tasks (at least 2) whose paired test has ``power``; None past MAX_TASKS."""
    enough = 2
    while paired_power(enough, sd, delta, alpha) < power:
        if enough >= MAX_TASKS:
            return None
        enough = min(enough * 2, MAX_TASKS)
    short = max(1, enough // 2)  # short of the power (or 1: below the smallest design)
    while enough - short > 1:
        mid = (short + enough) // 2
        short, enough = (
            (mid, enough) if paired_power(mid, sd, delta, alpha) < power else (short, mid)
        )
    return enough


def detectable_shift(tasks: int, alpha: float, power: float) -> float:
    """The noncentrality at which the paired test on ``tasks`` tasks has ``power``: the
    smallest detectable mean difference is this times sd / sqrt(tasks)."""
    lo, hi = 0.0, 1.0
    while t_power(hi, tasks - 1, alpha) < power:
        lo, hi = hi, hi * 2
    while hi - lo > 1e-9:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_power(mid, tasks - 1, alpha) < power else (lo, mid)
    return hi


@dataclass(frozen=True)
class Design:
    """Two arms on the same tasks: arm B is right ``delta`` more often than arm A."""

    baseline: float
    delta: float
    repeats: int
    icc: float
    arm_correlation: float = SHARED
    alpha: float = 0.05
    power: float = 0.8

    @property
    def arm_b(self) -> float:
        return self.baseline + self.delta

    def sd(self, repeats: float | None = None) -> float:
        """sd of one task's mean difference, at these repeats (the design's by default)."""
        runs = self.repeats if repeats is None else repeats
        variance = difference_variance(
            self.baseline, self.arm_b, runs, self.icc, self.arm_correlation
        )
        return math.sqrt(variance)

    def check(self) -> None:
        """Refuse what the model cannot take, saying which value and why."""
        if not 0 < self.baseline < 1:
            raise PowerError(
                f"a baseline accuracy of {self.baseline:g} is outside (0, 1); give arm A's "
                "accuracy as a share, e.g. --baseline 0.56"
            )
        if self.delta == 0:
            raise PowerError(
                "--delta 0: no number of tasks detects no difference; give the smallest "
                "difference worth detecting, e.g. --delta 0.10"
            )
        if not 0 < self.arm_b < 1:
            raise PowerError(
                f"baseline {self.baseline:g} with delta {self.delta:+g} puts arm B at "
                f"{self.arm_b:g}, outside (0, 1); baseline + delta must be an accuracy"
            )
        if not 0 <= self.icc <= 1:
            raise PowerError(f"an ICC of {self.icc:g} is outside [0, 1]")
        if not 0 <= self.arm_correlation <= 1:
            raise PowerError(f"an arm correlation of {self.arm_correlation:g} is outside [0, 1]")
        if not 0 < self.alpha < self.power < 1:
            raise PowerError(
                f"power {self.power:g} is not above alpha {self.alpha:g} (both in (0, 1)): "
                "any design has that much"
            )


@dataclass(frozen=True)
class Row:
    """One line of the table: the design at one number of repeats."""

    repeats: float
    """math.inf: repeats without end, only the differences between tasks left."""
    sd: float
    tasks_needed: int | None
    """For the design's power; None past MAX_TASKS."""
    power: float | None
    """With the tasks asked about; None when none were."""


def plan(design: Design, tasks: int | None = None) -> list[Row]:
    """The design's repeats and REPEATS_SHOWN, each with the tasks it needs (and the power
    of ``tasks`` tasks, when given). The design's own repeats come first."""
    design.check()
    if tasks is not None and tasks < 2:
        raise PowerError(f"{tasks} task(s): a paired test needs at least 2")
    rows = []
    for repeats in dict.fromkeys((design.repeats, *sorted({design.repeats, *REPEATS_SHOWN}))):
        sd = design.sd(repeats)
        rows.append(
            Row(
                repeats,
                sd,
                tasks_needed(sd, design.delta, design.alpha, design.power),
                None if tasks is None else paired_power(tasks, sd, design.delta, design.alpha),
            )
        )
    return rows


def smallest_detectable(design: Design, tasks: int) -> float | None:
    """The smallest rise over the baseline that ``tasks`` tasks detect with the design's
    power (its delta is ignored); None when not even arm B at 100% would be."""
    if tasks < 2:
        return None

    def power_at(delta: float) -> float:
        shifted = Design(design.baseline, delta, design.repeats, design.icc, design.arm_correlation)
        return paired_power(tasks, shifted.sd(), delta, design.alpha)

    lo, hi = 0.0, 1 - design.baseline
    if power_at(hi * (1 - 1e-9)) < design.power:
        return None
    while hi - lo > 1e-7:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if power_at(mid) < design.power else (lo, mid)
    return hi
