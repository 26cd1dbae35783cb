"""compare on ragged folder pairs, as real folders are: how often it calls a regression when
nothing fell, and whether it ever does when the tasks improved.

Each side ran each of 40 tasks (chances from a Beta of ICC 0.3, ``bench/simulated.py``) 1 to
5 times, drawn per task and side, so repeats pair unequally and some runs pair with
nothing; runs end in ``api_error`` more often on hard tasks (30% on the harder half, 5% on
the rest), which removes their pairs. Rows:

- ``rerun``, ``mixed``, ``half``: the nulls of ``bench/paired_test.py``; "regressed" is the
  false-alarm rate of the gate (``max_drop`` 0, alpha 0.05);
- ``improved``: 70% of the tasks gain 40 points, the others lose 20 (the tasks improve by 22
  points on average); the tasks that lost ran 10 times on both sides, the others once or
  twice. Over all pairs accuracy then often falls while the tasks rose: a "regressed" is a
  verdict backwards.

Every comparison goes through ``loopbench.load(after).compare(loopbench.load(before))``.

    .venv/bin/python -m bench.compare_ragged --pairs 100
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
from tabulate import tabulate

import loopbench
from bench.paired_test import ALPHA, NULLS, candidate_chances, write_folder
from bench.simulated import task_chances

TASKS, ICC = 40, 0.3


def ragged_side(
    chances: np.ndarray, repeats: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """One side's runs, ``repeats[t]`` of task t (NaN past them), and which failed: 30% of
    the runs of the harder half of the tasks, 5% of the others'."""
    most = int(repeats.max())
    right = np.where(rng.random((len(chances), most)) < chances[:, None], 1.0, 0.0)
    right[np.arange(most)[None, :] >= repeats[:, None]] = np.nan
    hard = chances < np.median(chances)
    failed = rng.random(right.shape) < np.where(hard, 0.3, 0.05)[:, None]
    return right, failed


def chances_and_repeats(
    null: str, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Each task's chance on either side, and the runs each side made of it."""
    mean = rng.uniform(0.3, 0.7)
    before = task_chances(mean, ICC, (TASKS,), rng)
    if null == "improved":
        lost = rng.random(TASKS) < 0.3
        after = np.clip(np.where(lost, before - 0.2, before + 0.4), 0, 1)
        return before, after, [np.where(lost, 10, rng.integers(1, 3, TASKS))] * 2
    after = candidate_chances(null, before, mean, ICC, rng)
    return before, after, [rng.integers(1, 6, TASKS), rng.integers(1, 6, TASKS)]


def regressed(pairs: int, null: str, rng: np.random.Generator) -> list[object]:
    alarms = fell_over_pairs = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(pairs):
            before, after, repeats = chances_and_repeats(null, rng)
            for side, chances, ran in (("b", before, repeats[0]), ("a", after, repeats[1])):
                write_folder(Path(tmp, f"{side}{i}"), *ragged_side(chances, ran, rng))
            [arm] = (
                loopbench.load(Path(tmp, f"a{i}"))
                .compare(loopbench.load(Path(tmp, f"b{i}")), max_drop=0.0, alpha=ALPHA)
                .arms
            )
            alarms += arm.regressed
            fell_over_pairs += fell_over_all_pairs(Path(tmp))
    return [TASKS, ICC, null, f"{alarms / pairs:.3f}", f"{fell_over_pairs / pairs:.3f}"]


def fell_over_all_pairs(folder: Path) -> bool:
    """The last pair written: did accuracy over all its (task, repeat) pairs fall?"""
    last = max(int(p.name[1:]) for p in folder.glob("a*"))
    sides = []
    for side in ("b", "a"):
        lines = Path(folder, f"{side}{last}", "runs.jsonl").read_text().splitlines()
        sides.append({(r["task_id"], r["repeat"]): r for r in map(json.loads, lines)})
    keys = [k for k in sides[0].keys() & sides[1].keys() if all(
        s[k]["status"] == "answered" for s in sides)]  # fmt: skip
    return bool(sum(sides[1][k]["correct"] - sides[0][k]["correct"] for k in keys) < 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=100, help="folder pairs a row")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    began = time.perf_counter()
    rows = [regressed(args.pairs, null, rng) for null in (*NULLS, "improved")]
    headers = ["N", "ICC", "null", "regressed", "fell over all pairs"]
    print(tabulate(rows, headers, tablefmt="github"))
    print(f"\n{args.pairs} folder pairs a row; {time.perf_counter() - began:.0f} s.")


if __name__ == "__main__":
    main()
