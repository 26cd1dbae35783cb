"""Text cells of a CSV file that a spreadsheet would read as a formula, written as text.

Excel, LibreOffice and Google Sheets read a cell starting with ``=``, ``+``, ``-`` or ``@``
(or a tab or carriage return before one) as a formula: a task id, an answer or an arm's
name of ``=HYPERLINK("http://x","y")`` opens as a link, and some formulas reach other
programs. Every CSV loopbench writes follows OWASP's rule: a text cell starting with one of
those characters gets a leading ``'``, which spreadsheets take as "this is text" and do not
show. Only text cells: a number, negative ones included, is written as the number it is.
A script reading the file back drops one leading ``'`` from such a cell; Parquet
(``export --format parquet``) keeps every value as it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

#: What a spreadsheet reads as the start of a formula (OWASP's list).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def text_cell(value: str) -> str:
    """``value`` as a spreadsheet shows it as text: with a leading ``'`` if it would be a
    formula."""
    # guard: csv-text-cell-starting-formula
    return f"'{value}" if value.startswith(FORMULA_STARTS) else value


def cell(value: Any) -> Any:
    """A CSV cell: text through ``text_cell``, anything else (numbers, None) as it is."""
    return text_cell(value) if isinstance(value, str) else value


def csv_row(values: Iterable[Any]) -> list[Any]:
    """A row for ``csv.writer``, each text cell through ``text_cell``."""
    return [cell(value) for value in values]


def csv_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with each text cell through ``text_cell``; numeric and boolean columns,
    and the values other than text in a column of mixed values, as they are."""
    safe = frame
    for name, dtype in frame.dtypes.items():
        if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
            values = frame[name]
            column = text_column(values)
            if column is not values:
                safe = safe.copy(deep=False) if safe is frame else safe
                safe[name] = column
    return safe


def text_column(values: pd.Series[Any]) -> pd.Series[Any]:
    """A column's text cells through ``text_cell``, at a column's speed; the column itself
    when none would be a formula."""
    if isinstance(values.dtype, pd.StringDtype):  # text or missing: vectorised throughout
        texts = values
    else:  # objects: only its strings are text
        # guard: csv-only-text-cells-numbers
        texts = values.map(lambda value: isinstance(value, str), na_action="ignore")
        texts = values.where(texts.fillna(False).astype(bool), "").astype(str)
    starts = texts.str[:1].isin(FORMULA_STARTS)  # faster than str.startswith
    if not starts.any():
        return values
    safe = values.copy()
    # guard: csv-frame-text-cells-starting
    safe[starts.to_numpy()] = ("'" + texts[starts]).to_numpy()  # by position: those alone
    return safe


__all__ = ["FORMULA_STARTS", "cell", "csv_frame", "csv_row", "text_cell"]
