"""Tasks from the rows of a data file (a CSV, a JSONL or Parquet file, an Inspect or
promptfoo file): each row's mapped columns made into the grader's task, its answer into
the grader's ``expected`` by the grader's ``from_target``.

Every malformed row is refused (``TaskSetError``) in one line naming the file, the row,
the column and what is expected.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, time
from decimal import Decimal
from typing import Any

from pydantic import ValidationError

from loopbench.graders.registry import GraderInfo
from loopbench.graders.task_models import TaskBase, TaskSetError
from loopbench.harness.errors import BadInput
from loopbench.harness.files import describe_errors
from loopbench.harness.structured import (
    MAX_DEPTH,
    StructureError,
    has_surrogate,
    load_json,
    non_finite,
    without_surrogates,
)

#: What the row's own cells are read as when nothing maps them.
DEFAULT_COLUMNS = {"question": "question", "answer": "answer", "id": "id"}


@dataclass(frozen=True)
class Columns:
    """Which column holds what: the question, the answer, the id (the row's number when
    the file has no such column and none is named), and what else the grader reads from
    a row (``choices``, ``tolerance``), by the name it reads it under."""

    question: str = "question"
    answer: str = "answer"
    id: str = "id"
    id_named: bool = False
    """The id column was named (so a row without it is refused, not numbered)."""
    extras: Mapping[str, str] = field(default_factory=dict)
    slice: str | None = None
    """The column holding a task's slice, if any (a preset's: MMLU's subject)."""
    reference: str | None = None
    """The column holding a task's reference for a reader, if any (GSM8K's worked solution)."""
    also: str = ""
    """What else maps a file's rows, said when a column is missing (``--preset NAME``)."""

    @property
    def maps_any(self) -> bool:
        """Whether a column other than the id's is mapped: the file is read by its columns."""
        return (self.question, self.answer) != ("question", "answer") or bool(self.extras)

    @classmethod
    def mapped(cls, mapping: Mapping[str, str]) -> Columns:
        """Columns from ``--question COL ...`` or taskset.toml's ``[columns]``."""
        known = {k: v for k, v in mapping.items() if k in DEFAULT_COLUMNS}
        extras = {k: v for k, v in mapping.items() if k not in DEFAULT_COLUMNS}
        return cls(**{**DEFAULT_COLUMNS, **known}, id_named="id" in known, extras=extras)


@dataclass(frozen=True)
class Row:
    where: str
    """The file and the row, as a refusal names them: ``data.csv:3``."""
    number: int
    """Its place in the file from 1: the task's id when no column gives one."""
    values: Mapping[str, Any]


def tasks_from_rows(
    rows: Sequence[Row], columns: Columns, grader: GraderInfo, choice: GraderInfo | None = None
) -> list[TaskBase]:
    """Each row as ``grader``'s task, or, given ``choice``, a row offering options (a
    ``choices`` cell, neither null nor empty) as its task; ids unique."""
    if grader.from_target is None:
        raise TaskSetError(
            f"grader {grader.name!r} reads only task sets in its own tasks.jsonl format, not "
            "a data file's rows; name a grader that reads an answer column (e.g. em, exact)"
        )
    tasks: list[TaskBase] = []
    seen: dict[str, str] = {}
    with_choices = replace(columns, extras={"choices": "choices", **columns.extras})
    for row in rows:
        if choice is not None and has_choices(row):
            task = _task(row, with_choices, choice)
        else:
            task = _task(row, columns, grader)
        if task.id in seen:
            raise TaskSetError(
                f"{row.where}: column {columns.id!r}: {task.id!r} is already the id of "
                f"{seen[task.id]}; expected a unique id on every row"
            )
        seen[task.id] = row.where
        tasks.append(task)
    return tasks


def has_choices(row: Row) -> bool:
    """Whether a row offers options: a ``choices`` cell that is neither null nor empty."""
    return row.values.get("choices") not in (None, [], "")


def _task(row: Row, columns: Columns, grader: GraderInfo) -> TaskBase:
    question = _cell(row, columns.question, "the question's text", columns.also)
    answer = _cell(row, columns.answer, "the answer", columns.also)
    answer = _json_checked(row, columns.answer, answer)
    if not isinstance(question, str):
        raise _refusal(row, columns.question, f"expected the question's text, got {question!r}")
    extras = {key: _extra(row, key, column) for key, column in columns.extras.items()}
    assert grader.from_target is not None
    try:
        expected = grader.from_target(answer, extras)
    except (BadInput, ValueError, TypeError, LookupError, RecursionError) as exc:
        raise _refusal(row, columns.answer, f"not an answer {grader.name} reads ({exc})") from None
    # guard: answer-read-as-nan-refused
    if (number := non_finite(expected)) is not None:
        raise _refusal(row, columns.answer, f"{number}; expected a finite number")
    task = {"id": _id(row, columns), "question": question, "expected": expected}
    for key in ("slice", "reference"):
        column = getattr(columns, key)
        if column is not None and isinstance(row.values.get(column), str):
            task[key] = row.values[column]
    try:
        return grader.task_model.model_validate_json(json.dumps(task), strict=True)
    except ValidationError as exc:
        place = exc.errors()[0]["loc"]
        column = {"id": columns.id, "question": columns.question}.get(
            str(place[0]) if place else "", columns.answer
        )
        why = describe_errors(exc, first=True)
        raise _refusal(row, column, f"{why}; {grader.name} reads e.g. {grader.example}") from None


def _json_checked(row: Row, column: str, value: Any) -> Any:
    """A cell as it is, refused if it is JSON's text (an object or a list) that would be
    misread: a key given twice, ``NaN``, nesting too deep. Other text is left to the grader."""
    if isinstance(value, str) and value.lstrip().startswith(("{", "[")):
        try:
            load_json(value)
        except StructureError as exc:
            # guard: json-text-answer-cell-read
            if not exc.invalid:
                raise _refusal(row, column, exc.why) from None
    return value


def _cell(row: Row, column: str, what: str, also: str = "") -> Any:
    """The row's value in ``column``: refused when missing or empty (saying ``also``, what
    else maps a row, when missing)."""
    if column not in row.values:
        has = ", ".join(map(repr, row.values)) or "none"
        raise _refusal(
            row,
            column,
            f"missing (the row's columns: {has}); expected {what}, or map "
            "another column to it (--question/--answer/--id/--choices COL, or taskset.toml's "
            f"[columns]){also}",
        )
    value = row.values[column]
    if value is None or (isinstance(value, str) and not value.strip()):
        raise _refusal(row, column, f"empty; expected {what}")
    return _plain(row, column, value)


def _plain(row: Row, column: str, value: Any, depth: int = 0) -> Any:
    """A cell as JSON's values: a decimal as a float, a date or time as its ISO text (as
    Parquet's DECIMAL, DATE and TIMESTAMP are read), a lone surrogate in a text replaced by
    U+FFFD; bytes or another type, a NaN or an infinity, nesting too deep refused."""
    if isinstance(value, Decimal):
        value = float(value)
    if isinstance(value, date | time):
        return value.isoformat()
    if isinstance(value, str):
        # guard: lone-surrogate-data-file-text
        return without_surrogates(value)
    # guard: nan-cell-refused
    if isinstance(value, float) and non_finite(value) is not None:
        raise _refusal(row, column, f"{value}; expected a finite number")
    # guard: cell-nested-too-deep-refused
    if isinstance(value, list | tuple | dict) and depth >= MAX_DEPTH:
        raise _refusal(row, column, f"lists and objects nested more than {MAX_DEPTH} levels deep")
    if isinstance(value, list | tuple):
        return [_plain(row, column, item, depth + 1) for item in value]
    if isinstance(value, dict):
        return {
            without_surrogates(str(key)): _plain(row, column, item, depth + 1)
            for key, item in value.items()
        }
    if value is None or isinstance(value, int | float):
        return value
    raise _refusal(
        row,
        column,
        f"a {type(value).__name__} value; expected text, a number, a date, or a list or "
        "object of them",
    )


def _id(row: Row, columns: Columns) -> str:
    given = row.values.get(columns.id)
    # guard: lone-surrogate-data-file-id
    if isinstance(given, str) and has_surrogate(given):
        raise _refusal(
            row,
            columns.id,
            f"{given!r} holds a lone surrogate (a \\ud800-\\udfff escape), which no UTF-8 "
            "text holds; expected an id that is text",
        )
    if columns.id_named or given not in (None, ""):
        value = _cell(row, columns.id, "the task's id")
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise _refusal(row, columns.id, f"expected a text or a whole number, got {value!r}")
        return str(value)
    return str(row.number)


def _extra(row: Row, key: str, column: str) -> Any:
    value = _json_checked(row, column, _cell(row, column, f"the {key}"))
    return choices_in(row, column, value) if key == "choices" else value


def choices_in(row: Row, column: str, value: Any) -> list[str]:
    """A choices cell: a list, a JSON list's text (read as ``_json_checked`` reads it), or
    options separated by ``|``; at least two, none blank."""
    if isinstance(value, str):
        with contextlib.suppress(StructureError):  # said below: not a list
            value = load_json(value) if value.lstrip().startswith("[") else value.split("|")
    if not isinstance(value, list) or len(value) < 2:
        raise _refusal(
            row,
            column,
            f"expected a list of two or more options (a JSON list, or options "
            f"separated by '|'), got {value!r}",
        )
    options = [
        without_surrogates(str(v)).strip() if isinstance(v, str | int | float) else ""
        for v in value
    ]
    if not all(options):
        raise _refusal(row, column, f"expected options that are filled texts, got {value!r}")
    return options


def _refusal(row: Row, column: str, why: str) -> TaskSetError:
    return TaskSetError(f"{row.where}: column {column!r}: {why}")
