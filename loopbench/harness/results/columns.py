"""A results folder's runs, read straight into the DataFrame the tables use.

``records_frame(read_records(folder), pricing)`` validates every line into a ``RunRecord``,
then turns the list into a DataFrame: at a million runs, a minute and gigabytes. Here
DuckDB reads runs.jsonl into columns and the record's schema is applied to the columns
(``loopbench.harness.results.columns_sql``): a field a line leaves out gets the record's default,
older schemas are upgraded once per distinct arm and options
(``loopbench.harness.results.columns_fill``), and only the lines the columns cannot vouch for are
read by the record model, one by one. The frame is the same: the same columns, dtypes and values,
supersedes applied, a torn last line left out, the cost priced by the same ``frames.priced``.
``records_frame`` stays beside this reader (``loopbench.harness.results.frames`` says why): it
builds the frame of records in memory, reads what this cannot, and is the reference this is tested
against.

A line the record model refuses (a key the record does not have and a trailing comma
included) is refused with ``read_records``'s exact file:line error. The file is read
line by line only when DuckDB cannot read it as ``read_records`` does (a line DuckDB's
parser refuses that the record model takes, an int beyond 64 bits), and a warning on
stderr says so and why, once. Both take their lines as ``reading.complete_lines`` does (a
carriage return is a space inside a line), and a run recorded on two lines counts once
and is named in a warning, by both (``reading.Repeated``).

Rows holding equal options or metrics share one dict: read them, do not change them.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Collection
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from loopbench.harness.results.columns_fill import (
    Refused,
    Shared,
    Unreadable,
    finish,
    plain,
    plain_fetched,
)
from loopbench.harness.results.columns_sidecar import open_sidecar, sidecar, write_sidecar
from loopbench.harness.results.columns_sql import (
    ANSWER_KEY,
    FIELDS,
    LINE,
    RUN_KEY,
    Field,
    hashed,
    select,
    shareable,
)
from loopbench.harness.results.columns_stored import Damaged, Stored
from loopbench.harness.results.duckdb_progress import no_progress_bar
from loopbench.harness.results.frames import PRICED, Pricing, priced, records_frame
from loopbench.harness.results.grade_kinds import GRADE_KIND, kinds_column
from loopbench.harness.results.reading import (
    RUNS,
    Repeated,
    iter_records,
    read_both,
    record_lines,
    replaces,
    runs_file,
    say_repeated,
)

__all__ = ["ANSWER_KEY", "FIELDS", "UNREAD", "Field", "read_frame", "read_frames"]

#: Columns no table or plot reads: the long or unique strings, left out of the frames the
#: commands read (``drop=UNREAD``) so a million runs fit in memory; ``compare`` reads the
#: fields it names (``loopbench.harness.cli.compare.COMPARED``).
UNREAD = (
    "run_id",
    "experiment_id",
    "task_fingerprint",
    "answer",
    "grade_reason",
    "canonical",  # whether repeats agree reads it through answer_key
    "error",
    "started_at",
    "supersedes",
    "loopbench_version",
    "prompts_hash",  # a table tells prompt versions apart by the arm's name
)
#: Rows per chunk fetched from DuckDB: small enough that a chunk's strings are few MB.
CHUNK = 16 * 2048
#: How far DuckDB reads ahead while this process turns a chunk into arrays: its second
#: thread keeps parsing meanwhile (0.6 s of 6.5 at a million runs, bench/records_scale.py).
READ_AHEAD = "128MB"
#: Columns every read needs: a run's key, its supersede link, what upgrades read, and the
#: experiment a run recorded twice names.
_KEY = (
    "model",
    "arm",
    "task_id",
    "repeat",
    "run_id",
    "supersedes",
    "schema_version",
    "pattern",
    "experiment_id",
)
Columns = dict[str, np.ndarray[Any, Any]]
#: Columns read for a few rows alone, when a sidecar is read and they are not asked for:
#: those superseding and a run recorded twice read (``_RunIds``).
_LAZY = ("run_id", "supersedes", "experiment_id")
#: Bytes read at a time from the end of runs.jsonl, back to its last line end.
_TAIL = 1 << 23
#: The files said to be read line by line, with why: each is said once a process.
_ANNOUNCED: set[tuple[str, str]] = set()


def read_frame(
    folder: Path | str,
    pricing: Pricing | None = None,
    *,
    superseded: bool = False,
    drop: Collection[str] = (),
) -> pd.DataFrame:
    """``records_frame(read_records(folder, superseded=superseded), pricing)``, fast; less
    the columns in ``drop``. Raises ``ResultsError`` (and ``PriceError``) as those do."""
    runs, replaced = read_frames(folder, pricing, drop=drop)
    return replaced if superseded else runs


def read_frames(
    folder: Path | str, pricing: Pricing | None = None, *, drop: Collection[str] = ()
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The runs and the records later runs superseded (``--retry-errors``), read once."""
    path = runs_file(folder)  # a FIFO or a device refused before DuckDB opens it
    wanted = [name for name in FIELDS if name not in drop]
    try:
        return _read(path, wanted, pricing)
    except (Refused, duckdb.Error, OSError, Damaged) as exc:
        for _ in iter_records(path):  # raises read_records' error at the first bad line
            pass  # (keeping no record: the file may be large)
        why = _unread(exc)
    except Unreadable as exc:
        why = exc.why
    if (str(path), why) not in _ANNOUNCED:
        _ANNOUNCED.add((str(path), why))
        # guard: reading-line-line-said
        print(f"warning: {path}: read line by line, slowly: {why}", file=sys.stderr)
    runs, replaced = read_both(path)
    frames = records_frame(runs, pricing), records_frame(replaced, pricing)
    unread = [name for name in drop if name in frames[0]]
    return frames[0].drop(columns=unread), frames[1].drop(columns=unread, errors="ignore")


def _unread(exc: Exception) -> str:
    """Why the columns did not read a file the record model reads in full."""
    if isinstance(exc, duckdb.Error):
        return f"DuckDB cannot read it ({str(exc).splitlines()[0]})"
    if isinstance(exc, OSError):
        return f"DuckDB cannot read it ({exc})"
    if isinstance(exc, Damaged):
        return f"its sidecar changed while it was read ({exc})"
    return "the columns refused a line the record model reads"


def _read(
    path: Path, wanted: list[str], pricing: Pricing | None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    columns, run_ids = _columns(path, wanted)
    if columns is None:
        return pd.DataFrame(), pd.DataFrame()
    keep, replaced, repeated = _supersedes(columns, run_ids)
    say_repeated(path, _repeated(path, columns, repeated))
    framed = {*wanted, ANSWER_KEY, GRADE_KIND, *PRICED}
    for name in [name for name in columns if name not in framed]:
        del columns[name]  # read for the key and supersedes alone: not copied below
    gone = _frame({n: a[replaced] for n, a in columns.items()}, wanted, pricing)
    if not keep.all():
        for name in list(columns):  # one at a time, so each copy replaces its original
            columns[name] = columns[name][keep]
    return _frame(columns, wanted, pricing), gone


def _columns(path: Path, wanted: list[str]) -> tuple[Columns | None, _RunIds | None]:
    """The file's rows as ``read_records`` sees it: its complete lines, as they were while no
    writer added to them (a copy up to the last full line when one did, or when the last
    line is cut). None when it has no complete line. With them, what fetches the run ids a
    sidecar's rows were read without (``_RunIds``)."""
    before = path.stat()
    end = _last_line_end(path, before.st_size)
    if end == 0:
        return None, None
    if end == before.st_size and not any(c in str(path) for c in "*?[{"):
        found = sidecar(path)
        try:
            columns, lines = _fetch(path, wanted, path.parent, found)
        except Damaged:  # its key agrees, its columns are not as it says: written again
            found = write_sidecar(path)
            columns, lines = _fetch(path, wanted, path.parent, found)
        after = path.stat()
        if (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns):
            lazy = [name for name in _LAZY if name not in wanted]
            fetches = found is not None and columns is not None and lazy
            return columns, _RunIds(path, found, lines, lazy) if fetches and found else None
    with tempfile.TemporaryDirectory(prefix="loopbench-") as tmp:
        copy = Path(tmp) / RUNS
        with path.open("rb") as source, copy.open("wb") as target:
            left = end
            while left and (block := source.read(min(left, 1 << 24))):
                target.write(block)
                left -= len(block)
        return _fetch(copy, wanted, path.parent)[0], None


def _last_line_end(path: Path, size: int) -> int:
    """Where the last complete line ends (``reading.complete_lines``: a line ends at ``\\n``
    alone; DuckDB, too, takes a carriage return for a space and splits nothing there)."""
    with path.open("rb", buffering=0) as handle:
        for start in range((size - 1) // _TAIL * _TAIL, -1, -_TAIL):
            handle.seek(start)
            data = handle.read(min(_TAIL, size - start))
            last = data.rfind(b"\n")
            if last >= 0:
                # guard: torn-last-line-left-out
                return start + last + 1
    return 0


def _fetch(
    path: Path, wanted: list[str], folder: Path, columnar: Path | None = None
) -> tuple[Columns | None, set[int]]:
    """Every row of ``path`` as arrays, in file order, finished as records (their prompt
    texts read from ``folder``'s prompts/; None for no rows), from its sidecar ``columnar``
    when given (``loopbench.harness.results.columns_sidecar``); ``duckdb.Error`` for a line DuckDB
    cannot parse, ``Refused`` for one the record model refuses. With them, the rows the
    record model read. From a sidecar, the ``_LAZY`` columns ``wanted`` does not name are
    None but in those rows: ``_RunIds`` fetches the others' when asked."""
    names = list(dict.fromkeys([*wanted, *_KEY, *PRICED]))
    lazy = [name for name in _LAZY if name not in wanted] if columnar is not None else []
    names = [name for name in names if name not in lazy]
    derived = {RUN_KEY: np.uint64, ANSWER_KEY: np.uint64, GRADE_KIND: np.int8}
    strings: dict[str, str] = {}
    shared = {name: Shared(strings) for name in names if shareable(FIELDS[name])}
    lines: dict[int, str] = {}
    rows = 0
    parts = _Parts()
    with duckdb.connect(":memory:") as con:
        no_progress_bar(con)
        if columnar is None:
            con.execute(f"SET streaming_buffer_size = '{READ_AHEAD}'")
            result = con.execute(select(names), [str(path)])
        else:
            with open_sidecar(path, columnar) as stored:
                rows = _fetch_stored(stored, names, shared, parts, lines)
        while columnar is None and len(
            chunk := result.fetch_df_chunk(vectors_per_chunk=CHUNK // 2048)
        ):
            for name in names:
                if name in shared:
                    shared[name].add(chunk[name], chunk[hashed(name)].to_numpy(np.uint64))
                else:
                    parts.add(name, plain(chunk[name], FIELDS[name]))
            for name, dtype in derived.items():
                parts.add(name, chunk[name].to_numpy(dtype=dtype))
            line = chunk[LINE]
            for at in np.flatnonzero(line.notna().to_numpy()).tolist():
                lines[rows + at] = str(line.iat[at])
            rows += len(chunk)
    if not rows:
        return None, set()
    texts = {name: shared.pop(name) for name in names if FIELDS[name].kind == "dict"}
    columns = {
        name: shared.pop(name).column() if name in shared else parts.column(name)
        for name in [*names, *derived]
        if name not in texts
    }
    for name in lazy:  # the record model's rows get theirs in finish
        columns[name] = np.full(rows, None, dtype=object)
    finish(columns, texts, lines, folder)
    return columns, set(lines)


class _RunIds:
    """The run ids, supersedes and experiments (``_LAZY``) of a sidecar's rows, fetched for
    the rows asked for alone: superseding compares those of the runs recorded on several
    rows, a few in a million, and a million unique strings cost more to fetch than the rest
    of a table's columns."""

    def __init__(self, runs: Path, columnar: Path, read: set[int], names: list[str]) -> None:
        self.runs = runs
        self.columnar = columnar
        self.read = read
        """The rows the record model read: their values are in the columns already."""
        self.names = names
        """The columns to fill."""

    def fill(self, columns: Columns, rows: np.ndarray[Any, Any]) -> None:
        """Put the values of each of ``rows`` in ``columns``."""
        if self.read:
            rows = rows[~np.isin(rows, np.fromiter(self.read, dtype=np.int64))]
        if not len(rows):
            return
        with open_sidecar(self.runs, self.columnar) as stored:
            for name in self.names:
                columns[name][rows] = stored.values_at(name, rows)


class _Parts:
    """Fetched chunks of the unshared columns, joined into one array each at the end (a
    sidecar's come whole: one chunk each, not copied)."""

    def __init__(self) -> None:
        self.chunks: dict[str, list[np.ndarray[Any, Any]]] = {}

    def add(self, name: str, values: np.ndarray[Any, Any]) -> None:
        self.chunks.setdefault(name, []).append(values)

    def column(self, name: str) -> np.ndarray[Any, Any]:
        """The column's values."""
        chunks = self.chunks.pop(name)
        if len(chunks) > 1:
            return np.concatenate(chunks)
        # A chunk's array may be its frame's, read-only: the model's rows are set later.
        return chunks[0] if chunks[0].flags.writeable else chunks[0].copy()


def _fetch_stored(
    stored: Stored,
    names: list[str],
    shared: dict[str, Shared],
    parts: _Parts,
    lines: dict[int, str],
) -> int:
    """The sidecar's columns of ``names`` (and the derived ones) into ``shared`` and
    ``parts``, and the lines it does not vouch for into ``lines``; how many rows it holds."""
    derived = {RUN_KEY: np.uint64, ANSWER_KEY: np.uint64, GRADE_KIND: np.int8}
    for name in names:
        if name in shared:
            shared[name].put(*stored.shared(name))
        elif FIELDS[name].kind == "str":
            parts.add(name, stored.texts(name))
        else:
            parts.add(name, plain_fetched(stored.number(name), FIELDS[name]))
    for name, dtype in derived.items():
        parts.add(name, np.ma.getdata(stored.number(name)).astype(dtype, copy=False))
    lines.update(stored.lines(LINE))
    return stored.rows


def _supersedes(
    columns: Columns, run_ids: _RunIds | None = None
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], list[tuple[int, int]]]:
    """Which rows are runs, the rows later ones superseded in the order they were, and the
    rows recording a run again (each with the row that counts), as ``read_records`` takes
    them: a row counts unless it records a run again without naming the earlier record's
    run_id in ``supersedes``. ``run_ids`` fetches the run ids (and others) the columns lack."""
    hashed = columns.pop(RUN_KEY)
    keep = np.ones(len(hashed), dtype=bool)
    current: dict[tuple[Any, ...], int] = {}
    replaced: list[int] = []
    repeated: list[tuple[int, int]] = []
    rows = np.flatnonzero(pd.Series(hashed).duplicated(keep=False).to_numpy())
    if run_ids is not None:
        run_ids.fill(columns, rows)
    # Each row's key made in one pass (tens of thousands of rows after a --retry-errors round)
    named = ("model", "arm", "task_id", "repeat")
    keys = zip(*(columns[name][rows] for name in named), strict=True)
    run_id, supersedes = columns["run_id"], columns["supersedes"]
    for row, key in zip(rows.tolist(), keys, strict=True):
        earlier = current.get(key)
        if earlier is not None:
            # guard: run-recorded-twice-counts-once
            if not replaces(supersedes[row], run_id[earlier]):
                keep[row] = False
                repeated.append((row, earlier))
                continue
            replaced.append(earlier)
            keep[earlier] = False
        current[key] = row
    return keep, np.array(replaced, dtype=np.int64), repeated


def _repeated(
    path: Path, columns: dict[str, np.ndarray[Any, Any]], rows: list[tuple[int, int]]
) -> list[Repeated]:
    """The rows recording a run again, as ``read_records`` names them: by line."""
    if not rows:
        return []
    lines = iter(record_lines(path, [row for pair in rows for row in pair]))
    found = []
    experiment = columns["experiment_id"]
    for row, first in rows:
        key = (
            str(columns["model"][row]),
            str(columns["arm"][row]),
            str(columns["task_id"][row]),
            int(columns["repeat"][row]),
        )
        line, first_line = next(lines), next(lines)
        experiments = (str(experiment[first]), str(experiment[row]))
        found.append(Repeated(line, first_line, key, experiments))
    return found


def _frame(
    columns: dict[str, np.ndarray[Any, Any]], wanted: list[str], pricing: Pricing | None
) -> pd.DataFrame:
    """The rows as ``records_frame`` builds them: pandas' dtype for each column's values.
    Empties ``columns`` as it goes."""
    if not len(columns["arm"]):
        return pd.DataFrame()
    cost = priced(columns, pricing) if pricing is not None else None
    data = {}
    for name in wanted:  # each column converted is let go of (memory)
        data[name] = _typed(columns.pop(name), FIELDS[name])
    data[ANSWER_KEY] = columns.pop(ANSWER_KEY)
    data[GRADE_KIND] = kinds_column(columns.pop(GRADE_KIND))
    if cost is not None and "cost_usd" in data:
        data["cost_usd"] = cost
    columns.clear()
    frame = pd.DataFrame(data, copy=False)
    if "task_id" in frame:
        frame["task"] = frame["task_id"]
    return frame


def _typed(values: np.ndarray[Any, Any], field: Field) -> Any:
    """What pandas infers for these values in a list of dicts: NaN for None among numbers
    and strings, None kept among booleans, all-None columns as objects, whole numbers
    without a None as int64."""
    if field.kind == "dict" or (field.kind == "int" and not field.nullable):
        return values
    missing = None
    if field.nullable and pd.isna(values[0]):  # first: cheap
        missing = pd.isna(values)
        if missing.all():
            return np.full(len(values), None, dtype=object)
    if field.kind == "int":
        return values if np.isnan(values).any() else values.astype(np.int64)
    if field.kind == "float":
        return values
    if field.kind == "bool":  # objects: each looked at once
        missing = pd.isna(values) if missing is None else missing
        return values if missing.any() else values.astype(bool)
    return pd.array(values, dtype=pd.StringDtype(na_value=np.nan))
