"""How often the table warns that failures fell on harder tasks, when they did and when not.

``table`` leaves runs that ended in api_error or pattern_error out of accuracy and, per arm,
tests whether the tasks that lost runs were harder (or easier) than the rest by the other
arms' accuracy on them (``loopbench.harness.report.lost_runs``: a permutation test over tasks,
warning below UNEVEN_P). This bench simulates folders of three arms on N tasks, R repeats,
each task's chance Beta distributed (mean 0.6, ICC 0.3; the arms shifted on the logit
scale by -0.4, 0 and +0.4, so they share each task's difficulty), and runs failing at a
mean rate f under three mechanisms, in every arm:

- random: each run fails with chance f, whatever its task;
- hard: with chance proportional to 1 - P (P the run's chance of being right), mean f;
- hardest: proportional to (1 - P)^3, mean f: failures concentrated on the hardest tasks.

Printed per setting: the coverage of the middle arm's 95% accuracy interval (about tasks
like these: its truth is the arm's mean chance over the task distribution), how often the
middle arm is warned about, and how often any of the three arms is (what a reader of the
whole table sees).

    .venv/bin/python -m bench.lost_runs               # 500 folders a setting
    .venv/bin/python -m bench.lost_runs --sims 200
"""

from __future__ import annotations

import argparse
import itertools
import time
from typing import Any

import numpy as np
import pandas as pd
from tabulate import tabulate

from bench.simulated import task_chances
from loopbench.harness.report.lost_runs import UNEVEN_P, lost_runs
from loopbench.harness.stats.intervals import accuracy_interval

MEAN, ICC = 0.6, 0.3
SHIFTS = (-0.4, 0.0, 0.4)
STUDIED = 1  # the middle arm
GRID: dict[str, tuple[Any, ...]] = {
    "tasks": (30, 100, 300),
    "repeats": (1, 3),
    "rate": (0.05, 0.15),
    "mechanism": ("random", "hard", "hardest"),
}


def _expit(x: np.ndarray) -> np.ndarray:
    result: np.ndarray = 1 / (1 + np.exp(-x))
    return result


def arm_chances(common: np.ndarray) -> np.ndarray:
    """(arms, tasks): each arm's chance, the common difficulty shifted on the logit scale."""
    logit = np.log(common) - np.log1p(-common)
    return _expit(logit[None, :] + np.array(SHIFTS)[:, None])


def truth(rng: np.random.Generator) -> float:
    """The studied arm's accuracy on tasks like these: its mean chance over many tasks."""
    common = np.clip(task_chances(MEAN, ICC, (2_000_000,), rng), 1e-9, 1 - 1e-9)
    return float(arm_chances(common)[STUDIED].mean())


def failure_chance(chance: np.ndarray, rate: float, mechanism: str) -> np.ndarray:
    if mechanism == "random":
        return np.full(chance.shape, rate)
    weight = (1 - chance) if mechanism == "hard" else (1 - chance) ** 3
    result: np.ndarray = np.minimum(1.0, rate * weight / weight.mean())
    return result


def folder(
    tasks: int, repeats: int, rate: float, mechanism: str, rng: np.random.Generator
) -> pd.DataFrame:
    """One simulated folder's runs: arm, task_id, status, correct."""
    common = np.clip(task_chances(MEAN, ICC, (tasks,), rng), 1e-9, 1 - 1e-9)
    chances = np.repeat(arm_chances(common)[:, :, None], repeats, axis=2)  # arm, task, repeat
    correct = rng.random(chances.shape) < chances
    failed = rng.random(chances.shape) < failure_chance(chances, rate, mechanism)
    arm, task, _ = np.indices(chances.shape)
    return pd.DataFrame(
        {
            "arm": arm.ravel(),
            "task_id": task.ravel(),
            "status": np.where(failed.ravel(), "api_error", "answered"),
            "correct": np.where(failed.ravel(), False, correct.ravel()),
        }
    )


def one_setting(
    tasks: int, repeats: int, rate: float, mechanism: str, sims: int, accuracy: float
) -> dict[str, object]:
    rng = np.random.default_rng(1)
    covered = warned = any_warned = 0
    for _ in range(sims):
        runs = folder(tasks, repeats, rate, mechanism, rng)
        flags = []
        for arm in range(len(SHIFTS)):
            mine = runs[runs["arm"] == arm]
            flags.append(lost_runs(mine, runs[runs["arm"] != arm]).uneven == 1)
        graded = runs[(runs["arm"] == STUDIED) & (runs["status"] == "answered")]
        low, high = accuracy_interval(graded["task_id"].to_numpy(), graded["correct"].to_numpy())
        covered += low <= accuracy <= high
        warned += flags[STUDIED]
        any_warned += any(flags)
    return {
        "N": tasks,
        "R": repeats,
        "failure rate": rate,
        "failures": mechanism,
        "coverage": round(covered / sims, 3),
        "arm warned": round(warned / sims, 3),
        "any arm warned": round(any_warned / sims, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=500, help="folders a setting")
    args = parser.parse_args()
    started = time.perf_counter()
    accuracy = truth(np.random.default_rng(0))
    rows = [
        one_setting(tasks, repeats, rate, mechanism, args.sims, accuracy)
        for tasks, repeats, rate, mechanism in itertools.product(
            GRID["tasks"], GRID["repeats"], GRID["rate"], GRID["mechanism"]
        )
    ]
    print(tabulate(rows, headers="keys", tablefmt="github"))
    print(
        f"\n{args.sims} folders a setting (standard error of a rate near {UNEVEN_P}: "
        f"{(UNEVEN_P * (1 - UNEVEN_P) / args.sims) ** 0.5:.3f}); warning at p < {UNEVEN_P}; "
        f"the middle arm's accuracy on tasks like these {accuracy:.3f}; "
        f"{time.perf_counter() - started:.0f} s."
    )


if __name__ == "__main__":
    main()
