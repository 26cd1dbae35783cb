"""Fetched columns finished as the record model finishes each record.

The query (``loopbench.harness.results.columns_sql``) gives each field's value with its default
filled in, and hands back whole the lines it cannot vouch for. Here those lines are read by the
record model itself (its lenient conversions kept, its refusal raised as ``Refused``),
the dicts are decoded and checked by the model once per distinct text, and what the
model's upgrade does to a record (``loopbench.harness.results.legacy.upgrade_record``) is done once
per distinct value: the pattern read from the arm when empty, a schema-1 arm mapped to its
identity and its options to today's terms.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import TypeAdapter, ValidationError

from loopbench.harness.errors import HarnessFault
from loopbench.harness.results.columns_sql import ANSWER_KEY, FIELDS, RUN_KEY, Field, answer_key
from loopbench.harness.results.grade_kinds import GRADE_KIND, kind_code
from loopbench.harness.results.legacy import pattern_of, schema_1_identity
from loopbench.harness.results.prompt_texts import REF, restored
from loopbench.harness.results.records import RunRecord

Array = np.ndarray[Any, Any]
#: What a record holds besides the field a probe reads (``_probe``).
_PROBE = {"arm": "probe", "task_id": "probe", "repeat": 0, "status": "answered"}
#: Dict fields the record's upgrade leaves as they are, read alone by the model's own
#: validator of the field: a million runs' metrics hold tens of thousands of distinct
#: texts, each a whole record's validation when probed in one.
_ALONE: dict[str, TypeAdapter[Any]] = {"metrics": TypeAdapter(dict[str, float])}
#: Whole numbers an int64 column holds.
_INT64 = (-(2**63), 2**63 - 1)


class Refused(HarnessFault):
    """A line the record model refuses: ``read_records`` says which and why."""


class Unreadable(HarnessFault):
    """A file the columns cannot read as ``read_records`` does; ``why`` says what."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class Shared:
    """A string (or dict text) column fetched chunk by chunk, kept as codes into its
    distinct values: equal values found by their 64-bit hash (``columns_sql.hashed``), one
    object each, shared with the other columns' equal strings (memory)."""

    def __init__(self, strings: dict[str, str]):
        self.strings = strings
        self.code_of: dict[int, int] = {}
        self.values: list[str | None] = []
        self.codes: list[Array] = []

    def add(self, column: pd.Series[Any], hashes: Array) -> None:
        """A chunk's values and their hashes."""
        codes, uniques = pd.factorize(hashes)
        first = np.empty(len(uniques), dtype=np.int64)  # each code's first row
        first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)
        lookup = np.empty(len(uniques), dtype=np.int32)
        for code, key in enumerate(uniques.tolist()):
            known = self.code_of.get(key)
            if known is None:
                known = self.code_of[key] = len(self.values)
                value = column.iat[first[code]]  # a str, or null as None or NaN
                shared = self.strings.setdefault(value, value) if isinstance(value, str) else None
                self.values.append(shared)
            lookup[code] = known
        self.codes.append(lookup[codes])

    def put(self, values: list[str | None], codes: Array) -> None:
        """All the rows at once (a sidecar's): the distinct values and each row's code into
        them."""
        strings = self.strings
        self.values = [strings.setdefault(v, v) if isinstance(v, str) else None for v in values]
        self.codes = [codes]

    def all_codes(self) -> Array:
        """Each row's index into ``values``."""
        return np.concatenate(self.codes)

    def column(self) -> Array:
        values = np.empty(len(self.values), dtype=object)
        values[:] = self.values
        return values[self.all_codes()]


def plain(column: pd.Series[Any], field: Field) -> Array:
    """A fetched number, bool or unshared string column as a numpy array."""
    if field.kind == "int" and field.nullable:  # NaN for null, as pandas reads None
        return column.to_numpy(dtype=np.float64, na_value=np.nan)
    if field.kind == "int":
        return column.to_numpy(dtype=np.int64)
    if field.kind == "float":
        return column.to_numpy(dtype=np.float64, na_value=np.nan)
    if field.kind == "bool":
        values = column.to_numpy(dtype=object, copy=True)
        values[column.isna().to_numpy()] = None
        return values
    return column.to_numpy(dtype=object)


def plain_fetched(values: Array, field: Field) -> Array:
    """``plain`` of a column DuckDB gave as a numpy array, masked where null
    (``fetchnumpy``): the same values and dtype."""
    mask = np.ma.getmaskarray(values)
    data = np.ma.getdata(values)
    if (field.kind == "int" and field.nullable) or field.kind == "float":
        floats = data.astype(np.float64)  # a new array: its nulls can be set
        floats[mask] = np.nan
        return floats
    if field.kind == "int":
        return data.astype(np.int64, copy=False)
    objects = data.astype(object)
    if field.kind == "bool" or mask.any():
        objects[mask] = None
    return objects


def finish(
    columns: dict[str, Array], texts: dict[str, Shared], lines: dict[int, str], folder: Path
) -> None:
    """Turn fetched columns and the dicts' JSON ``texts`` into the
    values records hold, in ``columns``, the prompt texts of ``folder``'s prompts/ put back
    in the options; ``lines`` are the rows' lines the query did not vouch for, by row.
    ``Refused`` when the record model refuses one of those lines or a dict."""
    records = {row: _record(text) for row, text in lines.items()}
    vouched = np.ones(len(columns["arm"]), dtype=bool)
    vouched[list(records)] = False
    schema_1 = _upgrade(columns, vouched)
    for name, shared in texts.items():
        columns[name] = _dicts(FIELDS[name], shared, vouched, schema_1, columns["pattern"])
    for row, record in records.items():
        # guard: line-columns-do-not-vouch
        _patch(columns, row, record)
    options = texts.get("options")
    if options is not None and (records or any(REF in t for t in options.values if t)):
        # guard: columns-put-prompt-texts-back
        columns["options"] = _with_prompts(columns["options"], folder)
    if records or schema_1.any():  # a run's key may differ from the line's
        keys = pd.DataFrame({n: columns[n] for n in ("model", "arm", "task_id", "repeat")})
        columns[RUN_KEY] = pd.util.hash_pandas_object(keys, index=False).to_numpy()


def _with_prompts(options: Array, folder: Path) -> Array:
    """The options column with the prompt texts each refers to in their place; each distinct
    dict (rows share them) restored once."""
    done: dict[int, Any] = {}
    for row, value in enumerate(options):
        if isinstance(value, dict):
            found = done.get(id(value))
            if found is None:
                found = done[id(value)] = restored(value, folder)
            if found is not value:
                options[row] = found
    return options


def _record(line: str) -> RunRecord:
    try:
        return RunRecord.model_validate_json(line)
    except ValidationError:
        # guard: line-model-refuses-refused-column
        raise Refused from None


def _mapped(values: Array, upgrade: Callable[[str], str]) -> Array:
    """``upgrade`` of each value, called once per distinct value."""
    codes, uniques = pd.factorize(values)
    return np.array([upgrade(u) for u in uniques], dtype=object)[codes]


def _upgrade(columns: dict[str, Array], vouched: Array) -> Array:
    """The pattern read from the arm where empty, and schema-1 arms as identities, on the
    vouched rows (the model upgraded the others); which rows are schema 1."""
    arm, pattern = columns["arm"], columns["pattern"]
    empty = vouched & (pattern == "")
    # guard: pattern-read-from-arm-when
    if empty.any():
        pattern[empty] = _mapped(arm[empty], pattern_of)
    schema_1: Array = vouched & (columns["schema_version"] == 1)
    if schema_1.any():
        # guard: schema-1-arm-read-as
        arm[schema_1] = _mapped(arm[schema_1], schema_1_identity)
    return schema_1


def _dicts(field: Field, texts: Shared, vouched: Array, schema_1: Array, patterns: Array) -> Array:
    """A dict column's texts as the model reads them, each distinct text once (a schema-1
    row's options with its pattern); absent ones as the field's default."""
    codes = texts.all_codes()
    codes[~vouched] = -1  # the model read these rows: patched later
    objects = np.empty(len(texts.values) + 1, dtype=object)  # absent (code -1) last
    # guard: absent-dict-gets-field-default
    objects[:-1] = [field.default if t is None else _probe(field, t) for t in texts.values]
    objects[-1] = field.default
    values = objects[codes]
    if field.name == "options" and schema_1.any():
        held = np.array([t is not None for t in texts.values] + [False])[codes]
        # guard: schema-1-record-options-read
        if (upgraded := schema_1 & held).any():
            text_of = np.array([*texts.values, None], dtype=object)
            pairs = zip(patterns[upgraded], text_of[codes[upgraded]], strict=True)
            pair_codes, uniques = pd.factorize(_objects(list(pairs)))
            values[upgraded] = _objects([_probe(field, pair) for pair in uniques])[pair_codes]
    return values


def _objects(values: list[Any]) -> Array:
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array


def _probe(field: Field, text: str | tuple[str, str]) -> Any:
    """The field's value in a record holding it as ``text`` (a ``(pattern, text)`` pair for
    the options of a schema-1 record of that pattern): the model's reading and upgrade."""
    probe: dict[str, Any] = _PROBE
    if isinstance(text, tuple):
        pattern, text = text
        probe = _PROBE | {"schema_version": 1, "arm": pattern, "pattern": pattern}
    line = f"{json.dumps(probe)[:-1]}, {json.dumps(field.name)}: {text}}}"
    try:
        alone = _ALONE.get(field.name)
        if alone is not None:
            return alone.validate_json(text)
        return getattr(RunRecord.model_validate_json(line), field.name)
    except ValidationError:
        # guard: dict-model-refuses-refused-column
        raise Refused from None


def _patch(columns: dict[str, Array], row: int, record: RunRecord) -> None:
    """Set row ``row`` of every column to the record's values."""
    for name, values in columns.items():
        if name == ANSWER_KEY:
            values[row] = answer_key(record.answer, record.status, record.canonical)
        elif name == GRADE_KIND:
            values[row] = kind_code(record.correct, record.grade_reason)
        elif name != RUN_KEY:
            value = getattr(record, name)
            if (
                FIELDS[name].kind == "int"
                and value is not None
                and not _INT64[0] <= value <= _INT64[1]
            ):
                raise Unreadable(f"{name} {value} is beyond a 64-bit integer")
            values[row] = np.nan if value is None and values.dtype.kind == "f" else value
