"""Power of a paired comparison of two arms, before a run: how many tasks a decision needs.

The design: arms A and B run on the same N tasks, R repeats each, and each run is right
or wrong. A is right with probability p_A (the baseline), B with p_B = p_A + delta. The
test is loopbench's one paired test (``loopbench.harness.stats.sign_flip``, which compare, table
--vs and --until-separated use): per task the mean difference d_t = mean(B's runs of t) -
mean(A's runs of t), repeats of a task kept together, signs flipped, two-sided with mid-p.

The model. Task t has a success probability per arm, P_A,t and P_B,t, with means p_A
and p_B; runs are independent given their task. With v = p(1 - p):

- the ICC rho is the share of a run's variance that lies between tasks:
  Var(P_A,t) = rho v_A and Var(P_B,t) = rho v_B, the same rho for both arms;
- the arm correlation kappa = Corr(P_A,t, P_B,t): 1 when the arms share the task's
  difficulty ("shared"), 0 when a task's difficulty for one arm says nothing of the
  other ("independent"). Unless a finished run estimates it, CONSERVATIVE is assumed.

A mean of R runs given the task has variance P(1 - P)/R, and E[P(1 - P)] = v - Var(P)
= (1 - rho) v; runs of the two arms are independent given the task, so

    Var(d_t) = rho (v_A + v_B - 2 kappa sqrt(v_A v_B))    between tasks: repeats leave it
             + (1 - rho)(v_A + v_B) / R                   run to run: repeats average it out

Power, three ways (``design_power``), each checked against simulated runs of the test
(``bench/power_check.py``):

- one run a task: exact. Each task's pair of runs disagrees one way with chance
  p_A - E[P_A P_B], the other with p_B - E[P_A P_B], E[P_A P_B] = p_A p_B + kappa rho
  sqrt(v_A v_B), and the test is McNemar's mid-p (``loopbench.harness.report.power_exact``);
- repeats and fewer than NORMAL_FROM tasks: simulated, with Beta-distributed chances
  (``loopbench.harness.report.power_exact``): here power depends on how difficulty is spread over
  the tasks, which rho and kappa do not fix, and normal theory misses by 10 points or more;
- otherwise normal theory: sign flips reject when |S| > z sqrt(sum d_t^2), that is when
  the one-sample t statistic exceeds ``critical_t``, and t is noncentral t with N - 1
  degrees of freedom and noncentrality delta sqrt(N) / sqrt(Var(d_t)) (scipy's,
  ``loopbench.harness.stats.distributions``).

What a finished run says of its own design is estimated in
``loopbench.harness.report.power_estimate``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from loopbench.harness.errors import BadInput
from loopbench.harness.report.power_exact import EXACT_UP_TO, one_run_power, simulated_power
from loopbench.harness.stats.distributions import beyond, normal_quantile

SHARED = 1.0
INDEPENDENT = 0.0
#: Repeats always shown beside the ones asked for; inf: repeats without end.
REPEATS_SHOWN: tuple[float, ...] = (1, 3, 5, 10, math.inf)
#: Beyond this many tasks, "tasks needed" is reported as out of reach.
MAX_TASKS = 10**9
#: The most repeats a design takes: beyond, the row of repeats without end says it.
MAX_REPEATS = 10**6
#: From this many tasks normal theory gives the paired test's power within 3 points of
#: simulated runs (bench/power_check.py); below, with repeats, it can miss by 10 or more,
#: and the power is simulated.
NORMAL_FROM = 100
#: Assumed when no run says otherwise: arms on one model usually share more of a task's
#: difficulty than this, and a lower kappa needs more tasks, so plans err on the safe side.
CONSERVATIVE = 0.5


class PowerError(BadInput):
    """Inputs a power analysis cannot use (exit code 2)."""


def difference_variance(
    p_a: float, p_b: float, repeats: float, icc: float, arm_correlation: float = SHARED
) -> float:
    """Var(d_t): the variance of one task's mean difference over ``repeats`` runs an arm."""
    v_a, v_b = p_a * (1 - p_a), p_b * (1 - p_b)
    arm_correlation = min(arm_correlation, feasible_correlation(p_a, p_b, icc))
    # guard: arms-shared-difficulty-cancels
    between = icc * (v_a + v_b - 2 * arm_correlation * math.sqrt(v_a * v_b))
    return max(0.0, between + (1 - icc) * (v_a + v_b) / repeats)


def feasible_correlation(p_a: float, p_b: float, icc: float) -> float:
    """The highest arm correlation chances in [0, 1] with these means and ICC can have: the
    chance both arms are right, p_A p_B + kappa rho sqrt(v_A v_B), is at most the smaller
    accuracy. At ICC 1 (each task always or never right) arms of unequal accuracy cannot
    share every task: the weaker arm's right tasks are at most all of the stronger's."""
    covariance = icc * math.sqrt(p_a * (1 - p_a) * p_b * (1 - p_b))
    if covariance <= 0:
        return 1.0
    return min(1.0, (min(p_a, p_b) - p_a * p_b) / covariance)


def fewest_tasks(alpha: float) -> int:
    """The fewest tasks (at least 2) on which the paired test can reject at ``alpha``: the
    smallest mid-p any N tasks give is 2^-N, every task's difference of one sign."""
    tasks = max(2, math.floor(-math.log2(alpha)))
    while 0.5**tasks >= alpha:  # exactly, whatever log2 rounded to
        tasks += 1
    return tasks


def critical_t(tasks: int, alpha: float) -> float:
    """The |t| beyond which the paired test rejects: sign flips, in their normal form, reject
    when |S| > z sqrt(sum d_t^2), and as sum d_t^2 = (N - 1) s^2 + N mean^2 that is
    |t| > z sqrt((N - 1) / (N - z^2)). Infinite when not even N tasks agreeing reject."""
    z = -normal_quantile(alpha / 2)  # not 1 - alpha / 2: that rounds to 1 below 1e-16
    if tasks <= z * z or tasks < fewest_tasks(alpha):
        return math.inf
    return z * math.sqrt((tasks - 1) / (tasks - z * z))


def paired_power(tasks: int, sd: float, delta: float, alpha: float) -> float:
    """Power of the paired test on ``tasks`` per-task differences of mean ``delta``, sd ``sd``."""
    if sd <= 0:  # every task's difference is delta: the test rejects when it can
        # guard: power-never-reports-fewer-tasks
        return 1.0 if tasks >= fewest_tasks(alpha) else 0.0
    return shift_power(abs(delta) * math.sqrt(tasks) / sd, tasks, alpha)


def shift_power(noncentrality: float, tasks: int, alpha: float) -> float:
    """The paired test's power when mean(d) / (sd(d) / sqrt(tasks)) is ``noncentrality``."""
    critical = critical_t(tasks, alpha)
    return 0.0 if math.isinf(critical) else beyond(noncentrality, tasks - 1, critical)


def detectable_shift(tasks: int, alpha: float, power: float) -> float:
    """The noncentrality at which the paired test on ``tasks`` tasks has ``power``: the
    smallest detectable mean difference is this times sd / sqrt(tasks)."""
    if math.isinf(critical_t(tasks, alpha)):
        return math.inf
    lo, hi = 0.0, 1.0
    while shift_power(hi, tasks, alpha) < power:
        lo, hi = hi, hi * 2
    while hi - lo > 1e-9:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if shift_power(mid, tasks, alpha) < power else (lo, mid)
    return hi


@dataclass(frozen=True)
class Design:
    """Two arms on the same tasks: arm B is right ``delta`` more often than arm A."""

    baseline: float
    delta: float
    repeats: int
    icc: float
    arm_correlation: float = CONSERVATIVE
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
        if not 1 <= self.repeats <= MAX_REPEATS:
            raise PowerError(
                f"{self.repeats} repeats is outside 1 to {MAX_REPEATS:,}; the row ∞ gives "
                "repeats without end"
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
class Power:
    """A power, and how it was found: "exact" (one run a task: McNemar's mid-p, exactly),
    "simulated" (repeats and fewer than NORMAL_FROM tasks: simulated Beta tasks), or
    "normal" (normal theory)."""

    value: float
    method: str


def design_power(design: Design, tasks: int, repeats: float | None = None) -> Power:
    """The paired test's power for ``design`` on ``tasks`` tasks at ``repeats`` (the design's
    by default; math.inf: the differences between tasks alone)."""
    runs = design.repeats if repeats is None else repeats
    if tasks < fewest_tasks(design.alpha):  # no outcome of so few tasks rejects
        return Power(0.0, "exact")
    # guard: at-icc-1-repeats-copies
    if design.icc >= 1:  # each task always or never right: its repeats are copies of one run
        runs = 1
    if runs == 1 and tasks <= EXACT_UP_TO:
        chances = (design.baseline, design.arm_b, design.icc, design.arm_correlation)
        return Power(one_run_power(tasks, chances, design.alpha), "exact")
    # guard: with-repeats-few-tasks-power
    if math.isfinite(runs) and tasks < NORMAL_FROM:
        chances = (design.baseline, design.arm_b, design.icc, design.arm_correlation)
        return Power(simulated_power(tasks, int(runs), chances, design.alpha), "simulated")
    return Power(paired_power(tasks, design.sd(runs), design.delta, design.alpha), "normal")


def tasks_needed(design: Design, repeats: float | None = None) -> int | None:
    """The fewest tasks whose paired test has the design's power (never fewer than
    ``fewest_tasks``: below, no outcome rejects); None past MAX_TASKS."""

    def enough_at(tasks: int) -> bool:
        return design_power(design, tasks, repeats).value >= design.power

    # Normal theory's answer first (instant), then the bracket around it that the power
    # found each way confirms: few evaluations where it is simulated.
    runs = design.repeats if repeats is None else repeats
    guess = _normal_tasks(design, runs)
    if guess is None:
        return None
    enough, short = guess, guess
    while not enough_at(enough):
        if enough >= MAX_TASKS:
            return None
        short, enough = enough, min(max(enough + 1, enough * 3 // 2), MAX_TASKS)
    floor = fewest_tasks(design.alpha)
    while short >= floor and enough_at(short):
        enough, short = short, short * 2 // 3
    short = min(max(short, floor - 1), enough - 1)  # short of the power, or of any rejection
    while enough - short > 1:
        mid = (short + enough) // 2
        short, enough = (short, mid) if enough_at(mid) else (mid, enough)
    return enough


def _normal_tasks(design: Design, repeats: float) -> int | None:
    """The fewest tasks with the power by normal theory alone; None past MAX_TASKS."""
    sd = design.sd(repeats)

    def enough_at(tasks: int) -> bool:
        return paired_power(tasks, sd, design.delta, design.alpha) >= design.power

    floor = fewest_tasks(design.alpha)
    enough = floor
    while not enough_at(enough):
        if enough >= MAX_TASKS:
            return None
        enough = min(enough * 2, MAX_TASKS)
    short = max(floor - 1, enough // 2)
    while enough - short > 1:
        mid = (short + enough) // 2
        short, enough = (short, mid) if enough_at(mid) else (mid, enough)
    return enough


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
    method: str | None = None
    """How that power was found (``Power.method``); None when no tasks were asked about."""


def plan(design: Design, tasks: int | None = None) -> list[Row]:
    """The design's repeats and REPEATS_SHOWN, each with the tasks it needs (and the power
    of ``tasks`` tasks, when given). The design's own repeats come first."""
    design.check()
    if tasks is not None and tasks < 2:
        raise PowerError(f"{tasks} task(s): a paired test needs at least 2")
    rows = []
    for repeats in dict.fromkeys((design.repeats, *sorted({design.repeats, *REPEATS_SHOWN}))):
        found = None if tasks is None else design_power(design, tasks, repeats)
        rows.append(
            Row(
                repeats,
                design.sd(repeats),
                tasks_needed(design, repeats),
                None if found is None else found.value,
                None if found is None else found.method,
            )
        )
    return rows


def smallest_detectable(design: Design, tasks: int) -> float | None:
    """The smallest rise over the baseline that ``tasks`` tasks detect with the design's
    power (its delta is ignored); None when not even arm B at 100% would be."""
    if tasks < 2:
        return None

    def power_at(delta: float) -> float:
        return design_power(replace(design, delta=delta), tasks).value

    lo, hi = 0.0, 1 - design.baseline
    if power_at(hi * (1 - 1e-9)) < design.power:
        return None
    # A simulated power moves in steps of 1 / SIMULATIONS: a finer search finds no more.
    precision = 1e-7 if design_power(design, tasks).method == "normal" else 1e-3
    while hi - lo > precision:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if power_at(mid) < design.power else (lo, mid)
    return hi
