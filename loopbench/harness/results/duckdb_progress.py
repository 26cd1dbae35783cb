"""DuckDB's progress bar turned off wherever loopbench opens a connection, in a terminal
and in a Jupyter kernel alike."""

from __future__ import annotations

import duckdb


def no_progress_bar(con: duckdb.DuckDBPyConnection) -> None:
    """Turn DuckDB's progress bar off. In a Jupyter kernel without ipywidgets DuckDB draws
    none and refuses to change the setting: that refusal is the one failure let pass."""
    try:
        con.execute("SET enable_progress_bar = false")
    except duckdb.InvalidInputException as exc:
        if "progress bar" not in str(exc):
            raise


__all__ = ["no_progress_bar"]
