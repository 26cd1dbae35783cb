"""The run record's fields as columns: their kinds, and the DuckDB query that reads and
checks them (``harness.columns``).

String, bool and dict fields are read as raw JSON and checked for the JSON type the record
writes: a string field holds a string (a number there is refused, as the record model
refuses it), a bool ``true`` or ``false``, a dict an object. A row failing a check stops
the query, and the caller reads the file line by line instead. Numbers are read as DOUBLE,
converting as the record model does (``"5"`` and ``5.0`` are 5), and the caller checks
that an int field holds a whole number.
"""

from __future__ import annotations

import hashlib
import json
import types
from dataclasses import dataclass
from typing import Any, Literal, Union, get_args, get_origin

import numpy as np
import pandas as pd

from harness.records import RunRecord

Kind = Literal["int", "float", "bool", "str", "dict"]
_KINDS: dict[Any, Kind] = {int: "int", float: "float", bool: "bool", str: "str"}
#: Fields nearly every run holds its own value of: not worth sharing equal strings.
_UNIQUE = frozenset({"run_id", "started_at"})


class BadValue(ValueError):
    """A dict field holds what the record model would refuse."""


@dataclass(frozen=True)
class Field:
    name: str
    kind: Kind
    nullable: bool
    allowed: tuple[str, ...] = ()
    """For a Literal field (``status``), its values."""

    @property
    def unique(self) -> bool:
        return self.name in _UNIQUE

    def decode(self, texts: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """JSON objects as dicts, each distinct text decoded once; ``BadValue`` for a metric
        that is not a number."""
        codes, uniques = pd.factorize(texts)
        decoded = [json.loads(text) for text in uniques]
        if self.name == "metrics":
            decoded = [_numbers(value) for value in decoded]
        objects = np.empty(len(decoded) + 1, dtype=object)  # None (code -1) last
        objects[:-1] = decoded
        return objects[codes]


def _numbers(metrics: dict[str, Any]) -> dict[str, float]:
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in metrics.values()):
        raise BadValue("a metric that is not a number")
    return {key: float(value) for key, value in metrics.items()}


def _field(name: str, annotation: Any) -> Field:
    args = get_args(annotation)
    union = get_origin(annotation) in (Union, types.UnionType)
    nullable = union and type(None) in args
    base = next(a for a in args if a is not type(None)) if union else annotation
    if get_origin(base) is Literal:
        return Field(name, "str", nullable, tuple(get_args(base)))
    if get_origin(base) is dict:
        return Field(name, "dict", nullable)
    if base not in _KINDS:
        raise TypeError(f"RunRecord.{name}: no column kind for {annotation!r}; add one here")
    return Field(name, _KINDS[base], nullable)


#: Every record field, in the record's order (the frame's column order).
FIELDS: dict[str, Field] = {
    name: _field(name, info.annotation) for name, info in RunRecord.model_fields.items()
}


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def sql_literal(text: str) -> str:
    """``text`` as an SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _valid(field: Field) -> str | None:
    """The SQL condition that the raw JSON value is what the record writes; numbers are read
    as DOUBLE and checked in ``harness.columns`` (an integer, finite)."""
    raw, text = _quoted(field.name), f"{_quoted(field.name)}::VARCHAR"
    checks = {
        "str": f"starts_with({text}, '\"')",
        "bool": f"{text} IN ('true', 'false')",
        "dict": f"starts_with({text}, '{{')",
    }
    if field.kind not in checks:
        return None
    check = checks[field.kind]
    if field.allowed:
        check += f" AND {raw}->>'$' IN ({', '.join(map(sql_literal, field.allowed))})"
    if field.name == "pattern":
        check += f" AND {raw}->>'$' <> ''"  # read from the arm when empty: the slow path
    return f"({raw} IS NULL OR {check})" if field.nullable else f"coalesce({check}, false)"


def _value(field: Field) -> str:
    """The SQL expression of the field's value, typed."""
    raw, text = _quoted(field.name), f"{_quoted(field.name)}::VARCHAR"
    values = {
        "str": f"{raw}->>'$'",
        "int": raw,
        "float": raw,
        "bool": f"{text} = 'true'",
        "dict": text,
    }
    return f"{values[field.kind]} AS {raw}"


#: A hash of each run's key (model, arm, task_id, repeat): rows sharing one are compared
#: field by field, the few that do.
RUN_KEY = "_run_key"
#: A digest of each run's answer and status (``answer_key``): whether repeats of a task
#: agree, without holding every answer in memory.
ANSWER_KEY = "answer_key"
#: ``answer_key`` in SQL: the first 16 hex digits of the md5 of the same text.
_ANSWER_TEXT = (
    "CASE WHEN \"answer\"->>'$' IS NULL THEN chr(30) ELSE chr(31) || (\"answer\"->>'$') END "
    "|| chr(29) || coalesce(\"status\"->>'$', '')"
)


def answer_key(answer: str | None, status: str) -> int:
    """A run's answer and status as one number: equal for runs that agree."""
    text = ("\x1e" if answer is None else "\x1f" + answer) + "\x1d" + status
    digest = hashlib.md5(text.encode("utf-8", "surrogatepass"), usedforsecurity=False)
    return int(digest.hexdigest()[:16], 16)


def select(names: list[str]) -> str:
    """The query of ``names``, ``RUN_KEY`` and ``ANSWER_KEY`` from the file given as its one
    parameter, in file order; it fails on the first row any field of which is not as the
    record writes."""
    columns = ", ".join(
        f"{sql_literal(name)}: '{'DOUBLE' if field.kind in ('int', 'float') else 'JSON'}'"
        for name, field in FIELDS.items()
    )
    valid = " AND ".join(filter(None, map(_valid, FIELDS.values())))
    return (
        f"SELECT {', '.join(_value(FIELDS[name]) for name in names)}, "
        f'hash("model"->>\'$\', "arm"->>\'$\', "task_id"->>\'$\', "repeat") AS {RUN_KEY}, '
        f"('0x' || left(md5({_ANSWER_TEXT}), 16))::UBIGINT AS {ANSWER_KEY} "
        "FROM read_json(?, format = 'newline_delimited', compression = 'none', "
        f"columns = {{{columns}}}) "
        f"WHERE CASE WHEN {valid} THEN true ELSE error('not as loopbench writes it') END"
    )
