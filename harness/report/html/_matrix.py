"""The task-by-arm matrix: correct over graded runs per cell, and the tasks arms disagree on."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from harness.patterns.base import INFRASTRUCTURE_STATUSES
from harness.records import RunRecord
from harness.report.axis import model_and_arm


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
        return any(c.mostly_right for c in cells) and any(c.mostly_wrong for c in cells)

    @property
    def share(self) -> float | None:
        """Correct over graded runs of every arm: how easy the task is."""
        graded = sum(c.graded for c in self.cells if c is not None)
        return sum(c.correct for c in self.cells if c is not None) / graded if graded else None


def task_matrix(
    records: Sequence[RunRecord],
    arms: Sequence[str],
    questions: Mapping[str, str],
    by_model: bool = False,
) -> list[TaskRow]:
    """A row per task (sorted by id), a cell per arm of ``arms`` (named "model · arm"
    with ``by_model``, as the summary names them when runs are on several models)."""
    cells: dict[tuple[str, str], list[RunRecord]] = {}
    for record in records:
        cells.setdefault((record.task_id, arm_label(record, by_model)), []).append(record)
    rows = []
    for task in sorted({record.task_id for record in records}):
        row = []
        for arm in arms:
            runs = cells.get((task, arm))
            graded = [r for r in runs or [] if r.status not in INFRASTRUCTURE_STATUSES]
            correct = sum(r.correct is True for r in graded)
            row.append(Cell(correct, len(graded), len(runs)) if runs else None)
        rows.append(TaskRow(task, questions.get(task, ""), tuple(row)))
    return rows


def arm_label(record: RunRecord, by_model: bool) -> str:
    return model_and_arm(record.model, record.arm) if by_model else record.arm
