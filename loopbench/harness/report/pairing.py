"""Pairing two result sets' runs of an arm by (task, repeat), and saying what was left out
of the pairs, and why: a side's runs the other has no (task, repeat) for, and pairs in
which a side failed on infrastructure (``api_error``, ``pattern_error``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from loopbench.harness.results.statuses import INFRASTRUCTURE_STATUSES

KEYS = ["arm", "task_id", "repeat"]
#: Row numbers, or a mask of rows.
Rows = np.ndarray[Any, Any]


@dataclass(frozen=True)
class Unpaired:
    """One side's runs of an arm that have no partner on the other side."""

    #: Every such run.
    runs: int = 0
    #: Tasks the other side did not run, and how many of ``runs`` are theirs.
    tasks: tuple[str, ...] = ()
    task_runs: int = 0
    #: The others, on tasks both sides ran: their repeat numbers (3 and 4 when this side
    #: has 5 and the other 3), and on how many tasks.
    repeats: tuple[int, ...] = ()
    repeat_tasks: int = 0

    def row(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "tasks": list(self.tasks),
            "task_runs": self.task_runs,
            "repeats": list(self.repeats),
            "repeat_tasks": self.repeat_tasks,
        }


@dataclass(frozen=True)
class LeftOut:
    """What of an arm's runs is in no pair, and why: each side's runs the other side has no
    (task, repeat) for, and the pairs left out because a side failed on infrastructure."""

    before: Unpaired = field(default_factory=Unpaired)
    after: Unpaired = field(default_factory=Unpaired)
    #: Pairs with an infrastructure failure (``api_error``, ``pattern_error``) on a side.
    failed_pairs: int = 0
    #: Tasks both sides ran whose every pair was left out for such a failure.
    tasks_all_failed: tuple[str, ...] = ()
    #: Pairs left out because a side's judge failed to grade its run (``grade_status``):
    #: no verdict to compare until ``grade --regrade``.
    ungraded_pairs: int = 0

    def __bool__(self) -> bool:
        return bool(self.before.runs or self.after.runs or self.failed_pairs or self.ungraded_pairs)

    @property
    def runs_before(self) -> int:
        """The baseline's runs in no pair: its own unpaired runs and its half of each
        failed or ungraded pair."""
        return self.before.runs + self.failed_pairs + self.ungraded_pairs

    @property
    def runs_after(self) -> int:
        """The candidate's, likewise."""
        return self.after.runs + self.failed_pairs + self.ungraded_pairs

    def row(self) -> dict[str, Any]:
        return {
            "before": self.before.row(),
            "after": self.after.row(),
            "failed_pairs": self.failed_pairs,
            "tasks_all_failed": list(self.tasks_all_failed),
            **({"ungraded_pairs": self.ungraded_pairs} if self.ungraded_pairs else {}),
            "runs_before": self.runs_before,
            "runs_after": self.runs_after,
        }


def pairs_of(before: pd.DataFrame, after: pd.DataFrame, arm: str) -> tuple[pd.DataFrame, LeftOut]:
    """The arm's runs matched by (task, repeat), less those that failed on infrastructure on
    either side, and what that left out. One arm at a time: two folders of a million runs
    are paired in parts."""
    return paired_rows(before, after, _rows_of(before, arm), _rows_of(after, arm))


def paired_rows(
    before: pd.DataFrame, after: pd.DataFrame, rows_b: Rows, rows_a: Rows
) -> tuple[pd.DataFrame, LeftOut]:
    """``pairs_of`` the runs at ``rows_b`` of ``before`` and ``rows_a`` of ``after`` (an
    arm's): each (task, repeat) a whole number, the same on both sides, and only the pairs
    kept copied, with every column of both sides."""
    read = ["task_id", "repeat", "status", *(["grade_status"] if _graded(before, after) else [])]
    runs_b, runs_a = before[read].take(rows_b), after[read].take(rows_a)
    keys = _Keys(runs_b, runs_a)
    rows = pd.merge(
        pd.DataFrame({"key": keys.before, "b": np.arange(len(runs_b))}),
        pd.DataFrame({"key": keys.after, "a": np.arange(len(runs_a))}),
        on="key",
    )  # the rows an inner merge on the keys pairs, in its order
    at_b, at_a = rows["b"].to_numpy(), rows["a"].to_numpy()
    usable = ~(_failed(runs_b)[at_b] | _failed(runs_a)[at_a])
    # guard: compare-leaves-out-pairs-the-judge-failed
    ungraded = usable & _not_graded(runs_b, runs_a, at_b, at_a)
    kept = np.flatnonzero(usable & ~ungraded)
    pairs = _joined(before.take(rows_b[at_b[kept]]), after.take(rows_a[at_a[kept]]))
    paired_tasks = keys.task_before[at_b]
    left_out = LeftOut(
        keys.unpaired(runs_b, keys.before, keys.after, keys.task_after),
        keys.unpaired(runs_a, keys.after, keys.before, keys.task_before),
        int((~usable).sum()),
        keys.names(np.setdiff1d(paired_tasks, paired_tasks[usable])),
        int(ungraded.sum()),
    )
    return pairs, left_out


def of_arm(runs: pd.DataFrame, arm: str) -> pd.DataFrame:
    """The runs of ``arm``: ``runs`` itself when it holds no other arm's (not a copy)."""
    same = runs["arm"] == arm
    return runs if same.all() else runs[same]


def _rows_of(runs: pd.DataFrame, arm: str) -> Rows:
    rows: Rows = np.flatnonzero((runs["arm"] == arm).to_numpy())
    return rows


class _Keys:
    """Each run's (task, repeat) of both sides as one whole number, the same on both sides
    for the same pair, and its task's as another."""

    def __init__(self, before: pd.DataFrame, after: pd.DataFrame) -> None:
        tasks = np.concatenate(
            [before["task_id"].to_numpy(object), after["task_id"].to_numpy(object)]
        )
        task_codes, self.tasks = pd.factorize(tasks)
        repeats = np.concatenate([before["repeat"].to_numpy(), after["repeat"].to_numpy()])
        repeat_codes, self.repeats = pd.factorize(repeats)
        keys = task_codes.astype(np.int64) * max(len(self.repeats), 1) + repeat_codes
        self.before, self.after = keys[: len(before)], keys[len(before) :]
        self.task_before, self.task_after = task_codes[: len(before)], task_codes[len(before) :]
        self.repeat_codes = repeat_codes

    def names(self, codes: Rows) -> tuple[str, ...]:
        return _sorted(set(self.tasks[codes]))

    def unpaired(
        self,
        side: pd.DataFrame,
        keys: Rows,
        other: Rows,
        other_tasks: Rows,
    ) -> Unpaired:
        """``side``'s runs with no (task, repeat) in ``other``."""
        alone = ~np.isin(keys, other)
        repeats = max(len(self.repeats), 1)
        tasks = keys[alone] // repeats
        on_own_task = ~np.isin(tasks, other_tasks)
        repeated = alone.copy()
        repeated[alone] = ~on_own_task
        return Unpaired(
            runs=int(alone.sum()),
            tasks=self.names(tasks[on_own_task]),
            task_runs=int(on_own_task.sum()),
            repeats=tuple(int(r) for r in np.unique(side["repeat"].to_numpy()[repeated])),
            repeat_tasks=len(np.unique(tasks[~on_own_task])),
        )


def _joined(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """The pairs' two sides side by side, named as a merge on ``KEYS`` names them: the keys
    once, a column both sides hold with ``_b`` and ``_a``."""
    both = (set(before.columns) & set(after.columns)) - set(KEYS)
    left = before.rename(columns={name: name + "_b" for name in both})
    right = after.drop(columns=KEYS).rename(columns={name: name + "_a" for name in both})
    return pd.concat([left.reset_index(drop=True), right.reset_index(drop=True)], axis=1)


def _failed(runs: pd.DataFrame) -> Rows:
    """The runs that failed on infrastructure."""
    failed: Rows = runs["status"].isin(INFRASTRUCTURE_STATUSES).to_numpy()
    return failed


def _graded(before: pd.DataFrame, after: pd.DataFrame) -> bool:
    """Whether both sides record whether a judge failed to grade a run (``grade_status``)."""
    return "grade_status" in before and "grade_status" in after


def _not_graded(before: pd.DataFrame, after: pd.DataFrame, at_b: Rows, at_a: Rows) -> Rows:
    """The pairs (rows ``at_b`` and ``at_a``) whose run on a side the judge failed to grade
    (``grade_status``; read when both sides record it)."""
    if not _graded(before, after):
        return np.zeros(len(at_b), dtype=bool)
    name = "grade_status"
    failed: Rows = before[name].notna().to_numpy()[at_b] | after[name].notna().to_numpy()[at_a]
    return failed


def _sorted(tasks: set[Any]) -> tuple[str, ...]:
    return tuple(sorted(str(t) for t in tasks))
