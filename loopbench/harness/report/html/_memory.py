"""Keeping the report of a million runs under a gigabyte: memory peaks while the runs are
labelled, so the page lets go first of what only the summary needed."""

from __future__ import annotations

import ctypes

import pandas as pd

#: Columns only the summary reads (turns, tokens, latency and the like).
SUMMARY_ONLY = (
    "schema_version",
    "slice",
    "task",
    "turns",
    "retries",
    "tokens_in",
    "tokens_out",
    "tokens_cached",
    "tokens_reasoning",
    "tokens_cache_write",
    "usage_missing",
    "usage_estimated",
    "first_correct",
    "cache_hits",
    "cost_from_cache_usd",
    "latency_s",
    "ttft_s",
)


def after_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """``runs`` less the columns only the summary reads, the heap memory freed so far given
    back to the system."""
    runs = runs.drop(columns=[name for name in SUMMARY_ONLY if name in runs])
    _return_freed_memory()
    return runs


def _return_freed_memory() -> None:
    """glibc keeps freed memory in the arena of each thread that held it (DuckDB reads on
    several): some 350 MB after reading a million runs and summing them up."""
    try:
        trim = ctypes.CDLL(None).malloc_trim  # glibc's; other C libraries have none
    except (OSError, AttributeError):
        return
    trim(0)
