"""The task-by-arm matrix: correct over graded runs per cell, and the tasks arms disagree on."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from loopbench.harness.report.model_axis import model_and_arm
from loopbench.harness.results.records import RunRecord
from loopbench.harness.results.statuses import INFRASTRUCTURE_STATUSES


@dataclass(frozen=True)
class Cell:
    """One arm's runs of one task. Graded runs are those accuracy counts (api_error and
    pattern_error left out, as in the table)."""

    correct: int
    graded: int
    runs: int

    @property
    def share(self) -> float | None:
        return self.correct / self.graded if self.graded else None

    @property
    def text(self) -> str:
        return f"{self.correct}/{self.graded}" if self.graded else "—"

    @property
    def colour(self) -> str:
        """A light background from red (none correct) through yellow to green (all)."""
        share = self.share
        return "#e5e7eb" if share is None else f"hsl({share * 120:.0f}, 70%, 80%)"

    @property
    def mostly_right(self) -> bool:
        return self.share is not None and self.share > 0.5

    @property
    def mostly_wrong(self) -> bool:
        return self.share is not None and self.share < 0.5


@dataclass(frozen=True)
class TaskRow:
    task: str
    question: str
    cells: tuple[Cell | None, ...]
    """One per arm, in the matrix's arm order; None where the arm did not run the task."""

    @property
    def flip(self) -> bool:
        """Arms disagree: one is mostly right on this task (over half its graded runs
        correct) and another mostly wrong (under half)."""
        cells = [c for c in self.cells if c is not None]
        # guard: flip-needs-one-arm-mostly
        return any(c.mostly_right for c in cells) and any(c.mostly_wrong for c in cells)

    @property
    def share(self) -> float | None:
        """Correct over graded runs of every arm: how easy the task is."""
        graded = sum(c.graded for c in self.cells if c is not None)
        return sum(c.correct for c in self.cells if c is not None) / graded if graded else None


def task_cells(runs: pd.DataFrame, by_model: bool = False) -> dict[tuple[str, str], Cell]:
    """A cell per task and arm (named "model · arm" with ``by_model``, as the summary names
    them when runs are on several models), from ``runs`` as ``read_frame`` reads them:
    model, arm, task_id, status and correct."""
    graded = ~runs["status"].isin(INFRASTRUCTURE_STATUSES)
    counts = (
        pd.DataFrame(
            {
                "task": runs["task_id"],
                "model": runs["model"],
                "arm": runs["arm"],
                "runs": 1,
                "graded": graded,
                "correct": graded & runs["correct"].eq(True),
            }
        )
        .groupby(["task", "model", "arm"], sort=False, observed=True)
        .sum()
    )
    cells: dict[tuple[str, str], Cell] = {}
    numbers = [counts[name].tolist() for name in ("correct", "graded", "runs")]
    for (task, model, arm), *count in zip(counts.index, *numbers, strict=True):
        cells[(str(task), model_and_arm(model, arm) if by_model else str(arm))] = Cell(*count)
    return cells


def task_matrix(
    cells: Mapping[tuple[str, str], Cell], arms: Sequence[str], questions: Mapping[str, str]
) -> list[TaskRow]:
    """A row per task of ``task_cells`` (sorted by id), a cell per arm of ``arms``."""
    return [
        TaskRow(task, questions.get(task, ""), tuple(cells.get((task, arm)) for arm in arms))
        for task in sorted({task for task, _ in cells})
    ]


def arm_label(record: RunRecord, by_model: bool) -> str:
    return model_and_arm(record.model, record.arm) if by_model else record.arm
