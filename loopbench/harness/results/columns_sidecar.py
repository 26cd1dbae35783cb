"""runs.jsonl's columns kept beside it, in Parquet: a million runs read in seconds.

Reading runs.jsonl as columns (``loopbench.harness.results.columns``) parses every line's JSON and
checks every field: most of the time a command takes at a million runs. The sidecar,
``runs.columns.parquet``, holds what that query gives for every field (the rows it
vouches for, and the lines it does not, whole), so a command reads the few columns it
needs instead, and each line's length, so the few lines a report lists are read where
they start. It is written at the end of a run, and again by any reader that finds it
absent or stale, to a temporary file moved into place (a reader never sees half of one).

It is read only when its key agrees with runs.jsonl as it is: the file's size, device,
inode, change and modification times, a digest of its content (all of a small file; of
a large one, its first and last MiB and 64 samples between) and the query's own text (a
release reading the records differently does not take an older release's columns). Any
disagreement, or a sidecar that is not a regular file or that DuckDB cannot read, and the
columns are read from runs.jsonl again; a folder where nothing can be written is read
without one.
"""

from __future__ import annotations

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

from loopbench.harness.results.columns_sql import (
    ANSWER_KEY,
    FIELDS,
    LINE,
    RUN_KEY,
    hashed,
    select,
    shareable,
    sql_literal,
)
from loopbench.harness.results.duckdb_progress import no_progress_bar
from loopbench.harness.results.grade_kinds import GRADE_KIND
from loopbench.harness.results.reading import RUNS

SIDECAR = "runs.columns.parquet"
#: Columns fetched by one query of a sidecar (``fetch_sidecar``): a million rows' each.
FETCHED_TOGETHER = 6
#: runs.jsonl below this size (some 15,000 runs) is read as fast without a sidecar: none
#: is written or read for it.
SIDECAR_FROM = 1 << 24
#: The Parquet key-value metadata entry holding the key.
KEY_NAME = "loopbench_key"
#: Files up to this size are digested whole; larger ones by their ends and samples.
WHOLE = 1 << 23
#: Of a larger file: the bytes digested at each end, the samples between, and their size.
ENDS, SAMPLES, SAMPLE = 1 << 20, 64, 1 << 14
#: The query a sidecar holds the answer of: every field, from the file given.
QUERY = select(list(FIELDS))
_FORMAT = hashlib.sha256(f"{duckdb.__version__}\n{QUERY}".encode()).hexdigest()
#: What is written: ``QUERY``'s columns and each line's length (``LINE_BYTES``), where the
#: report finds the few lines it reads. The key is ``QUERY``'s alone: a sidecar written
#: before the lengths were holds the same columns, and is read without them.
WRITTEN = select(list(FIELDS), line_bytes=True)


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


def fresh_sidecar(runs: Path) -> Path | None:
    """The sidecar of ``runs`` when its key agrees with the file, else None."""
    sidecar = sidecar_of(runs)
    try:
        # guard: sidecar-must-be-regular-file
        if not stat.S_ISREG(os.lstat(sidecar).st_mode):
            return None
        with duckdb.connect(":memory:") as con:
            found = con.execute(
                "SELECT value FROM parquet_kv_metadata(?) WHERE key = ?",
                [str(sidecar), KEY_NAME.encode()],
            ).fetchall()
    except (OSError, duckdb.Error):
        return None
    key = key_of(runs)
    # guard: sidecar-key-must-agree
    if key is None or len(found) != 1 or bytes(found[0][0]).decode("utf-8", "replace") != key:
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
        handle, name = tempfile.mkstemp(prefix=f".{SIDECAR}.", suffix=".tmp", dir=runs.parent)
    except OSError:
        return None
    os.close(handle)
    temporary = Path(name)
    try:
        with duckdb.connect(":memory:") as con:
            no_progress_bar(con)
            metadata = f"{{{KEY_NAME}: {sql_literal(key)}}}"
            con.execute(
                f"COPY ({WRITTEN}) TO {sql_literal(name)} "
                f"(FORMAT parquet, COMPRESSION zstd, KV_METADATA {metadata})",
                [str(runs)],
            )
        # guard: sidecar-of-file-changed-while-read
        if key_of(runs) != key:
            return None
        os.replace(temporary, sidecar_of(runs))
        return sidecar_of(runs)
    except (OSError, duckdb.Error):
        return None
    finally:
        temporary.unlink(missing_ok=True)


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


def sidecar_columns(names: list[str]) -> list[str]:
    """The sidecar's columns of ``select(names)``'s, less the values of the ``shareable``
    ones: their ``hashed`` column stands for them, and ``select_distinct`` gives each hash's
    value once (a million strings made once each cost more than the rest of the read)."""
    hashes = [hashed(name) for name in names if shareable(FIELDS[name])]
    plain = [name for name in names if not shareable(FIELDS[name])]
    return [*plain, *hashes, RUN_KEY, ANSWER_KEY, GRADE_KIND, LINE]


def select_sidecar(names: list[str]) -> str:
    """The query of ``sidecar_columns(names)`` from the sidecar given as its parameter."""
    return f"SELECT {', '.join(map(_quoted, sidecar_columns(names)))} FROM read_parquet(?)"


def fetch_sidecar(
    con: duckdb.DuckDBPyConnection, columns: list[str], sidecar: Path
) -> Iterator[tuple[str, np.ndarray[Any, Any]]]:
    """Each of ``columns`` of every row of ``sidecar``, in file order, as DuckDB's numpy
    array (a masked one where it holds nulls; writable), a few columns a query: each query reads its
    columns alone, whole, without a chunk of rows copied twice, and DuckDB holds no more
    than a few columns' values at a time (memory)."""
    for start in range(0, len(columns), FETCHED_TOGETHER):
        batch = columns[start : start + FETCHED_TOGETHER]
        query = f"SELECT {', '.join(map(_quoted, batch))} FROM read_parquet(?)"
        found = con.execute(query, [str(sidecar)]).fetchnumpy()
        for name in batch:
            values: np.ndarray[Any, Any] = np.asanyarray(found.pop(name))
            # DuckDB's own memory, read-only: the rows the record model reads are set later
            yield name, values if values.flags.writeable else values.copy()


def select_distinct(names: list[str]) -> str:
    """The query of each ``shareable`` column's distinct hashes and the value each stands
    for, as (column number in ``names``, hash, value) rows, from the sidecar given as its
    one parameter; nothing for ``names`` with no shareable column."""
    parts = [
        f"SELECT {number} AS column_number, {_quoted(hashed(name))} AS hash, "
        f"any_value({_quoted(name)}) AS value FROM read_parquet($1) GROUP BY 2"
        for number, name in enumerate(names)
        if shareable(FIELDS[name])
    ]
    return " UNION ALL ".join(parts)


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
