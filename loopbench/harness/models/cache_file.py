"""Opening the response cache's SQLite file: refused unless it is whole and a loopbench cache.

A file that cannot be read (garbled pages, a truncated file), that holds another
program's tables, or whose ``responses`` table has another shape would fail every call
that reads it; it is refused here, before any request, saying what is wrong. A file that
is not a loopbench cache is only read, never changed: the table is created only in a file
that holds no table at all (a new one).

Several processes may open one cache at the same moment (two grids sharing a folder).
Making a new file a WAL database and creating its table take locks that SQLite, seeing
two connections each wanting the other's lock, refuses at once rather than waiting for:
an opening that finds the file busy is tried again, for up to ``BUSY_PATIENCE_S``.
"""

from __future__ import annotations

import random
import sqlite3
import time
from pathlib import Path

from loopbench.harness.errors import BadInput, HarnessFault

SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    hits INTEGER NOT NULL DEFAULT 0
)
"""
#: The ``responses`` table's columns as ``PRAGMA table_info`` gives them: name, type,
#: not null, primary key.
COLUMNS = [
    ("key", "TEXT", 0, 1),
    ("request", "TEXT", 1, 0),
    ("response", "TEXT", 1, 0),
    ("hits", "INTEGER", 1, 0),
]


#: How long an opening waits out other processes holding the file's locks.
BUSY_PATIENCE_S = 30.0


class CacheError(BadInput):
    """The cache file cannot be used."""


class _Busy(HarnessFault):
    """Another connection holds a lock this opening needs."""


def open_cache_file(
    path: Path, create: bool, patience_s: float = BUSY_PATIENCE_S
) -> sqlite3.Connection:
    """A connection to the cache at ``path``, checked whole and of the expected schema.

    With ``create`` (``run --cache``) a file holding no table gets the ``responses``
    table and the file is checked writable; without it (``cache stats``, ``cache clear``)
    nothing is written on opening."""
    began = time.monotonic()
    pause = 0.01
    while True:
        try:
            return _open(path, create)
        except _Busy as busy:
            waited = time.monotonic() - began
            # guard: cache-lock-held-beyond-patience
            if waited + pause > patience_s:
                raise CacheError(
                    f"{path}: locked by another process, still after {waited:.1f} s "
                    f"({busy}); try again when the other process using this cache is done"
                ) from None
        time.sleep(pause * random.uniform(0.5, 1.5))  # openers apart, not in lockstep
        pause = min(pause * 2, 1.0)


def _open(path: Path, create: bool) -> sqlite3.Connection:
    """One attempt at ``open_cache_file``; _Busy when another connection held a lock."""
    try:
        db = sqlite3.connect(path, isolation_level=None)
    except sqlite3.Error as exc:
        raise CacheError(_refusal(path, str(exc))) from None
    try:
        # guard: cache-file-checked-before-anything
        problem = _problem(db, create)
        if problem is None and create:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(SCHEMA)
            db.execute("BEGIN IMMEDIATE")  # can be written, not only read
            db.execute("ROLLBACK")
    except sqlite3.Error as exc:
        db.close()
        # guard: cache-opening-finds-file-locked
        if _is_busy(exc):
            raise _Busy(str(exc)) from None
        raise CacheError(_refusal(path, str(exc))) from None
    if problem is not None:
        db.close()
        raise CacheError(_refusal(path, problem))
    return db


def _is_busy(exc: sqlite3.Error) -> bool:
    """SQLITE_BUSY or SQLITE_LOCKED, extended codes included: a lock, not damage."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


def _refusal(path: Path, problem: str) -> str:
    return (
        f"{path}: not a usable response cache ({problem}); "
        "remove the file or give another --cache folder"
    )


def _problem(db: sqlite3.Connection, create: bool) -> str | None:
    """What makes the file unusable as a cache, or None; only reads."""
    checked = [row[0] for row in db.execute("PRAGMA quick_check")]
    # guard: cache-damaged-file-refused-opening
    if checked != ["ok"]:
        said = [line for row in checked for line in row.splitlines() if not line.startswith("***")]
        more = f", and {len(said) - 1} more problems" if len(said) > 1 else ""
        return f"damaged: {said[0] if said else checked[0]}{more}"
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not tables:
        return None if create else "it holds no responses table"
    # guard: cache-another-program-tables-refused
    if tables != {"responses"}:
        others = ", ".join(sorted(tables - {"responses"}))
        return f"it holds tables of another program: {others}"
    columns = [(r[1], r[2].upper(), r[3], r[5]) for r in db.execute("PRAGMA table_info(responses)")]
    # guard: cache-responses-table-another-shape
    if columns != COLUMNS:
        shape = ", ".join(f"{name} {kind}" for name, kind, _, _ in columns)
        return f"its responses table has columns ({shape}), not (key, request, response, hits)"
    return None
