"""Runs to a verdict: ``run --until-separated`` against a fixed design of the same false-alarm
rate and power, simulated over 20 to 200 tasks and gaps of 0 to 20 points.

**Which fixed design.** The one planned for the same target: the same alpha (0.05), the
same gap (the margin) and the same power (80%), as group-sequential designs are compared
(Jennison and Turnbull, ch. 1): R the fewest repeats reaching 80% at the margin, and its
runs are the yardstick at every gap, identical arms included (where "the same power" has
no meaning; the same false-alarm rate does). The sequential rule must reach at least the
power that fixed design has at every gap. A fixed design sized per case for the power the
rule happened to reach is shown too (last column), but not used as the yardstick: the
rule does not know the gap, and at 10 and 15 points both designs have a power of 100%,
which no fixed number of runs is "the fewest" for.

**What no rule can beat.** Wald's bound: any sequential test that tells a gap of the
margin from none with false alarms alpha / 2 each way and power 1 - beta needs, at that
gap, on average at least ((1 - beta) ln((1 - beta) / (alpha / 2)) + beta ln(beta / (1 -
alpha / 2))) / (margin^2 I / 2) runs, I the information a run gives; the fixed design needs
(z_{1-alpha/2} + z_{1-beta})^2 / (margin^2 I). Their ratio is printed beside the gap of the
margin: 62.5% at 80% power, 60.1% at 86%, before the overshoot of looking once a round.

Each simulated run has two arms over T tasks of unequal difficulty, as in
``bench/separation.py``: each task's chance drawn from Beta(2, 2) for the better arm, the
other arm's that minus the gap (clipped at 0). Both designs are planned to find a gap of
the margin (5 points, the smallest worth finding) at alpha 0.05:

- **fixed**: T tasks at R repeats, R the fewest whose paired test (sign flips of per-task
  differences, as ``compare``) has at least 80% power at the margin, by simulation;
- **sequential**: ``--until-separated --margin 0.05`` with the group-sequential rule and
  ``--max-repeats K``, K the fewest rounds whose power at the margin is at least the fixed
  design's plus ``--slack`` (planned as ``loopbench power`` plans it:
  ``loopbench.harness.stats.sequential_design``; the slack covers what the normal paths miss of the
  rule's discrete tests).

Then, at every gap, both are simulated (the sequential one by ``replay``, the decisions
``run`` makes): the share declaring a difference (false alarms at gap 0, else power), and
the runs an arm: T R for the fixed design, T times the rounds run for the sequential one.
"% of fixed" is the sequential design's mean runs over the fixed design's. The last
column is the runs a fixed design needs for the power the sequential rule reached at that
gap (at most 99%), by ``loopbench power``'s computation at one repeat a task (``tasks
needed``); at gap 0 it is blank. The acceptance cases (50 and 200 tasks; identical arms,
5, 10 and 15 points) are checked at the end.

    .venv/bin/python -m bench.stopping [--sims 1000] [--tasks 50 200] [--gaps 0] \
        [--boundary pocock] [--futility likelihood-two-gaps|likelihood|conditional-power] \
        [--slack 0]
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass

import numpy as np
from scipy import stats

from loopbench.harness.report.power import Design, tasks_needed
from loopbench.harness.stats.separation import BOUNDARIES, FUTILITIES, SeparationRule, replay
from loopbench.harness.stats.sequential_design import fewest_rounds
from loopbench.harness.stats.sign_flip import sign_flip_p

ALPHA, MARGIN, POWER = 0.05, 0.05, 0.8
TASKS = (20, 50, 100, 200)
GAPS = (0.0, 0.05, 0.10, 0.15, 0.20)
ACCEPTANCE_TASKS, ACCEPTANCE_GAPS = (50, 200), (0.0, 0.05, 0.10, 0.15)
#: The most repeats searched for the fixed design.
MOST_REPEATS = 200


def chances(rng: np.random.Generator, tasks: int, gap: float) -> tuple[np.ndarray, np.ndarray]:
    good = rng.beta(2, 2, tasks)
    return good, np.clip(good - gap, 0, 1)


def wald_share(power: float, alpha: float = ALPHA) -> float:
    """Wald's least mean runs at the gap of the margin over the fixed design's, at ``power``."""
    side, miss = alpha / 2, 1 - power
    least = 2 * (power * math.log(power / side) + miss * math.log(miss / (1 - side)))
    fixed = float(stats.norm.ppf(1 - side) + stats.norm.ppf(power)) ** 2
    return least / fixed


def information(tasks: int, gap: float, rounds: int) -> list[float]:
    """1 / Var(mean difference) after each round, for the planner: the model's
    between-task variance of the difference and its run-to-run variance."""
    good, poor = chances(np.random.default_rng(0), 1_000_000, gap)
    between = float(np.var(good - poor))
    within = float(np.mean(good * (1 - good) + poor * (1 - poor)))
    return [tasks / (between + within / k) for k in range(1, rounds + 1)]


def fixed_power(tasks: int, repeats: int, gap: float, sims: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    runs = np.full(tasks, repeats)
    found = 0
    for _ in range(sims):
        good, poor = chances(rng, tasks, gap)
        found += (
            sign_flip_p(rng.binomial(repeats, good), rng.binomial(repeats, poor), runs) <= ALPHA
        )
    return found / sims


def fixed_design(tasks: int, sims: int) -> tuple[int, float]:
    """The fewest repeats with at least POWER at the margin, and that power."""
    repeats = max(1, round(7.85 * 0.4 / (tasks * MARGIN**2)) - 2)  # near normal theory's
    while (power := fixed_power(tasks, repeats, MARGIN, sims, seed=tasks)) < POWER:
        repeats += 1
    while repeats > 1 and (lower := fixed_power(tasks, repeats - 1, MARGIN, sims, tasks)) >= POWER:
        repeats, power = repeats - 1, lower
    return repeats, power


@dataclass
class Simulated:
    declared: float
    rounds: float
    futile: float


def sequential(rule: SeparationRule, tasks: int, gap: float, sims: int, seed: int) -> Simulated:
    rng = np.random.default_rng(seed)
    declared = futile = 0
    rounds = []
    for _ in range(sims):
        good, poor = chances(rng, tasks, gap)
        draws = {
            arm: (rng.random((tasks, rule.max_repeats)) < p[:, None]).astype(float)
            for arm, p in (("good", good), ("poor", poor))
        }
        state = replay(draws, rule, rule.max_repeats)
        verdicts = [d.look.verdict for d in state.decisions.values()]
        declared += any(v in ("better", "worse") for v in verdicts)
        futile += "futile" in verdicts
        rounds.append(state.rounds)
    return Simulated(declared / sims, float(np.mean(rounds)), futile / sims)


def matched_runs(gap: float, power: float) -> int | None:
    """Runs an arm a fixed design needs for ``power`` at ``gap``, one repeat a task."""
    if gap == 0:
        return None
    design = Design(0.5 - gap / 2, gap, 1, 0.2, 1.0, ALPHA, min(power, 0.99))
    return tasks_needed(design)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=1000, help="simulated runs a setting")
    parser.add_argument("--boundary", choices=BOUNDARIES[:2], default="pocock")
    parser.add_argument("--futility", choices=FUTILITIES, default=FUTILITIES[0])
    parser.add_argument("--slack", type=float, default=0.0, help="power planned above the fixed")
    parser.add_argument("--tasks", type=int, nargs="*", default=list(TASKS))
    parser.add_argument("--gaps", type=float, nargs="*", default=list(GAPS))
    args = parser.parse_args()
    began = time.perf_counter()
    print(
        f"alpha {ALPHA}, margin {MARGIN}, fixed design at {POWER:.0%} power at the margin; "
        f"{args.boundary} alpha spending, {args.futility} futility, planned at the fixed "
        f"design's power + {args.slack:.0%}; {args.sims} simulated runs a setting\n"
    )
    print(
        "| tasks | gap | fixed: repeats | sequential: at most | declared, fixed | declared, "
        "sequential | stopped for futility | runs an arm, fixed | runs an arm, sequential | "
        "% of fixed | fixed for the same power at that gap |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    checks: list[Check] = []
    for tasks in args.tasks:
        repeats, power_at_margin = fixed_design(tasks, args.sims)
        base = SeparationRule(ALPHA, MARGIN, 1, args.boundary, futility_boundary=args.futility)
        target = min(power_at_margin + args.slack, 0.999)
        information_ = information(tasks, MARGIN, 4 * repeats)
        planned = fewest_rounds(base, information_, MARGIN, target, tasks)
        assert planned is not None, f"{tasks} tasks: no rounds reach the fixed design's power"
        rule = planned[0]
        for gap in args.gaps:
            seed = 1000 * tasks + round(100 * gap)
            fixed = (
                power_at_margin
                if gap == MARGIN
                else fixed_power(tasks, repeats, gap, args.sims, seed)
            )
            got = sequential(rule, tasks, gap, args.sims, seed)
            share = got.rounds / repeats
            matched = matched_runs(gap, got.declared)
            print(
                f"| {tasks} | {100 * gap:.0f} | {repeats} | {rule.max_repeats} | {fixed:.1%} | "
                f"{got.declared:.1%} | {got.futile:.0%} | {tasks * repeats} | "
                f"{tasks * got.rounds:.0f} | {share:.0%} | {matched or ''} |"
            )
            if tasks in ACCEPTANCE_TASKS and gap in ACCEPTANCE_GAPS:
                checks.append(Check(tasks, gap, fixed, got.declared, share))
    if checks:
        _acceptance(checks, args.sims)
    print(f"\n{time.perf_counter() - began:.0f} s")


@dataclass
class Check:
    tasks: int
    gap: float
    fixed: float
    declared: float
    share: float


def _acceptance(checks: list[Check], sims: int) -> None:
    se = math.sqrt(ALPHA * (1 - ALPHA) / sims)
    print(
        f"\nAcceptance (false alarms at most {ALPHA}, standard error {se:.3f} at {sims} runs; "
        "least: Wald's bound on the mean runs at the margin, at the fixed design's power):"
    )
    print("| tasks | gap | check | fixed | sequential | least | holds |")
    print("|---|---|---|---|---|---|---|")
    for c in checks:
        if c.gap == 0:
            what, holds = "false alarms", c.declared <= ALPHA
        else:
            what, holds = "power", c.declared >= c.fixed
        row = f"| {c.tasks} | {100 * c.gap:.0f} | {what} | {c.fixed:.2%} | {c.declared:.2%} |"
        print(f"{row} | {_yes(holds)} |")
        least = f"{wald_share(c.fixed):.0%}" if c.gap == MARGIN else ""
        runs = f"| {c.tasks} | {100 * c.gap:.0f} | runs | 100% | {c.share:.0%} | {least} |"
        print(f"{runs} {_yes(c.share <= 0.6)} |")
    mean = float(np.mean([c.share for c in checks]))
    print(f"| all | | mean runs over these cases | 100% | {mean:.0%} | | {_yes(mean <= 0.6)} |")


def _yes(holds: bool) -> str:
    return "yes" if holds else "**no**"


if __name__ == "__main__":
    main()
