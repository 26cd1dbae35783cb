"""The paired test behind compare, table --vs, --until-separated and power: how often it cries
wolf, and how often it catches a real fall.

Each simulated comparison draws N tasks (``bench/simulated.py``: each task's chance of a
right run from a Beta of mean ``mean`` and ICC ``icc``), runs the baseline R times a task,
then the candidate R times a task under one of:

- ``rerun``: nothing changed: the candidate has each task's own chance;
- ``mixed``: a change that helps some tasks and hurts others, equal on average over tasks
  like these: the candidate's chance is a fresh draw from the same Beta;
- ``half``: the same for half the tasks (drawn at random), the others unchanged.

A false alarm is compare's verdict "regressed" (with --max-drop 0: a fall whose p is
below alpha); "differ" is the two-sided test rejecting in either direction (what table
--vs and --until-separated report). Printed per (N, R, ICC): the worst cell over the means
and the three nulls (the largest of nine noisy rates: above the true rate by about 1.5
standard errors when all are equal) and the rate over all of them pooled. Then the
detection rate of a 15-point fall at 40 tasks x 5 repeats, the candidate's chance being
the baseline's quantile mapped onto a Beta 15 points lower with the arm correlation kappa
(``comonotone``).

``--api K`` also writes K folder pairs per null at 40 x 5 (ICC 0.3) and 30 x 10 (ICC 0.5)
and compares them through ``loopbench.load(after).compare(loopbench.load(before))``.

    .venv/bin/python -m bench.paired_test              # 2,000 comparisons a cell, ~6 minutes
    .venv/bin/python -m bench.paired_test --sims 500 --api 100
"""

from __future__ import annotations

import argparse
import itertools
import json
import tempfile
import time
from pathlib import Path

import numpy as np
from tabulate import tabulate

import loopbench
from bench.simulated import paired_chances, task_chances
from loopbench.harness.stats.sign_flip import sign_flip_p

TASKS = (10, 20, 40, 100, 200, 500)
REPEATS = (1, 3, 5, 10)
ICCS = (0.0, 0.3, 0.6)
MEANS = (0.3, 0.6, 0.85)
NULLS = ("rerun", "mixed", "half")
ALPHA = 0.05


def candidate_chances(
    null: str, before: np.ndarray, mean: float, icc: float, rng: np.random.Generator
) -> np.ndarray:
    if null == "rerun":
        return before
    fresh = task_chances(mean, icc, before.shape, rng)
    if null == "mixed":
        return fresh
    return np.where(rng.random(before.shape) < 0.5, fresh, before)


def verdicts(
    p_before: np.ndarray, p_after: np.ndarray, repeats: int, rng: np.random.Generator
) -> tuple[float, float]:
    """Share of comparisons called a regression (max_drop 0), and called different."""
    runs = np.full(p_before.shape[1], repeats)
    before = rng.binomial(repeats, p_before)
    after = rng.binomial(repeats, p_after)
    regressed = differ = 0
    for a, b in zip(after, before, strict=True):
        p = sign_flip_p(a, b, runs)
        differ += p < ALPHA
        regressed += p < ALPHA and a.sum() < b.sum()
    return regressed / len(before), differ / len(before)


def false_alarms(sims: int, rng: np.random.Generator) -> list[list[object]]:
    rows = []
    for tasks, repeats, icc in itertools.product(TASKS, REPEATS, ICCS):
        rates = []
        for mean, null in itertools.product(MEANS, NULLS):
            if icc == 0 and null != "rerun":
                continue  # every task alike: a fresh draw is the same chance
            before = task_chances(mean, icc, (sims, tasks), rng)
            after = candidate_chances(null, before, mean, icc, rng)
            rates.append(verdicts(before, after, repeats, rng))
        regressed, differ = (np.array(side) for side in zip(*rates, strict=True))
        rows.append([tasks, repeats, icc, f"{regressed.max():.3f}", f"{regressed.mean():.3f}",
                     f"{differ.max():.3f}", f"{differ.mean():.3f}"])  # fmt: skip
    return rows


def detection(sims: int, rng: np.random.Generator) -> list[list[object]]:
    rows = []
    for kappa, icc, baseline in itertools.product(
        (1.0, 0.8, 0.5), (0.1, 0.3, 0.5), (0.5, 0.7, 0.85)
    ):
        before, after = paired_chances(
            "comonotone", baseline, baseline - 0.15, icc, kappa, (sims, 40), rng
        )
        regressed, _ = verdicts(before, after, 5, rng)
        rows.append([kappa, icc, baseline, f"{regressed:.3f}"])
    return rows


def write_folder(folder: Path, right: np.ndarray, failed: np.ndarray | None = None) -> None:
    """A results folder of one arm: right[t, r] is run r of task t (NaN: not run), and
    failed[t, r] an ``api_error`` instead."""
    folder.mkdir()
    failed = np.zeros(right.shape, bool) if failed is None else failed
    lines = [
        json.dumps({"arm": "react", "task_set": "sim", "task_id": f"t{t}", "repeat": r,
                    "model": "m", "status": "api_error" if failed[t, r] else "answered",
                    "correct": None if failed[t, r] else bool(right[t, r])})
        for t, r in itertools.product(range(right.shape[0]), range(right.shape[1]))
        if not np.isnan(right[t, r])
    ]  # fmt: skip
    (folder / "runs.jsonl").write_text("\n".join(lines) + "\n")


def through_the_api(pairs: int, rng: np.random.Generator) -> list[list[object]]:
    rows = []
    for (tasks, repeats, icc), null in itertools.product(((40, 5, 0.3), (30, 10, 0.5)), NULLS):
        alarms = 0
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(pairs):
                mean = rng.uniform(0.3, 0.85)
                before = task_chances(mean, icc, (tasks,), rng)
                after = candidate_chances(null, before, mean, icc, rng)
                for side, chances in (("b", before), ("a", after)):
                    write_folder(
                        Path(tmp, f"{side}{i}"), rng.random((tasks, repeats)) < chances[:, None]
                    )
                comparison = loopbench.load(Path(tmp, f"a{i}")).compare(
                    loopbench.load(Path(tmp, f"b{i}")), max_drop=0.0, alpha=ALPHA
                )
                alarms += comparison.arms[0].regressed
        rows.append([tasks, repeats, icc, null, f"{alarms / pairs:.3f}"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=2000, help="comparisons a cell")
    parser.add_argument("--api", type=int, default=0, help="folder pairs through the API")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    began = time.perf_counter()
    print(f"False alarms at alpha {ALPHA}, over means {MEANS} and the nulls {NULLS}: the worst")
    print("cell, and all cells pooled (nine cells, or three with ICC 0, of --sims each):")
    headers = ["N", "R", "ICC", "regressed: worst", "pooled", "differ: worst", "pooled"]
    print(tabulate(false_alarms(args.sims, rng), headers, tablefmt="github"))
    print("\nA 15-point fall at 40 tasks x 5 repeats, called a regression (max_drop 0):")
    print(
        tabulate(
            detection(args.sims, rng), ["kappa", "ICC", "baseline", "detected"], tablefmt="github"
        )
    )
    if args.api:
        print(f"\nThrough loopbench.load(...).compare(...), {args.api} folder pairs a row:")
        print(
            tabulate(
                through_the_api(args.api, rng),
                ["N", "R", "ICC", "null", "regressed"],
                tablefmt="github",
            )
        )
    se = np.sqrt(ALPHA * (1 - ALPHA) / args.sims)
    print(f"\n{args.sims} comparisons a cell (standard error of a rate near {ALPHA}: {se:.4f}); "
          f"{time.perf_counter() - began:.0f} s.")  # fmt: skip


if __name__ == "__main__":
    main()
