"""Answers a person labels to measure a judge's error: a sample of a results folder's
graded runs (``loopbench judge sample``), and the filled-in labels read back and counted
against the judge's verdicts (``loopbench judge calibrate``).

The sample is stratified by arm (N runs an arm, chosen at random with a seed; every run of
an arm with fewer) and leaves the judge's verdict out, so the person labels blind. The
records are read a line at a time, so a folder of millions of runs is sampled in the
memory of the sample.
"""

from __future__ import annotations

import csv
import hashlib
import heapq
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from loopbench.harness.errors import BadInput
from loopbench.harness.results.judge_calibration import Calibration, LabelCounts
from loopbench.harness.results.reading import iter_records, read_experiment, replaces, run_key
from loopbench.harness.results.records import RunRecord

#: The sample's columns that identify a run, then what the person reads and labels.
IDENTIFYING = ("run_id", "arm", "task_id", "repeat")
#: Read when the folder's tasks or traces give them; left out of the file otherwise.
OPTIONAL = ("question", "reference", "rubric")
LABEL = "label"

#: What a label may say, case and surrounding spaces aside: the answer is right, or wrong.
RIGHT = frozenset({"pass", "yes", "1", "true", "correct", "right"})
WRONG = frozenset({"fail", "no", "0", "false", "incorrect", "wrong"})


class LabelsUnusable(BadInput):
    """A labels file that cannot be counted: one line naming the file, line and field."""


@dataclass(frozen=True)
class SampleRow:
    """A run to label: what identifies it, and what the person reads."""

    run_id: str
    arm: str
    task_id: str
    repeat: int
    answer: str
    texts: dict[str, str] = field(default_factory=dict)
    """The question, the reference answer and the rubric, those known."""


def graded(record: RunRecord) -> bool:
    """Whether the run has an answer and the judge's verdict on it."""
    return record.answer is not None and record.correct is not None


def _current(folder: Path) -> Iterator[RunRecord]:
    """The folder's records as the readers count them, a line at a time: a run recorded
    again counts as first recorded, a superseded record is left out (only an api_error,
    which has no answer, is superseded, so it is simply never sampled)."""
    seen: dict[tuple[str, str, str, int], str] = {}
    for _, record in iter_records(folder):
        key = run_key(record)
        if key in seen and not replaces(record.supersedes, seen[key]):
            continue
        seen[key] = record.run_id
        yield record


def sample_runs(folder: Path, per_arm: int, seed: int) -> list[RunRecord]:
    """Up to ``per_arm`` graded runs of each arm, chosen at random (the same ones for the
    same seed and folder), in an order that mixes the arms."""
    rng = np.random.default_rng(seed)
    kept: dict[str, list[tuple[float, int, RunRecord]]] = {}
    for order, record in enumerate(_current(folder)):
        priority = float(rng.random())  # drawn for every run: the choice ignores the verdicts
        if not graded(record):
            continue
        heap = kept.setdefault(record.arm, [])
        # A reservoir: the per_arm runs of the highest priority, every run equally likely.
        # guard: judge-sample-at-most-per-arm
        if len(heap) < per_arm:
            heapq.heappush(heap, (priority, order, record))
        elif heap and priority > heap[0][0]:
            heapq.heapreplace(heap, (priority, order, record))
    chosen = [record for heap in kept.values() for _, _, record in heap]
    return [chosen[i] for i in rng.permutation(len(chosen))]


def write_sample(path: Path, rows: Sequence[SampleRow]) -> None:
    """The CSV a person labels: a column for each optional text some row has, the answer,
    and an empty ``label``. Text cells a spreadsheet would read as a formula are written
    as text (``loopbench.harness.spreadsheet``)."""
    from loopbench.harness.spreadsheet import csv_row

    texts = [name for name in OPTIONAL if any(row.texts.get(name) for row in rows)]
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([*IDENTIFYING, *texts, "answer", LABEL])
        for row in rows:
            shown = [row.texts.get(name, "") for name in texts]
            writer.writerow(
                csv_row([row.run_id, row.arm, row.task_id, row.repeat, *shown, row.answer, ""])
            )


def labels_filled(path: Path) -> bool:
    """Whether a file there is a sample with a label filled in (so not to be replaced)."""
    try:
        return any(label for _, _, label in _rows(path))
    except (LabelsUnusable, OSError):
        return False


@dataclass(frozen=True)
class Labels:
    """A labels file read: each labelled run's label (True: right), and its digest."""

    path: Path
    sha256: str
    right: dict[str, bool]
    """By run_id."""
    lines: dict[str, int]
    """Each labelled run's line in the file, to name it."""


#: The longest cell read back: an answer is written whole, and may be longer than the csv
#: module's default limit (128 KiB).
LONGEST_CELL = 1 << 30
#: How a spreadsheet may save the file again: commas, or semicolons where the comma is the
#: decimal mark, or tabs.
DELIMITERS = (",", ";", "\t")


#: Without a run_id column, a run is named by where it stands in the grid.
POSITION = ("arm", "task_id", "repeat")


def position_key(arm: str, task_id: str, repeat: object) -> str:
    """A run named by its arm, task and repeat, as a labels file without run_ids names it."""
    return f"arm {arm!r}, task_id {task_id!r}, repeat {str(repeat).strip()}"


def _names_runs(names: list[str]) -> bool:
    return "run_id" in names or all(name in names for name in POSITION)


def _delimiter(first_line: str) -> str:
    """The delimiter of a file whose header is ``first_line``: the first of ``DELIMITERS``
    that splits it into columns naming runs and a label column."""
    for delimiter in DELIMITERS:
        names = [name.strip() for name in first_line.strip().split(delimiter)]
        if _names_runs(names) and LABEL in names:
            return delimiter
    return ","


def _rows(path: Path) -> list[tuple[int, str, str]]:
    """(line, run, label) of each row, the run its run_id or, in a file without that
    column, its ``position_key``; refused when the columns are missing."""
    # The limit is the csv module's, for the whole process: raised while this file is
    # read, and put back, so that other readers keep theirs.
    limit = csv.field_size_limit(max(csv.field_size_limit(), LONGEST_CELL))
    try:
        return list(_read_rows(path))
    finally:
        csv.field_size_limit(limit)


def _read_rows(path: Path) -> Iterator[tuple[int, str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        delimiter = _delimiter(handle.readline())
        handle.seek(0)
        reader = csv.reader(handle, delimiter=delimiter)
        header = next(reader, None)
        if header is None:
            raise LabelsUnusable(f"{path}:1: empty; expected the CSV `judge sample` writes")
        names = [name.strip() for name in header]
        for needed, present in (("run_id", _names_runs(names)), (LABEL, LABEL in names)):
            # guard: judge-labels-columns-needed
            if not present:
                raise LabelsUnusable(
                    f"{path}:1: no {needed!r} column (nor arm, task_id and repeat); expected "
                    "the CSV `judge sample` writes"
                )
        label_at = names.index(LABEL)
        line = reader.line_num + 1
        for values in reader:
            if any(value.strip() for value in values):
                yield line, _run(names, values), _cell(values, label_at)
            line = reader.line_num + 1


def _named(run: str) -> str:
    """A labelled run as a message names it."""
    return run if run.startswith("arm ") else f"run_id {run!r}"


def _run(names: list[str], values: list[str]) -> str:
    """The run a row labels: its run_id, else its place in the grid."""
    if "run_id" in names:
        return _cell(values, names.index("run_id")).removeprefix("'")
    arm, task_id, repeat = (_cell(values, names.index(name)) for name in POSITION)
    return position_key(arm, task_id.removeprefix("'"), repeat)


def _cell(values: list[str], index: int) -> str:
    return values[index].strip() if index < len(values) else ""


def read_labels(path: Path) -> Labels:
    """The labels filled in (blank ones skipped); refused, naming the line and field, for a
    label that is not one of ``RIGHT`` or ``WRONG`` or a run labelled twice."""
    try:
        data = path.read_bytes()
        right: dict[str, bool] = {}
        lines: dict[str, int] = {}
        for line, run_id, label in _rows(path):
            if not label:
                continue
            said = label.lower()
            # guard: judge-label-value-known
            if said not in RIGHT | WRONG:
                raise LabelsUnusable(
                    f"{path}:{line}: label {label!r} is neither right (pass, yes, 1, true, "
                    "correct, right) nor wrong (fail, no, 0, false, incorrect, wrong)"
                )
            # guard: judge-label-run-once
            if run_id in right:
                raise LabelsUnusable(
                    f"{path}:{line}: {_named(run_id)} is labelled again (first on line "
                    f"{lines[run_id]}); keep one label a run"
                )
            right[run_id], lines[run_id] = said in RIGHT, line
    except UnicodeDecodeError:
        raise LabelsUnusable(f"{path}: not UTF-8 text; expected a CSV file") from None
    except csv.Error as exc:
        raise LabelsUnusable(f"{path}: not a CSV file this reads ({exc})") from None
    return Labels(path, hashlib.sha256(data).hexdigest(), right, lines)


@dataclass(frozen=True)
class Counted:
    """The labels counted against the judge's verdicts."""

    calibration: Calibration
    ungraded: int
    """Labelled runs without the judge's verdict (the judge failed, or no answer): skipped."""


def count_labels(folder: Path, labels: Labels) -> Counted:
    """Each labelled run's label against its record's verdict, over all and by arm; a
    run_id the folder does not hold is refused, naming the labels' line."""
    verdicts: dict[str, tuple[str, bool | None]] = {}
    for record in _current(folder):
        for key in (record.run_id, position_key(record.arm, record.task_id, record.repeat)):
            if key not in labels.right:
                continue
            # guard: judge-label-names-one-run
            if key in verdicts and key != record.run_id:
                raise LabelsUnusable(
                    f"{labels.path}:{labels.lines[key]}: {key} is more than one run of "
                    f"{folder} (one a model); label by run_id"
                )
            verdicts[key] = (record.arm, record.correct if graded(record) else None)
    for run_id, line in labels.lines.items():
        # guard: judge-label-run-in-folder
        if run_id not in verdicts:
            raise LabelsUnusable(
                f"{labels.path}:{line}: {_named(run_id)} is not a run of {folder}; label the "
                "sample `judge sample` wrote of this folder"
            )
    pooled, ungraded = LabelCounts(), 0
    arms: dict[str, LabelCounts] = {}
    for run_id, right in labels.right.items():
        arm, passed = verdicts[run_id]
        if passed is None:
            ungraded += 1
            continue
        for counts in (pooled, arms.setdefault(arm, LabelCounts())):
            _add(counts, right, passed)
    experiment = read_experiment(folder) or {}
    grader = experiment.get("grader")
    calibration = Calibration(
        labels_file=str(labels.path),
        labels_sha256=labels.sha256,
        grader=grader if isinstance(grader, dict) else {},
        pooled=pooled,
        arms=dict(sorted(arms.items())),
    )
    return Counted(calibration, ungraded)


def _add(counts: LabelCounts, right: bool, passed: bool) -> None:
    if right:
        name = "true_pass" if passed else "false_fail"
    else:
        name = "false_pass" if passed else "true_fail"
    setattr(counts, name, getattr(counts, name) + 1)
