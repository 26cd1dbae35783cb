"""The runs' columns as a summary reads them, in dtypes cheaper to copy and compare.

A summary copies each arm's runs and compares their columns again and again: at a million
runs, columns of Python objects (``None``, ``True``, ``False``) cost several times what
numbers do. Each column changed here reads the same to everything a summary does with it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from pandas.core.groupby import DataFrameGroupBy

from loopbench.harness.results.grade_kinds import GRADE_KIND

#: Nullable columns a summary reads as a missing column when no run has them
#: (``judge_cost``'s, ``_ttft``): in older folders and most runs, all null.
NULLABLE = (
    "ttft_s",
    "grade_status",
    "judge_tokens_in",
    "judge_tokens_out",
    "judge_cost_usd",
)
#: A run's verdicts: True, False or None (not graded).
VERDICTS = ("correct", "first_correct")


def cheaper(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` less its ``NULLABLE`` columns that hold no value, with its ``VERDICTS``
    as floats (1, 0, NaN for None: equal to True, False, null, as the summary compares
    them) when the frame has ``GRADE_KIND`` (else the kinds are read from the verdicts as
    objects), and its statuses as categories."""
    changed: dict[str, Any] = {}
    for name in VERDICTS if GRADE_KIND in frame else ():
        if name in frame and _kind(frame[name]) in ("boolean", "empty"):  # bools and nulls
            changed[name] = frame[name].to_numpy().astype(np.float64)
    if "status" in frame and frame["status"].dtype != "category":
        codes, statuses = pd.factorize(frame["status"].to_numpy())
        dtype = pd.CategoricalDtype(pd.Index(statuses))
        changed["status"] = pd.Categorical.from_codes(codes, dtype=dtype)
    empty = [name for name in NULLABLE if name in frame and _kind(frame[name]) == "empty"]
    return frame.drop(columns=empty).assign(**changed)


def _kind(column: pd.Series) -> str:
    """What an object column holds (``infer_dtype``): "empty" for nulls only."""
    if column.dtype != object:
        return ""
    return pd.api.types.infer_dtype(column.to_numpy(), skipna=True)


def sorted_codes(column: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """``pd.factorize(column.to_numpy(), sort=True)``, from a categorical's codes when its
    categories are sorted and every value is one (no string hashed again)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes = column.cat.codes.to_numpy()
        categories = column.cat.categories
        if categories.is_monotonic_increasing and (codes >= 0).all():
            seen = np.bincount(codes, minlength=len(categories)) > 0
            return (np.cumsum(seen) - 1)[codes], pd.Index(categories[seen])
    codes, values = pd.factorize(column.to_numpy(), sort=True)
    return codes, pd.Index(values)


def task_keys(tasks: pd.Series) -> np.ndarray:
    """What tells ``tasks`` apart, in their order: a categorical's codes (cheaper to hash
    than its strings), else the values."""
    if isinstance(tasks.dtype, pd.CategoricalDtype):
        return tasks.cat.codes.to_numpy()
    return tasks.to_numpy()


def group_numbers(
    frame: pd.DataFrame, keys: list[str], grouped: DataFrameGroupBy[Any, Any]
) -> np.ndarray:
    """``grouped.ngroup()`` (``frame`` grouped by ``keys``, sorted, observed): for a single
    categorical key with no null, from its codes, each group's number its category's
    rank among those seen, as a sorted grouping of categories orders them."""
    column = frame[keys[0]] if len(keys) == 1 else None
    if column is not None and isinstance(column.dtype, pd.CategoricalDtype):
        codes = column.cat.codes.to_numpy()
        if (codes >= 0).all():
            seen = np.bincount(codes, minlength=len(column.cat.categories)) > 0
            numbers: np.ndarray = (np.cumsum(seen) - 1)[codes]
            return numbers
    return grouped.ngroup().to_numpy()
