"""runs.jsonl's columns kept beside it as numpy arrays: a million runs read in seconds.

Reading runs.jsonl as columns (``loopbench.harness.results.columns``) parses every line's JSON and
checks every field: most of the time a command takes at a million runs. The sidecar,
``runs.columns.npz``, holds what that query gives for every field (the rows it vouches for,
and the lines it does not, whole; ``loopbench.harness.results.columns_stored`` says how), so
a command reads the few columns it needs instead, and each line's length, so the few lines
a report lists are read where they start. It is written at the end of a run, and again by
any reader that finds it absent or stale, to a temporary file moved into place (a reader
never sees half of one); DuckDB's answer to the query is written to Parquet first and
turned into the arrays column by column (memory).

It is read only when its key agrees with runs.jsonl as it is: the file's size, device,
inode, change and modification times, a digest of its content (all of a small file; of
a large one, its first and last MiB and 64 samples between) and the query's own text (a
release reading the records differently does not take an older release's columns). Any
disagreement, or a sidecar that is not a regular file or not as its manifest says, and
the columns are read from runs.jsonl again; a folder where nothing can be written is read
without one. ``runs.columns.parquet``, the sidecar of earlier releases, is removed when
the new one is written.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from loopbench.harness.results.columns_sql import (
    ANSWER_KEY,
    FIELDS,
    LINE,
    LINE_BYTES,
    RUN_KEY,
    hashed,
    select,
    shareable,
    sql_literal,
)
from loopbench.harness.results.columns_stored import Damaged, Stored, write_stored
from loopbench.harness.results.duckdb_progress import no_progress_bar
from loopbench.harness.results.grade_kinds import GRADE_KIND
from loopbench.harness.results.reading import RUNS

SIDECAR = "runs.columns.npz"
#: The sidecar earlier releases wrote, removed when this one is.
EARLIER_SIDECAR = "runs.columns.parquet"
#: runs.jsonl below this size (some 15,000 runs) is read as fast without a sidecar: none
#: is written or read for it.
SIDECAR_FROM = 1 << 24
#: Files up to this size are digested whole; larger ones by their ends and samples.
WHOLE = 1 << 23
#: Of a larger file: the bytes digested at each end, the samples between, and their size.
ENDS, SAMPLES, SAMPLE = 1 << 20, 64, 1 << 14
#: The query a sidecar holds the answer of: every field, from the file given, and each
#: line's length (``LINE_BYTES``), where the report finds the few lines it reads.
WRITTEN = select(list(FIELDS), line_bytes=True)
#: What a key says of how the columns were made: a sidecar of another query, DuckDB or
#: layout is not taken.
_FORMAT = hashlib.sha256(f"{duckdb.__version__}\nnpz 1\n{WRITTEN}".encode()).hexdigest()
#: The columns besides the fields', as the query gives them: numbers, and the lines.
_NUMBERS = (RUN_KEY, ANSWER_KEY, GRADE_KIND, LINE_BYTES)


def sidecar_of(runs: Path) -> Path:
    return runs.with_name(SIDECAR)


def key_of(runs: Path) -> str | None:
    """What ``runs`` must still be for a sidecar to hold its columns; None when it cannot
    be read."""
    try:
        with runs.open("rb") as handle:
            seen = os.fstat(handle.fileno())
            digest = hashlib.blake2b(digest_size=16)
            size = seen.st_size
            if size <= WHOLE:
                digest.update(handle.read(size))
            else:
                step = (size - 2 * ENDS) // (SAMPLES + 1)
                spans = [(0, ENDS)]
                spans += [(ENDS + step * (i + 1), SAMPLE) for i in range(SAMPLES)]
                spans += [(size - ENDS, ENDS)]
                for start, length in spans:
                    handle.seek(start)
                    digest.update(handle.read(length))
    except OSError:
        return None
    facts = [seen.st_dev, seen.st_ino, size, seen.st_mtime_ns, seen.st_ctime_ns]
    return json.dumps([_FORMAT, *facts, digest.hexdigest()])


def open_sidecar(runs: Path, sidecar: Path) -> Stored:
    """The sidecar ``sidecar`` of ``runs`` opened; ``Damaged`` when it cannot be. No member
    read is larger than twice runs.jsonl (no column holds more than its lines)."""
    try:
        limit = 2 * runs.stat().st_size + (1 << 20)
    except OSError as exc:
        raise Damaged(str(exc)) from None
    return Stored(sidecar, limit)


def fresh_sidecar(runs: Path) -> Path | None:
    """The sidecar of ``runs`` when its key agrees with the file, else None."""
    sidecar = sidecar_of(runs)
    try:
        # guard: sidecar-must-be-regular-file
        if not stat.S_ISREG(os.lstat(sidecar).st_mode):
            return None
        with open_sidecar(runs, sidecar) as stored:
            found = stored.key
    except (OSError, Damaged):
        return None
    # guard: sidecar-key-must-agree
    if found != key_of(runs):
        return None
    return sidecar


def write_sidecar(runs: Path) -> Path | None:
    """Write the sidecar of ``runs`` (replacing any), as the file is now; None when it
    cannot be written (a folder read-only, a line DuckDB cannot read, the file changed
    while it was read)."""
    key = key_of(runs)
    if key is None:
        return None
    try:
        with tempfile.TemporaryDirectory(prefix=f".{SIDECAR}.", dir=runs.parent) as tmp:
            answer, stored = Path(tmp) / "columns.parquet", Path(tmp) / SIDECAR
            with duckdb.connect(":memory:") as con:
                no_progress_bar(con)
                con.execute(
                    f"COPY ({WRITTEN}) TO {sql_literal(str(answer))} "
                    "(FORMAT parquet, COMPRESSION zstd)",
                    [str(runs)],
                )
                write_stored(stored, key, _columns_of(con, answer))
            # guard: sidecar-of-file-changed-while-read
            if key_of(runs) != key:
                return None
            os.replace(stored, sidecar_of(runs))
        with contextlib.suppress(OSError):  # left where it cannot go: it is never read
            runs.with_name(EARLIER_SIDECAR).unlink(missing_ok=True)
        return sidecar_of(runs)
    except (OSError, duckdb.Error):
        return None


def _columns_of(con: duckdb.DuckDBPyConnection, answer: Path) -> Iterator[tuple[str, str, Any]]:
    """The query's ``answer`` column by column, as ``write_stored`` takes them: a shared
    field as codes into its distinct values, a unique one as its texts, the lines by row."""
    for name, field in FIELDS.items():
        if shareable(field):
            yield name, "shared", _shared(con, answer, name)
        elif field.kind == "str":
            texts = _fetched(con, answer, name)
            values = np.ma.getdata(texts).astype(object)
            values[np.ma.getmaskarray(texts)] = None
            yield name, "text", values
        else:
            yield name, "number", _fetched(con, answer, name)
    for name in _NUMBERS:
        yield name, "number", _fetched(con, answer, name)
    lines = _fetched(con, answer, LINE)
    held = np.flatnonzero(~np.ma.getmaskarray(lines))
    yield LINE, "lines", dict(zip(held.tolist(), np.ma.getdata(lines)[held].tolist(), strict=True))


def _shared(
    con: duckdb.DuckDBPyConnection, answer: Path, name: str
) -> tuple[np.ndarray[Any, Any], list[str | None]]:
    """Each row's code into the field's distinct values (by their hash), and the values."""
    hashes = np.ma.getdata(_fetched(con, answer, hashed(name))).astype(np.uint64, copy=False)
    codes, uniques = pd.factorize(hashes)
    value_of = dict(
        con.execute(
            f"SELECT {_quoted(hashed(name))}, any_value({_quoted(name)}) "
            f"FROM read_parquet(?) GROUP BY 1",
            [str(answer)],
        ).fetchall()
    )
    values = [value_of[key] for key in uniques.tolist()]
    narrow = np.min_scalar_type(max(len(values) - 1, 0))
    return codes.astype(narrow), values


def _fetched(con: duckdb.DuckDBPyConnection, answer: Path, name: str) -> np.ndarray[Any, Any]:
    query = f"SELECT {_quoted(name)} FROM read_parquet(?)"
    values: np.ndarray[Any, Any] = np.asanyarray(
        con.execute(query, [str(answer)]).fetchnumpy()[name]
    )
    return values


def sidecar(runs: Path) -> Path | None:
    """A sidecar holding the columns of ``runs`` as it is, written when absent or stale;
    None when there is none to read (a small file has none)."""
    if not _worth_one(runs):
        return None
    return fresh_sidecar(runs) or write_sidecar(runs)


def write_columns(folder: Path) -> None:
    """Write the sidecar of the folder's runs.jsonl at the end of a run, when it is worth
    one and has none that holds it."""
    runs = folder / RUNS
    if _worth_one(runs) and fresh_sidecar(runs) is None:
        write_sidecar(runs)


def _worth_one(runs: Path) -> bool:
    try:
        size = runs.stat().st_size
    except OSError:
        return False
    # guard: small-runs-file-read-without-sidecar
    return size >= SIDECAR_FROM


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
