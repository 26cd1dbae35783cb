"""A task set's tasks from one data file: a CSV (the csv module), a JSONL file (line by
line), a JSON or YAML list, or a Parquet file (read by DuckDB).

Rows are read by their columns (``tasks.rows``), unless their fields say they are Inspect
samples (``input``) or promptfoo tests (``vars``, ``assert``), read as those tools write
them (``tasks.sample_formats``). A row's place is said as a line number (CSV, JSONL), an
item (JSON, YAML) or a row index from 0 (Parquet).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from graders.registry import GRADERS
from graders.task_models import TaskBase, TaskSetError
from harness.files import read_text
from tasks.rows import Columns, Row, tasks_from_rows
from tasks.sample_formats import inspect_rows, is_inspect, is_promptfoo, promptfoo_rows

#: The grader of a data file's plain rows unless another is named: SQuAD's exact match of
#: the final answer, which reads a text answer as a reader would (a number too); rows with
#: a ``choices`` column are graded by ``choice``.
DEFAULT_GRADER = "em"
SUFFIXES = (".csv", ".jsonl", ".json", ".parquet", ".yaml", ".yml")
EXAMPLE = "a header row naming question, answer and id (or columns mapped to them)"


def is_data_file(path: Path) -> bool:
    return path.suffix.lower() in SUFFIXES and not path.is_dir()


def data_tasks(path: Path, columns: Columns, grader: str | None) -> tuple[list[TaskBase], str]:
    """The file's tasks, and the grader reading them: ``grader``, else its format's."""
    rows = _read_rows(path)
    if not rows:
        raise TaskSetError(f"{path}: holds no rows; expected {EXAMPLE}")
    if is_promptfoo(rows[0]):
        rows, columns, default = promptfoo_rows(rows, columns)
    elif is_inspect(rows[0], columns):
        rows, columns, default = inspect_rows(rows)
    elif "choices" in columns.extras or "choices" in rows[0].values:
        # Options in a row make it a multiple-choice question, as Inspect reads its samples.
        columns = replace(columns, extras={"choices": "choices", **columns.extras})
        default = "choice"
    else:
        default = DEFAULT_GRADER
    name = grader or default
    return tasks_from_rows(rows, columns, GRADERS.lookup(name)), name


def _read_rows(path: Path) -> list[Row]:
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return _parquet_rows(path)
    text = read_text(path, TaskSetError, f"a {suffix[1:].upper()} file of tasks")
    if suffix == ".csv":
        return _csv_rows(path, text)
    if suffix == ".jsonl":
        return _jsonl_rows(path, text)
    return _list_rows(path, text)


def _csv_rows(path: Path, text: str) -> list[Row]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    rows: list[Row] = []
    try:
        for record in reader:
            values = {k: v for k, v in record.items() if k is not None}  # None: extra cells
            rows.append(Row(f"{path}:{reader.line_num}", len(rows) + 1, values))
    except csv.Error as exc:
        raise TaskSetError(f"{path}:{reader.line_num}: not CSV ({exc})") from None
    return rows


def _jsonl_rows(path: Path, text: str) -> list[Row]:
    rows: list[Row] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            where = f"{path}:{number}"
            rows.append(Row(where, len(rows) + 1, _object(where, _json(where, line))))
    return rows


def _list_rows(path: Path, text: str) -> list[Row]:
    """A JSON or YAML file: a list of objects."""
    if path.suffix.lower() == ".json":
        data = _json(str(path), text)
    else:
        import yaml  # only for promptfoo's YAML test files

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
            why = getattr(exc, "problem", None) or " ".join(str(exc).split())
            raise TaskSetError(f"{where}: not YAML ({why})") from None
    if not isinstance(data, list):
        raise TaskSetError(f"{path}: holds a {type(data).__name__}; expected a list of objects")
    return [
        Row(f"{path}: item {n}", n, _object(f"{path}: item {n}", item))
        for n, item in enumerate(data, start=1)
    ]


def _parquet_rows(path: Path) -> list[Row]:
    import duckdb  # a dependency already, slow to import

    if not path.is_file():
        raise TaskSetError(f"{path}: no such file; expected a Parquet file of tasks")
    try:
        with duckdb.connect() as db:
            result = db.execute("SELECT * FROM read_parquet(?)", [str(path)])
            names = [column[0] for column in result.description or []]
            records = result.fetchall()
    except duckdb.Error as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise TaskSetError(f"{path}: not a Parquet file DuckDB reads ({first})") from None
    return [
        Row(f"{path}: row index {i}", i + 1, dict(zip(names, record, strict=True)))
        for i, record in enumerate(records)
    ]


def _json(where: str, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise TaskSetError(f"{where}: not valid JSON ({exc.msg})") from None
    except (ValueError, RecursionError):
        raise TaskSetError(f"{where}: a number too long or nesting too deep to read") from None


def _object(where: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TaskSetError(f"{where}: holds a {type(value).__name__}; expected an object")
    return value
