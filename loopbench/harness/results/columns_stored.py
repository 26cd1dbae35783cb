"""The sidecar's file: each column of runs.jsonl's query as numpy arrays in one zip.

From Parquet, DuckDB took some 12 ms to decode and hand over each column of a million runs:
a few dozen columns were most of a command's read. Here each column is ``.npy`` members
stored as they lie (a few ms each), a shared string column comes as codes into its
distinct values (equal values found once, when written) and a string column as one UTF-8
text split once.

A column is one of:
- ``number``: ``data`` (ints in the fewest bytes that hold them) and, where any is null,
  ``nulls``; read back in the dtype DuckDB gave.
- ``shared``: ``codes`` into its distinct values, held as a ``text``.
- ``text``: ``text``, each value's UTF-8 followed by a NUL, ``ends`` (each value's end,
  its NUL's offset) and, where any is null, ``nulls``.
- ``lines``: ``rows`` and their ``text``: the few rows that hold one.

``manifest`` (JSON, as bytes) says which each column is, the rows and the key the sidecar
was written for. What is read is checked before it is used (a member stored as written,
no larger than the limit given, of the kind and length the manifest says, offsets within
the text): anything else is ``Damaged``, and the columns are read from runs.jsonl again.
Nothing is unpickled.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

import numpy as np

from loopbench.harness.errors import HarnessFault

Array = np.ndarray[Any, Any]
#: The dtypes a number column is read back in (DuckDB's for the query's columns).
NUMBER_DTYPES = frozenset({"int64", "uint64", "float64", "bool", "int8", "int32"})
#: Ints are stored in the first of these that holds every value.
_NARROW = (np.int8, np.int16, np.int32)
_END = "\x00"


class Damaged(HarnessFault):
    """A sidecar file that is not what its manifest says (or not one at all): a signal,
    caught where the sidecar is read, which reads runs.jsonl instead."""


def write_stored(target: Path, key: str, columns: Iterable[tuple[str, str, Any]]) -> None:
    """Write ``columns`` (name, kind, value) to ``target``: a number column's value is an
    array (masked where null), a shared one's its (codes, distinct values), a text one's
    its values (None for null) and a lines one's its {row: line}."""
    manifest: dict[str, Any] = {"key": key, "rows": None, "columns": {}}
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for number, (name, kind, value) in enumerate(columns):
            parts, rows, column = _parts(kind, value)
            if rows is not None:
                manifest["rows"] = rows
            manifest["columns"][name] = {"at": number, "as": kind} | column
            for part, array in parts.items():
                with archive.open(f"{number}.{part}.npy", "w", force_zip64=True) as handle:
                    np.lib.format.write_array(handle, array, allow_pickle=False)
        with archive.open("manifest.npy", "w") as handle:
            text = np.frombuffer(json.dumps(manifest).encode(), dtype=np.uint8)
            np.lib.format.write_array(handle, text, allow_pickle=False)


def _parts(kind: str, value: Any) -> tuple[dict[str, Array], int | None, dict[str, Any]]:
    """A column's members, its rows (None for lines) and what the manifest says of it."""
    if kind == "number":
        data, nulls = np.ma.getdata(value), np.ma.getmaskarray(value)
        parts = {"data": _narrowed(data)} | ({"nulls": nulls} if nulls.any() else {})
        return parts, len(data), {"dtype": str(data.dtype)}
    if kind == "shared":
        codes, values = value
        return {"codes": codes} | _text_parts(values), len(codes), {"values": len(values)}
    if kind == "text":
        return _text_parts(list(value)), len(value), {}
    rows = np.fromiter(value, dtype=np.int64, count=len(value))
    return {"rows": rows} | _text_parts(list(value.values())), None, {"values": len(value)}


def _narrowed(data: Array) -> Array:
    if data.dtype != np.int64 or not len(data):
        return data
    least, most = int(data.min()), int(data.max())
    for dtype in _NARROW:
        if np.iinfo(dtype).min <= least and most <= np.iinfo(dtype).max:
            return data.astype(dtype)
    return data


def _text_parts(values: list[str | None]) -> dict[str, Array]:
    """Each value's UTF-8 then a NUL, in one text; each value's end; which are null."""
    nulls: Array = np.fromiter((v is None for v in values), dtype=bool, count=len(values))
    texts = ["" if v is None else v for v in values]
    joined = "".join(t + _END for t in texts)
    if joined.isascii():
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    else:
        encoded = (t.encode("utf-8", "surrogatepass") for t in texts)
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(texts))
    ends: Array = np.cumsum(lengths + 1) - 1
    text: Array = np.frombuffer(joined.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    return {"text": text, "ends": ends} | ({"nulls": nulls} if nulls.any() else {})


class Stored:
    """A sidecar file opened for reading; ``Damaged`` from any method for one that is not
    as its manifest says. Members larger than ``limit`` bytes are refused unread."""

    def __init__(self, path: Path, limit: int) -> None:
        self.limit = limit
        try:
            self.archive = zipfile.ZipFile(path)
        except (OSError, zipfile.BadZipFile, ValueError) as exc:
            raise Damaged(str(exc)) from None
        try:
            manifest = json.loads(self._member("manifest.npy", np.uint8).tobytes())
            self.key = str(manifest["key"])
            self.rows = int(manifest["rows"])
            self.columns: dict[str, dict[str, Any]] = dict(manifest["columns"])
        except (Damaged, ValueError, KeyError, TypeError, RecursionError) as exc:
            self.archive.close()
            raise Damaged(str(exc)) from None

    def __enter__(self) -> Stored:
        return self

    def __exit__(self, *_: object) -> None:
        self.archive.close()

    def number(self, name: str) -> Array:
        """The column's values in DuckDB's dtype, masked where null."""
        column = self._column(name, "number")
        dtype = column.get("dtype")
        if dtype not in NUMBER_DTYPES:
            raise Damaged(f"{name}: dtype {dtype!r}")
        data = self._part(column, "data", self.rows, "iufb").astype(dtype, copy=False)
        nulls = self._nulls(column, self.rows)
        return data if nulls is None else np.ma.MaskedArray(data, nulls)

    def shared(self, name: str) -> tuple[list[str | None], Array]:
        """The column's distinct values and each row's code into them (int32)."""
        column = self._column(name, "shared")
        values = self._texts(column, int(column.get("values", -1)))
        codes = self._part(column, "codes", self.rows, "iu")
        # guard: sidecar-codes-within-values
        if len(codes) and (int(codes.min()) < 0 or int(codes.max()) >= len(values)):
            raise Damaged(f"{name}: a code beyond its values")
        return values, codes.astype(np.int32, copy=False)

    def texts(self, name: str) -> Array:
        """The column's values as an object array, None where null."""
        texts = self._texts(self._column(name, "text"), self.rows)
        values = np.empty(len(texts), dtype=object)
        values[:] = texts
        return values

    def values_at(self, name: str, rows: Array) -> Array:
        """The values of a shared or text column at ``rows`` (in range), None where null."""
        column = self.columns.get(name)
        if isinstance(column, dict) and column.get("as") == "shared":
            values, codes = self.shared(name)
            held = np.empty(len(values), dtype=object)
            held[:] = values
            return held[codes[rows]]
        column = self._column(name, "text")
        text, ends = self._text_and_ends(column, self.rows)
        nulls = self._nulls(column, self.rows)
        found = np.empty(len(rows), dtype=object)
        for at, row in enumerate(rows.tolist()):
            if nulls is None or not nulls[row]:
                start = int(ends[row - 1]) + 1 if row else 0
                found[at] = _decoded(text[start : int(ends[row])].tobytes())
        return found

    def lines(self, name: str) -> dict[int, str]:
        """The rows holding a value of a lines column, with their value."""
        column = self._column(name, "lines")
        count = int(column.get("values", -1))
        rows = self._part(column, "rows", count, "i")
        if len(rows) and (int(rows.min()) < 0 or int(rows.max()) >= self.rows):
            raise Damaged(f"{name}: a row beyond the rows")
        texts = self._texts(column, count)
        return {row: text or "" for row, text in zip(rows.tolist(), texts, strict=True)}

    def _column(self, name: str, kind: str) -> dict[str, Any]:
        column = self.columns.get(name)
        if not isinstance(column, dict) or column.get("as") != kind:
            raise Damaged(f"{name}: not a {kind} column")
        return column

    def _texts(self, column: dict[str, Any], count: int) -> list[str | None]:
        """A text's values: split at their NULs when that gives them all, else cut at ends."""
        text, ends = self._text_and_ends(column, count)
        found: list[str | None] = []
        if count:
            found.extend(_decoded(text.tobytes()).split(_END)[:-1])
        if len(found) != count:  # a value holds a NUL: cut where each ends instead
            starts = np.concatenate([[0], ends[:-1] + 1])
            cuts = zip(starts.tolist(), ends.tolist(), strict=True)
            found = [_decoded(text[start:end].tobytes()) for start, end in cuts]
        nulls = self._nulls(column, count)
        if nulls is not None:
            for row in np.flatnonzero(nulls).tolist():
                found[row] = None
        return found

    def _text_and_ends(self, column: dict[str, Any], count: int) -> tuple[Array, Array]:
        """A text's bytes and its ``count`` values' ends, checked to cut it in order."""
        raw = self._part(column, "text", None, "u")
        if raw.dtype != np.uint8:
            raise Damaged(f"text: {raw.dtype}")
        ends = self._part(column, "ends", count, "i")
        # guard: sidecar-text-cut-within-it
        if count and (
            int(ends[0]) < 0 or int(ends[-1]) != len(raw) - 1 or (np.diff(ends) < 1).any()
        ):
            raise Damaged("a text's ends beyond it")
        return raw, ends

    def _nulls(self, column: dict[str, Any], count: int) -> Array | None:
        number = column.get("at")
        if f"{number}.nulls.npy" not in self.archive.NameToInfo:
            return None
        return self._part(column, "nulls", count, "b")

    def _part(self, column: dict[str, Any], part: str, count: int | None, kinds: str) -> Array:
        array = self._member(f"{column.get('at')}.{part}.npy", None)
        if array.ndim != 1 or array.dtype.kind not in kinds:
            raise Damaged(f"{part}: {array.dtype} of shape {array.shape}")
        if count is not None and len(array) != count:
            raise Damaged(f"{part}: {len(array)} values, not {count}")
        return array

    def _member(self, name: str, dtype: Any) -> Array:
        try:
            info = self.archive.getinfo(name)
            # guard: sidecar-member-stored-within-limit
            if info.compress_type != zipfile.ZIP_STORED or info.file_size > self.limit:
                raise Damaged(f"{name}: compressed or over {self.limit} bytes")
            with self.archive.open(info) as handle:
                array = _array_in(handle, info.file_size)
        except (KeyError, OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
            raise Damaged(f"{name}: {exc}") from None
        if dtype is not None and array.dtype != dtype:
            raise Damaged(f"{name}: {array.dtype}")
        return array


def _decoded(text: bytes) -> str:
    try:
        return text.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError as exc:
        raise Damaged(str(exc)) from None


def _array_in(handle: IO[bytes], size: int) -> Array:
    """The one-dimensional array of numbers an ``.npy`` member holds, its header checked
    before anything is allocated: no larger than the member's ``size`` bytes, no objects."""
    version = np.lib.format.read_magic(handle)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(handle)
    elif version == (2, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(handle)
    else:
        raise Damaged(f"an .npy of version {version}")
    if len(shape) != 1 or fortran or dtype.kind not in "iufb":
        raise Damaged(f"an array of {dtype} in shape {shape}")
    count = shape[0]
    # guard: sidecar-array-no-larger-than-member
    if count * dtype.itemsize > size:
        raise Damaged(f"an array of {count} values in {size} bytes")
    array = np.empty(count, dtype=dtype)
    if not isinstance(handle, io.BufferedIOBase):  # a zip's member is one
        raise Damaged("not a member of a zip")
    if handle.readinto(array.view(np.uint8).data) != array.nbytes:
        raise Damaged("an array cut short")
    return array
