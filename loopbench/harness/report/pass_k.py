"""pass@k and pass^k: what repeats say about k tries at a task.

For a task run n times with c right (n >= k):

- pass@k, the chance that at least one of k tries is right, by the unbiased estimator
  1 - C(n - c, k) / C(n, k) (Chen et al., 2021, HumanEval);
- pass^k, the chance that all k tries are right, by C(c, k) / C(n, k), unbiased the same
  way (each is the share of the k-subsets of the n runs that pass).

Each is averaged over the tasks with at least k runs, every task weighing the same, and
has an interval about tasks like these: Wilson's on the effective number of samples
(``stats.clustered_interval``), which at most counts the disjoint k-run groups the runs
make. pass@1 is the mean of each task's share of right runs.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from loopbench.harness.stats.intervals import clustered_interval

Kind = Literal["@", "^"]
_NAME = re.compile(r"pass([@^])([1-9][0-9]*)")


@dataclass(frozen=True)
class PassK:
    kind: Kind
    k: int

    @property
    def name(self) -> str:
        return f"pass{self.kind}{self.k}"

    @classmethod
    def parse(cls, text: str) -> PassK | None:
        """``pass@5`` or ``pass^3``; None for any other name."""
        match = _NAME.fullmatch(text.strip())
        return cls(match.group(1), int(match.group(2))) if match else None  # type: ignore[arg-type]

    def per_task(self, runs: np.ndarray, right: np.ndarray) -> np.ndarray:
        """The estimate for each task (n runs, c right); tasks with n < k are NaN."""
        k = self.k
        values = np.full(len(runs), math.nan)
        for i, (n, c) in enumerate(zip(runs.astype(int), right.astype(int), strict=True)):
            if n >= k:
                if self.kind == "@":
                    # guard: pass-k-unbiased-estimator
                    values[i] = 1 - math.comb(n - c, k) / math.comb(n, k)
                else:
                    # guard: pass-k-unbiased-estimator-2
                    values[i] = math.comb(c, k) / math.comb(n, k)
        return values

    def summary(self, tasks: pd.Series, correct: pd.Series) -> dict[str, float]:
        """The estimate over tasks with at least k runs, its interval, and how many tasks."""
        return self.of_counts(*task_counts(tasks, correct))

    def of_counts(self, runs: np.ndarray, right: np.ndarray) -> dict[str, float]:
        """``summary`` from each task's runs and right runs (``task_counts``)."""
        values = self.per_task(runs, right)
        kept = ~np.isnan(values)
        name = self.name
        if not kept.any():
            return {
                name: math.nan,
                f"{name}_low": math.nan,
                f"{name}_high": math.nan,
                f"{name}_tasks": 0.0,
            }
        groups = float((runs[kept] // self.k).sum())  # disjoint k-run groups: the most
        # The estimate as the interval computes its share, which it holds to the last ulp.
        estimate = float(values[kept].sum()) / float(kept.sum())
        low, high = clustered_interval(values[kept], np.ones(int(kept.sum())), most=groups)
        return {
            name: estimate,
            f"{name}_low": low,
            f"{name}_high": high,
            f"{name}_tasks": float(kept.sum()),
        }


def task_counts(tasks: pd.Series, correct: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Each task's runs and runs right, the tasks in the order they first come (a null
    task in none): counted once for every pass@k and pass^k of the same runs."""
    codes, found = pd.factorize(tasks)
    known = codes >= 0
    right = known & correct.eq(True).to_numpy()
    runs = np.bincount(codes[known], minlength=len(found))
    return runs, np.bincount(codes[right], minlength=len(found))


def parse_all(names: list[str]) -> tuple[list[PassK], list[str]]:
    """The pass@k / pass^k among ``names``, and the other names."""
    measures, rest = [], []
    for name in names:
        measure = PassK.parse(name)
        if measure is None:
            rest.append(name)
        else:
            measures.append(measure)
    return measures, rest
