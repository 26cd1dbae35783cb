"""Opening the response cache's SQLite file: refused unless it is whole and a loopbench cache.

A file that cannot be read (garbled pages, a truncated file), that holds another
program's tables, or whose ``responses`` table has another shape would fail every call
that reads it; it is refused here, before any request, saying what is wrong. A file that
is not a loopbench cache is only read, never changed: the table is created only in a file
that holds no table at all (a new one).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

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


class CacheError(ValueError):
    """The cache file cannot be used."""


def open_cache_file(path: Path, create: bool) -> sqlite3.Connection:
    """A connection to the cache at ``path``, checked whole and of the expected schema.

    With ``create`` (``run --cache``) a file holding no table gets the ``responses``
    table and the file is checked writable; without it (``cache stats``, ``cache clear``)
    nothing is written on opening."""
    try:
        db = sqlite3.connect(path, isolation_level=None)
    except sqlite3.Error as exc:
        raise CacheError(_refusal(path, str(exc))) from None
    try:
        problem = _problem(db, create)
        if problem is None and create:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(SCHEMA)
            db.execute("BEGIN IMMEDIATE")  # can be written, not only read
            db.execute("ROLLBACK")
    except sqlite3.Error as exc:
        problem = str(exc)
    if problem is not None:
        db.close()
        raise CacheError(_refusal(path, problem))
    return db


def _refusal(path: Path, problem: str) -> str:
    return (
        f"{path}: not a usable response cache ({problem}); "
        "remove the file or give another --cache folder"
    )


def _problem(db: sqlite3.Connection, create: bool) -> str | None:
    """What makes the file unusable as a cache, or None; only reads."""
    checked = [row[0] for row in db.execute("PRAGMA quick_check")]
    if checked != ["ok"]:
        said = [line for row in checked for line in row.splitlines() if not line.startswith("***")]
        more = f", and {len(said) - 1} more problems" if len(said) > 1 else ""
        return f"damaged: {said[0] if said else checked[0]}{more}"
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not tables:
        return None if create else "it holds no responses table"
    if tables != {"responses"}:
        others = ", ".join(sorted(tables - {"responses"}))
        return f"it holds tables of another program: {others}"
    columns = [(r[1], r[2].upper(), r[3], r[5]) for r in db.execute("PRAGMA table_info(responses)")]
    if columns != COLUMNS:
        shape = ", ".join(f"{name} {kind}" for name, kind, _, _ in columns)
        return f"its responses table has columns ({shape}), not (key, request, response, hits)"
    return None
