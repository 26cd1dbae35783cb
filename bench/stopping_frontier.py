"""How few runs identical arms can stop at: the floors ``--until-separated`` is measured against
in docs/power.md, on the normal paths of the rule's looks.

Three figures, each as a share of the fixed design's runs (the fixed design of
``bench/stopping.py``: alpha 0.05 two-sided, the power it has at a gap of the margin):

- **Wald's bounds** for a one-sided question, a gap of the margin against none, with false
  alarms alpha / 2 and power 1 - beta: at least
  2((1 - beta) ln((1 - beta) / (alpha / 2)) + beta ln(beta / (1 - alpha / 2))) / eta^2 at
  the margin and 2((1 - alpha / 2) ln((1 - alpha / 2) / beta) + (alpha / 2) ln((alpha / 2) /
  (1 - beta))) / eta^2 at no gap, eta = z_{1-alpha/2} + z_{1-beta} the fixed design's drift.
  The first holds for the two-sided rule too (at a gap of the margin it must tell that gap
  from none); the second is the one-sided SPRT's, which stops early on a z well below
  zero, and a two-sided rule cannot: a z far below zero is evidence of a gap the other way.
- **The two-sided SPRT** (two one-sided SPRTs at alpha / 2 each, stopping once each has
  accepted, Sobel and Wald), looking four times a round of 50 tasks (nearly continuously):
  its runs at no gap and at the margin, and its error rates.
- **The best futility band found** for the rule's own looks: with the rule's efficacy bounds
  (Pocock-like alpha spending over K rounds), every look's futility bound f_k (stop when
  |z| < f_k) chosen by coordinate search to minimise the mean rounds at no gap plus
  ``lam`` times the power lost at the margin. Sweeping ``lam`` traces the runs at no gap
  against the power at the margin; the row whose power reaches the fixed design's is the
  fewest runs a symmetric futility band on these looks was found to reach (a search, so
  a ceiling on the floor, not a proof).

Information grows by one unit of 0.4 / tasks per round (Beta(2, 2) tasks shared by both
arms, as in ``bench/stopping.py``), so eta_k = margin sqrt(k tasks / 0.4). Paths are drawn
from a fixed seed.

    .venv/bin/python -m bench.stopping_frontier [--paths 8000] [--tasks 200] \
        [--rounds 10 13] [--lams 2 2.5 3]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy import stats

from loopbench.harness.stats.boundaries import efficacy_bounds

ALPHA, MARGIN = 0.05, 0.05
#: Each fixed design's repeats and power at the margin, as ``bench/stopping.py`` found them.
FIXED = {50: (27, 0.802), 200: (7, 0.838)}
#: Futility bounds searched at each look.
GRID = np.arange(0.0, 2.01, 0.1)


def drift(power: float) -> float:
    """The fixed design's z at the margin for ``power``: z_{1-alpha/2} + z_power."""
    return float(stats.norm.ppf(1 - ALPHA / 2) + stats.norm.ppf(power))


def wald(power: float) -> tuple[float, float]:
    """Wald's least mean information at the margin and at no gap, one-sided, as shares of
    the fixed design's."""
    side, miss = ALPHA / 2, 1 - power
    at_margin = 2 * (power * math.log(power / side) + miss * math.log(miss / (1 - side)))
    at_none = 2 * ((1 - side) * math.log((1 - side) / miss) + side * math.log(side / power))
    return at_margin / drift(power) ** 2, at_none / drift(power) ** 2


def two_sided_sprt(power: float, paths: int, seed: int) -> dict[float, tuple[float, float]]:
    """The Sobel-Wald two-sided SPRT at gaps of 0 and 1 margin: (share declaring, mean
    information over the fixed design's)."""
    rng = np.random.default_rng(seed)
    step = (MARGIN * math.sqrt(50 / 0.4) / 2) ** 2  # eta^2 a look: four looks a round of 50
    looks = int(6 * drift(power) ** 2 / step)
    motion = np.cumsum(rng.standard_normal((paths, looks)), axis=1)
    upper = math.log(power / (ALPHA / 2))
    lower = math.log((1 - ALPHA / 2) / (1 - power))
    found = {}
    for gap in (0.0, 1.0):
        running = np.ones(paths, dtype=bool)
        declared = np.zeros(paths, dtype=bool)
        up_done = np.zeros(paths, dtype=bool)
        down_done = np.zeros(paths, dtype=bool)
        stopped_at = np.full(paths, float(looks))
        for k in range(1, looks + 1):
            eta = math.sqrt(step * k)
            z = (gap * eta**2 + math.sqrt(step) * motion[:, k - 1]) / eta
            crossed = running & (np.abs(z) >= eta / 2 + upper / eta)
            declared |= crossed
            up_done |= z < eta / 2 - lower / eta
            down_done |= z > -(eta / 2 - lower / eta)
            stop = crossed | (running & up_done & down_done)
            stopped_at[stop] = k
            running &= ~stop
        found[gap] = (float(declared.mean()), float(stopped_at.mean()) * step / drift(power) ** 2)
    return found


class Looks:
    """Normal paths of the rule's z at K rounds, for a futility band to be searched on."""

    def __init__(self, tasks: int, rounds: int, paths: int, seed: int) -> None:
        self.rounds = rounds
        self.eta1 = MARGIN * math.sqrt(tasks / 0.4)
        self.bounds = np.array(efficacy_bounds(ALPHA, rounds, "pocock"))
        rng = np.random.default_rng(seed)
        self.motion = np.cumsum(rng.standard_normal((paths, rounds)), axis=1)

    def run(self, futility: np.ndarray, gap: float) -> tuple[float, float]:
        """(Share declaring, mean rounds) at ``gap`` margins with futility bounds ``futility``
        at the first K - 1 looks."""
        paths = len(self.motion)
        running = np.ones(paths, dtype=bool)
        declared = np.zeros(paths, dtype=bool)
        stopped_at = np.full(paths, float(self.rounds))
        for k in range(1, self.rounds + 1):
            z = (gap * self.eta1 * k + self.motion[:, k - 1]) / math.sqrt(k)
            crossed = running & (np.abs(z) >= self.bounds[k - 1])
            declared |= crossed
            stop = crossed.copy()
            if k < self.rounds:
                stop |= running & (np.abs(z) < futility[k - 1])
            stopped_at[running & stop] = k
            running &= ~stop
        return float(declared.mean()), float(stopped_at.mean())

    def search(self, lam: float, repeats: int) -> tuple[np.ndarray, float, float, float]:
        """The band minimising rounds at no gap / repeats + lam (1 - power), from the rule's
        likelihood band; with its power and the mean rounds at no gap and at the margin."""
        etas = self.eta1 * np.sqrt(np.arange(1, self.rounds))
        band = np.clip(0.6 * etas - 1.6 / etas, 0, GRID[-1])

        def cost(candidate: np.ndarray) -> float:
            power, _ = self.run(candidate, 1.0)
            return self.run(candidate, 0.0)[1] / repeats + lam * (1 - power)

        for _ in range(2):
            for k in range(len(band)):
                costs = []
                for value in GRID:
                    trial = band.copy()
                    trial[k] = value
                    costs.append(cost(trial))
                band[k] = GRID[int(np.argmin(costs))]
        power, at_margin = self.run(band, 1.0)
        return band, power, self.run(band, 0.0)[1], at_margin


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths", type=int, default=8000, help="normal paths a figure")
    parser.add_argument("--tasks", type=int, nargs="*", default=[200], choices=sorted(FIXED))
    parser.add_argument("--rounds", type=int, nargs="*", default=[10, 13], help="K searched")
    parser.add_argument("--lams", type=float, nargs="*", default=[2.0, 2.5, 3.0])
    args = parser.parse_args()
    began = time.perf_counter()
    print(f"alpha {ALPHA}, margin {MARGIN}; {args.paths} normal paths a figure\n")
    print("| fixed design's power | Wald at the margin | Wald at no gap, one-sided |")
    print("|---|---|---|")
    for power in (0.8, FIXED[50][1], FIXED[200][1]):
        at_margin, at_none = wald(power)
        print(f"| {power:.1%} | {at_margin:.1%} | {at_none:.1%} |")
    print("\n| two-sided SPRT at power | gap | declared | runs, % of fixed |")
    print("|---|---|---|---|")
    for power in (0.8, FIXED[200][1]):
        for gap, (declared, share) in two_sided_sprt(power, args.paths, 1).items():
            print(f"| {power:.1%} | {gap:g} margin | {declared:.1%} | {share:.0%} |")
    print(
        "\n| tasks | K | lam | power at the margin | fixed design's | runs at no gap, % of "
        "fixed | at the margin | futility bounds |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for tasks in args.tasks:
        repeats, fixed_power = FIXED[tasks]
        for rounds in args.rounds:
            looks = Looks(tasks, rounds, args.paths, tasks + rounds)
            for lam in args.lams:
                band, power, at_none, at_margin = looks.search(lam, repeats)
                shown = " ".join(f"{b:.1f}" for b in band)
                print(
                    f"| {tasks} | {rounds} | {lam:g} | {power:.1%} | {fixed_power:.1%} | "
                    f"{at_none / repeats:.0%} | {at_margin / repeats:.0%} | {shown} |",
                    flush=True,
                )
    print(f"\n{time.perf_counter() - began:.0f} s")


if __name__ == "__main__":
    main()
