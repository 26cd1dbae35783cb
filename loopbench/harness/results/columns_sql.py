"""The run record's fields as columns: their kinds and defaults, and the DuckDB query that
reads them (``loopbench.harness.results.columns``).

The query reads each line's JSON object and its keys, and takes each field's value as the
record model would: a field absent from the line gets the model's default, the value of a
field present must be of the JSON type the record writes (a string field a string, an int
field a whole number, a bool ``true`` or ``false``, a dict an object). A line whose every
field passes is vouched for by the columns. Any other line (a field missing that the model
requires, a null where it refuses one, another JSON type, a key the record does not have
or one given twice, a trailing comma) is handed back whole, for the record model to read
or refuse: lenient conversions (``"5"`` for 5) are the model's to make, and its refusal
is the file:line error.
"""

from __future__ import annotations

import hashlib
import json
import types
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from loopbench.harness.results.grade_kinds import GRADE_KIND, kind_sql
from loopbench.harness.results.records import RunRecord

Kind = Literal["int", "float", "bool", "str", "dict"]
_KINDS: dict[Any, Kind] = {int: "int", float: "float", bool: "bool", str: "str"}
#: Fields nearly every run holds its own value of: not worth sharing equal strings.
_UNIQUE = frozenset({"run_id", "started_at"})
#: Fields the record model fills from another when absent, null or empty, before it checks
#: them (``loopbench.harness.results.legacy.upgrade_record``): the pattern, from the arm.
FILLED = frozenset({"pattern"})


@dataclass(frozen=True)
class Field:
    name: str
    kind: Kind
    nullable: bool
    allowed: tuple[str, ...] = ()
    """For a Literal field (``status``), its values."""
    default: Any = None
    """The value of the field when a line leaves it out."""
    required: bool = False
    """The record model refuses a line without it."""
    least: int | None = None
    """The least number the model takes (``Field(ge=...)``): 0 for counts and amounts."""
    most: int | None = None
    """The greatest (``Field(le=...)``): the schema versions known."""

    @property
    def unique(self) -> bool:
        return self.name in _UNIQUE


def _bound(metadata: list[Any], name: str) -> int | None:
    """The bound ``name`` (``ge``, ``le``) the field's constraints set, if any."""
    for item in metadata:
        inner = item.metadata if isinstance(item, FieldInfo) else [item]  # Field(ge=0) too
        for constraint in inner:
            if getattr(constraint, name, None) is not None:
                return int(getattr(constraint, name))
    return None


def _field(name: str, info: FieldInfo) -> Field:
    annotation, metadata = info.annotation, list(info.metadata)
    args = get_args(annotation)
    union = get_origin(annotation) in (Union, types.UnionType)
    nullable = union and type(None) in args
    base = next(a for a in args if a is not type(None)) if union else annotation
    if get_origin(base) is Annotated:  # a constrained type inside Optional
        base, *more = get_args(base)
        metadata += more
    required = info.default is PydanticUndefined
    default = None if required else info.default
    bounds = {"least": _bound(metadata, "ge"), "most": _bound(metadata, "le")}
    if get_origin(base) is Literal:
        return Field(name, "str", nullable, tuple(get_args(base)), default, required)
    if get_origin(base) is dict:
        return Field(name, "dict", nullable, (), default, required)
    if base not in _KINDS:
        raise TypeError(f"RunRecord.{name}: no column kind for {annotation!r}; add one here")
    return Field(name, _KINDS[base], nullable, (), default, required, **bounds)


#: Every record field, in the record's order (the frame's column order).
FIELDS: dict[str, Field] = {
    name: _field(name, info) for name, info in RunRecord.model_fields.items()
}


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def sql_literal(text: str) -> str:
    """``text`` as an SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _raw(field: Field) -> str:
    """The field's JSON value on the line; NULL when absent or null."""
    return f"_record.{_quoted(field.name)}"


def _number(field: Field) -> str:
    """The field's JSON value as a DOUBLE; null unless a number (a string's quote, true,
    an object do not convert). DuckDB writes a value back as the shortest text that reads
    as the same number, and reads one correctly rounded, as Python does."""
    return f"TRY_CAST({_raw(field)}::VARCHAR AS DOUBLE)"


def _whole(field: Field) -> str:
    """The field's JSON value as a BIGINT; null unless a number within 64 bits (5.5 is
    rounded: ``_typed`` vouches only for the text a BIGINT writes back)."""
    return f"TRY_CAST({_raw(field)}::VARCHAR AS BIGINT)"


def _within(number: str, field: Field) -> str:
    """The SQL condition that ``number`` is within the field's bounds, after an AND."""
    # guard: columns-vouch-only-for-numbers
    least = "" if field.least is None else f" AND {number} >= {field.least}"
    return least + ("" if field.most is None else f" AND {number} <= {field.most}")


def _typed(field: Field) -> str:
    """The SQL condition that the field's JSON value (not null) is of the type it holds."""
    raw = _raw(field)
    if field.kind == "str":
        # guard: string-field-must-hold-string
        check = f"starts_with({raw}, '\"')"
        if field.allowed:
            quoted = (sql_literal(json.dumps(value)) for value in field.allowed)
            check += f" AND {raw}::VARCHAR IN ({', '.join(quoted)})"
        return check
    if field.kind == "int":  # written as a whole number (5.0 and 1e2 are left to the model)
        # guard: int-column-takes-whole-numbers
        return f"{_whole(field)}::VARCHAR = {raw}::VARCHAR" + _within(_whole(field), field)
    if field.kind == "float":  # finite: NaN and Infinity are the model's to refuse
        return f"isfinite({_number(field)})" + _within(_number(field), field)
    if field.kind == "bool":
        return f"{raw}::VARCHAR IN ('true', 'false')"
    return f"starts_with({raw}, '{{')"


def _has(field: Field) -> str:
    """The SQL condition that the line has the field's key, null or not."""
    return f"list_contains(_keys, {sql_literal(field.name)})"


def _present(field: Field) -> str:
    """1 when the line has the field's key, else 0 (a null's key is looked up)."""
    return f"(CASE WHEN {_raw(field)} IS NULL THEN {_has(field)} ELSE true END)::INT"


def _valid(field: Field) -> str:
    """The SQL condition that the line's value of the field is one the columns vouch for:
    typed, or absent where the model has a default, or null where it takes one."""
    raw, typed = _raw(field), _typed(field)
    if field.nullable or field.name in FILLED:
        return f"({raw} IS NULL OR {typed})"
    if field.required:
        return f"({raw} IS NOT NULL AND {typed})"
    # guard: null-where-model-fills-default
    return f"(CASE WHEN {raw} IS NULL THEN NOT {_has(field)} ELSE {typed} END)"


def _default(field: Field) -> str | None:
    """The field's default as an SQL literal of its column's type; None for null, and for
    a dict (``loopbench.harness.results.columns_fill`` tells an absent dict from an empty one). An
    int is never null (0 on a line the model reads), unless the model takes null for it (a
    token kind older records do not hold)."""
    value = field.default
    if field.kind == "int" and not field.nullable:
        return str(int(value or 0))
    if value is None or field.kind == "dict":
        return None
    if field.kind == "str":
        return sql_literal(value)
    if field.kind == "bool":
        return "true" if value else "false"
    return repr(float(value))


def _value(field: Field) -> str:
    """The SQL expression of the field's value: ints as BIGINT, floats as DOUBLE, dicts as
    JSON text."""
    raw = _raw(field)
    values = {
        "str": f"{raw}->>'$'",
        "int": _whole(field),
        "float": _number(field),
        "bool": f"{raw}::VARCHAR = 'true'",
        "dict": f"{raw}::VARCHAR",
    }
    value = values[field.kind]
    default = _default(field)
    if default is not None:
        # guard: field-line-leaves-out-gets
        value = f"coalesce({value}, {default})"
    return f"{value} AS {_quoted(field.name)}"


#: A hash of each run's key (model, arm, task_id, repeat): rows sharing one are compared
#: field by field, the few that do.
RUN_KEY = "_run_key"
#: A digest of each run's answer (as its grader reads it, when recorded) and status
#: (``answer_key``): whether repeats of a task agree, without holding every answer in memory.
ANSWER_KEY = "answer_key"
#: The whole line, for the lines the columns do not vouch for (null for the others).
LINE = "_line"
#: The bytes of each line's JSON as DuckDB read it (``select(..., line_bytes=True)``): a
#: line's length less its newline when it has no space around it, as loopbench writes it.
LINE_BYTES = "_line_bytes"
#: ``answer_key`` in SQL: the first 16 hex digits of the md5 of the same text.
_ANSWER_TEXT = (
    'CASE WHEN "canonical" IS NOT NULL THEN chr(28) || "canonical" '
    'WHEN "answer" IS NULL THEN chr(30) ELSE chr(31) || "answer" END '
    "|| chr(29) || coalesce(\"status\", '')"
)
#: A comma before a closing bracket: DuckDB's parser takes it, JSON (and the model) do not.
#: (``\s`` takes a form feed too, which neither reads as a space: the model refuses it.)
_TRAILING_COMMA = ",\\s*[}\\]]"


def answer_key(answer: str | None, status: str, canonical: str | None = None) -> int:
    """A run's answer and status as one number: equal for runs that agree. The answer is
    compared as its grader read it (``canonical``) when the record says, else as written."""
    if canonical is not None:
        said = "\x1c" + canonical
    else:
        said = "\x1e" if answer is None else "\x1f" + answer
    text = said + "\x1d" + status
    digest = hashlib.md5(text.encode("utf-8", "surrogatepass"), usedforsecurity=False)
    return int(digest.hexdigest()[:16], 16)


def hashed(name: str) -> str:
    """The column of a hash of the string or dict field ``name``'s values (``select``)."""
    return "#" + name


def shareable(field: Field) -> bool:
    """Whether the field's values are strings (or dicts' texts) runs share: fetched with
    their hash (``hashed``), so equal values are found without comparing strings."""
    return field.kind in ("str", "dict") and not field.unique


#: The fields every query reads: a run's key, and what ``ANSWER_KEY`` and ``GRADE_KIND``
#: are made of.
_DERIVED_FROM = (
    *("model", "arm", "task_id", "repeat"),
    *("answer", "canonical", "status"),
    *("correct", "grade_reason"),
)


def select(names: list[str], line_bytes: bool = False) -> str:
    """The query of ``names``, the ``hashed`` column of each ``shareable`` one, ``RUN_KEY``,
    ``ANSWER_KEY``, ``GRADE_KIND`` and ``LINE`` (and ``LINE_BYTES`` when asked) from the file
    given as its one parameter, one row a line, in file order."""
    structure = json.dumps({name: "JSON" for name in FIELDS})
    # guard: key-record-does-not-have
    vouched = " AND ".join(
        [
            f"len(_keys) = {' + '.join(map(_present, FIELDS.values()))}",  # none unknown, twice
            f"NOT regexp_matches(json, {sql_literal(_TRAILING_COMMA)})",
            *map(_valid, FIELDS.values()),
        ]
    )
    needed = list(dict.fromkeys([*names, *_DERIVED_FROM]))
    hashes = [_quoted(hashed(name)) for name in names if shareable(FIELDS[name])]
    raw_hashes = [  # of the value's JSON text: equal texts, equal values
        f"hash({_raw(FIELDS[name])}) AS {_quoted(hashed(name))}"
        for name in names
        if shareable(FIELDS[name])
    ]
    return (
        f"SELECT {', '.join([*map(_quoted, names), *hashes])}, "
        f'hash("model", "arm", "task_id", "repeat") AS {RUN_KEY}, '
        f"('0x' || left(md5({_ANSWER_TEXT}), 16))::UBIGINT AS {ANSWER_KEY}, "
        f"{kind_sql(_quoted('correct'), _quoted('grade_reason'))} AS {GRADE_KIND}, "
        f"CASE WHEN _vouched THEN NULL ELSE json END AS {LINE}"
        f"{f', strlen(json) AS {LINE_BYTES}' if line_bytes else ''} "
        f"FROM (SELECT {', '.join([*(_value(FIELDS[name]) for name in needed), *raw_hashes])}, "
        f"coalesce({vouched}, false) AS _vouched, json "
        "FROM (SELECT json, json_keys(json) AS _keys, "
        f"json_transform(json, {sql_literal(structure)}) AS _record "
        "FROM read_json_objects(?, format = 'newline_delimited', compression = 'none')))"
    )
