"""How often the table's accuracy interval contains the accuracy on tasks like these.

Each simulated results folder draws N tasks, each with its chance of a right run from a
Beta distribution of mean ``mean`` and intraclass correlation ``icc`` (``bench/simulated.py``),
and runs every task R times. The accuracy on tasks like these is the Beta's mean. Printed,
per (N, R, ICC): the worst and the median coverage over the means, of

- ``tasks``: loopbench's interval (Wilson's on the effective number of runs, tasks
  clustered: ``loopbench.harness.stats.intervals.clustered_interval``);
- ``runs``: Wilson's interval on the runs as if independent (``--interval runs``, and the
  table's interval before);

and, for two arms on the same tasks (arm correlation 0.8, a 10-point difference), the
coverage of compare's paired interval (Newcombe's on the effective number of pairs).

    .venv/bin/python -m bench.intervals              # 2,000 folders a setting, ~5 minutes
    .venv/bin/python -m bench.intervals --sims 500 --detail
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
from tabulate import tabulate

from bench.simulated import paired_chances, task_chances
from loopbench.harness.stats.intervals import PairedTasks, clustered_interval, wilson_interval

TASKS = (10, 20, 30, 50, 100, 200, 500)
REPEATS = (1, 3, 5, 10)
ICCS = (0.0, 0.1, 0.3, 0.5, 0.6)
MEANS = (0.05, 0.15, 0.3, 0.5, 0.7, 0.85, 0.95)
#: Where the hidden folders of issue 19 are drawn: (tasks, repeats, ICC).
CHECKED = ((30, 10, 0.5), (50, 3, 0.3))


def coverage(
    tasks: int, repeats: int, icc: float, mean: float, sims: int, rng: np.random.Generator
) -> tuple[float, float]:
    """Share of folders whose interval contains ``mean``: loopbench's, and Wilson's on runs."""
    right = rng.binomial(repeats, task_chances(mean, icc, (sims, tasks), rng))
    runs = np.full(tasks, float(repeats))
    ours = theirs = 0
    for folder in right:
        low, high = clustered_interval(folder.astype(float), runs)
        ours += low <= mean <= high
        low, high = wilson_interval(float(folder.sum()), tasks * repeats)
        theirs += low <= mean <= high
    return ours / sims, theirs / sims


def paired_coverage(
    tasks: int, repeats: int, icc: float, sims: int, rng: np.random.Generator
) -> float:
    """Coverage of the paired interval of B - A, A at 0.5 and B at 0.6, kappa 0.8."""
    a, b = paired_chances("comonotone", 0.5, 0.6, icc, 0.8, (sims, tasks), rng)
    covered = 0
    for pa, pb in zip(a, b, strict=True):
        runs_a = rng.random((tasks, repeats)) < pa[:, None]
        runs_b = rng.random((tasks, repeats)) < pb[:, None]
        paired = PairedTasks(
            np.full(tasks, float(repeats)),
            runs_b.sum(1).astype(float),
            runs_a.sum(1).astype(float),
            (runs_a & runs_b).sum(1).astype(float),
        )
        low, high = paired.interval()
        covered += low <= 0.1 <= high
    return covered / sims


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=2000, help="folders a setting")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--detail", action="store_true", help="also print every mean")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    began = time.perf_counter()
    rows, detail = [], []
    for tasks, repeats, icc in itertools.product(TASKS, REPEATS, ICCS):
        if repeats == 1 and icc > 0:
            continue  # one run a task: the ICC does not enter
        pairs = [coverage(tasks, repeats, icc, mean, args.sims, rng) for mean in MEANS]
        ours, theirs = [p[0] for p in pairs], [p[1] for p in pairs]
        middle = [o for o, m in zip(ours, MEANS, strict=True) if 0.15 <= m <= 0.85]
        paired = paired_coverage(tasks, repeats, icc, args.sims // 2, rng)
        rows.append([tasks, repeats, icc, f"{min(middle):.3f}", f"{min(ours):.3f}",
                     f"{np.median(ours):.3f}", f"{min(theirs):.3f}", f"{np.median(theirs):.3f}",
                     f"{paired:.3f}"])  # fmt: skip
        detail += [[tasks, repeats, icc, m, f"{o:.3f}", f"{t:.3f}"]
                   for m, o, t in zip(MEANS, ours, theirs, strict=True)]  # fmt: skip
    headers = ["N", "R", "ICC", "tasks: worst, mean 0.15-0.85", "tasks: worst", "tasks: median",
               "runs: worst", "runs: median", "paired"]  # fmt: skip
    print(tabulate(rows, headers, tablefmt="github"))
    if args.detail:
        print(
            "\n" + tabulate(detail, ["N", "R", "ICC", "mean", "tasks", "runs"], tablefmt="github")
        )
    se = 0.5 / np.sqrt(args.sims)
    print(f"\n{args.sims} folders a setting (standard error of a coverage near 0.95: "
          f"{np.sqrt(0.95 * 0.05 / args.sims):.3f}, at most {se:.3f}); means {MEANS}; "
          f"{time.perf_counter() - began:.0f} s.")  # fmt: skip


if __name__ == "__main__":
    main()
