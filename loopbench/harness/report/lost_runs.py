"""Runs lost to failures, and whether they fell on the harder tasks.

Accuracy leaves out runs that ended in ``api_error`` or ``pattern_error``: they say
nothing of the pattern. That is harmless when failures strike tasks at random. When they
strike the hard tasks more (a long reasoning chain times out, a long context is refused),
the runs left are the easier ones: accuracy is too high and its interval, about tasks
like these, misses the truth far more often than it says (coverage .61-.68 at 100 tasks,
``bench/lost_runs.py``).

Whether a task is hard is read from runs that did not fail: the other arms' graded runs
of it (or, with one arm, this arm's own runs of it that survived). Each task with such
runs has a score, their share right. The tasks where this arm lost runs are compared with
the rest by the difference of their mean scores, in a permutation test over tasks (under
failures blind to difficulty, any set of that many tasks is as likely to be the one that
lost runs). The warning is given below ``UNEVEN_P``: ``bench/lost_runs.py`` measures how
often that warns when failures are random and when they hit hard tasks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from loopbench.harness.results.statuses import INFRASTRUCTURE_STATUSES

#: A p below this says the failures were not spread evenly over tasks of different difficulty.
UNEVEN_P = 0.01
#: Random reassignments of the lost tasks the permutation test draws (a fixed seed: the
#: same table every time).
PERMUTATIONS = 4000
#: From this many tasks in the smaller group the difference of means is normal enough.
NORMAL_FROM = 50
#: Above this many (permutations x tasks) draws, tasks are drawn with replacement.
EXACT_DRAWS = 4_000_000
#: What each reference is called in a footnote.
OTHER_ARMS, OWN_RUNS = "other arms", "own runs"


@dataclass(frozen=True)
class LostRuns:
    """One arm's runs lost to failures, and the difficulty of the tasks they fell on."""

    runs: int
    """Runs that ended in api_error or pattern_error."""
    tasks: int
    """Tasks with at least one such run."""
    of_tasks: int
    """Tasks the arm ran."""
    reference: str
    """Whose runs score a task's difficulty: OTHER_ARMS, OWN_RUNS, or "" (none lost)."""
    lost_accuracy: float
    """The reference's accuracy on the tasks that lost runs (the mean of each task's)."""
    kept_accuracy: float
    """The same on the tasks that lost none."""
    p_value: float
    """Permutation test of the difference; nan when there is nothing to compare."""

    @property
    def uneven(self) -> float:
        """1 when the failures fell on tasks harder or easier than the rest (p below
        UNEVEN_P), 0 when not shown, nan when nothing could be compared."""
        # guard: failures-hard-tasks-warned-about
        return math.nan if math.isnan(self.p_value) else float(self.p_value < UNEVEN_P)

    def columns(self) -> dict[str, object]:
        return {
            "runs_lost": self.runs,
            "tasks_lost": self.tasks,
            "tasks": self.of_tasks,
            "lost_compared_with": self.reference,
            "lost_tasks_reference_accuracy": self.lost_accuracy,
            "other_tasks_reference_accuracy": self.kept_accuracy,
            "lost_tasks_p": self.p_value,
            "failures_uneven": self.uneven,
        }


#: The columns of the other arms' runs ``lost_runs`` reads.
LOST_READS = ["task_id", "status", "correct"]


def lost_runs(runs: pd.DataFrame, others: pd.DataFrame) -> LostRuns:
    """``runs``: one arm's runs, every status; ``others``: other arms' runs (any status) of
    the same tasks, empty with one arm."""
    graded = others[~others["status"].isin(INFRASTRUCTURE_STATUSES)]
    return lost_runs_scored(runs, None if graded.empty else task_scores(graded))


def task_scores(graded: pd.DataFrame) -> pd.Series:
    """Each task's share of these graded runs right, by task_id in sorted order."""
    return graded["correct"].eq(True).groupby(graded["task_id"].to_numpy()).mean()


def lost_runs_scored(runs: pd.DataFrame, other_scores: pd.Series | None) -> LostRuns:
    """``lost_runs`` from the other arms' ``task_scores`` of their graded runs of these
    tasks (None when they have none): a table of many arms counts each arm's once."""
    failed = runs["status"].isin(INFRASTRUCTURE_STATUSES)
    lost = set(runs.loc[failed, "task_id"].unique())  # unique(): not a row at a time
    tasks = set(runs["task_id"].unique())
    if not lost:
        return LostRuns(0, 0, len(tasks), "", math.nan, math.nan, math.nan)
    scores, reference = other_scores, OTHER_ARMS
    if scores is None:
        scores, reference = task_scores(runs[~failed]), OWN_RUNS
    scores = scores[scores.index.isin(tasks)]
    hit = scores.index.isin(lost)
    values = scores.to_numpy(dtype=float)
    lost_accuracy = float(values[hit].mean()) if hit.any() else math.nan
    kept_accuracy = float(values[~hit].mean()) if (~hit).any() else math.nan
    p = permutation_p(values, hit) if hit.any() and (~hit).any() else math.nan
    return LostRuns(
        int(failed.sum()), len(lost), len(tasks), reference, lost_accuracy, kept_accuracy, p
    )


def permutation_p(scores: np.ndarray, chosen: np.ndarray) -> float:
    """Two-sided p of the difference between the mean score of the ``chosen`` tasks and the
    others', against the same difference for that many tasks chosen at random."""
    n, k = len(scores), int(chosen.sum())
    small = min(k, n - k)  # the smaller group: its mean alone sets the difference
    spread = float(scores.std(ddof=1)) if n > 1 else 0.0
    if spread == 0:
        return 1.0
    observed = abs(_difference(float(scores[chosen].sum()), k, float(scores.sum()), n))
    if small >= NORMAL_FROM:
        z = observed / (spread * math.sqrt(1 / k + 1 / (n - k)))
        return math.erfc(z / math.sqrt(2))
    rng = np.random.default_rng(0)
    if PERMUTATIONS * n <= EXACT_DRAWS:
        drawn = np.argpartition(rng.random((PERMUTATIONS, n)), small, axis=1)[:, :small]
    else:  # many tasks, few in the smaller group: with replacement is as good
        drawn = rng.integers(0, n, (PERMUTATIONS, small))
    sums = scores[drawn].sum(axis=1)
    total = float(scores.sum())
    if small != k:  # the drawn group is the unchosen one: its complement is the chosen
        sums = total - sums
    differences = np.abs(_difference(sums, k, total, n))
    beyond = int((differences >= observed * (1 - 1e-12)).sum())
    return (beyond + 1) / (PERMUTATIONS + 1)


def _difference(chosen_sum: np.ndarray | float, k: int, total: float, n: int) -> np.ndarray:
    """Mean score of the k chosen tasks minus the mean of the other n - k."""
    difference: np.ndarray = np.asarray(chosen_sum / k - (total - chosen_sum) / (n - k))
    return difference
