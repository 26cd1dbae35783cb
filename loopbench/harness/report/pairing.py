"""Pairing two result sets' runs of an arm by (task, repeat), and saying what was left out
of the pairs, and why: a side's runs the other has no (task, repeat) for, and pairs in
which a side failed on infrastructure (``api_error``, ``pattern_error``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from loopbench.harness.results.statuses import INFRASTRUCTURE_STATUSES

KEYS = ["arm", "task_id", "repeat"]


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
    are merged in parts."""
    runs_b, runs_a = of_arm(before, arm), of_arm(after, arm)
    merged = runs_b.merge(runs_a, on=KEYS, suffixes=("_b", "_a"))
    usable = ~(
        merged["status_b"].isin(INFRASTRUCTURE_STATUSES)
        | merged["status_a"].isin(INFRASTRUCTURE_STATUSES)
    )
    # guard: compare-leaves-out-pairs-the-judge-failed
    ungraded = usable & (_not_graded(merged, "_b") | _not_graded(merged, "_a"))
    pairs = merged[usable & ~ungraded]
    left_out = LeftOut(
        _unpaired(runs_b, runs_a),
        _unpaired(runs_a, runs_b),
        int((~usable).sum()),
        _sorted(set(merged["task_id"].unique()) - set(merged.loc[usable, "task_id"].unique())),
        int(ungraded.sum()),
    )
    return pairs, left_out


def of_arm(runs: pd.DataFrame, arm: str) -> pd.DataFrame:
    """The runs of ``arm``: ``runs`` itself when it holds no other arm's (not a copy)."""
    same = runs["arm"] == arm
    return runs if same.all() else runs[same]


def _not_graded(merged: pd.DataFrame, suffix: str) -> pd.Series:
    """The pairs whose run on one side the judge failed to grade (``grade_status``)."""
    name = "grade_status" + suffix
    return merged[name].notna() if name in merged else pd.Series(False, index=merged.index)


def _unpaired(side: pd.DataFrame, other: pd.DataFrame) -> Unpaired:
    """``side``'s runs with no (task, repeat) in ``other``."""
    keys = pd.MultiIndex.from_frame(side[KEYS[1:]])
    alone = side[~keys.isin(pd.MultiIndex.from_frame(other[KEYS[1:]]))]
    on_own_task = ~alone["task_id"].isin(other["task_id"].unique())  # unique(): not row by row
    repeated = alone[~on_own_task]
    return Unpaired(
        runs=len(alone),
        tasks=_sorted(set(alone.loc[on_own_task, "task_id"].unique())),
        task_runs=int(on_own_task.sum()),
        repeats=tuple(sorted(int(r) for r in repeated["repeat"].unique())),
        repeat_tasks=int(repeated["task_id"].nunique()),
    )


def _sorted(tasks: set[Any]) -> tuple[str, ...]:
    return tuple(sorted(str(t) for t in tasks))
