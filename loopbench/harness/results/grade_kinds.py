"""Why a run was graded wrong, when its grade says the reading could not tell: the reply
hedged (two committed answers, an amount left open, another answer offered), retracted its
answer with none after it, or gave no answer. The graders start their reasons so
("hedged: chooses B, C", "retracted: corrected with no answer after it", "no answer",
"states no number"); this reads that back from a record's ``grade_reason``.

The rule is written once, ``KINDS``, and applied twice: in the query that reads a folder's
columns (``kind_sql``: the reason itself is never fetched, a million of them would not fit
in memory) and in Python for the records the record model reads (``kind_code``). A
reason that starts otherwise, and every right or ungraded run, has no kind; older
records, without a reason or with other words, have none either.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

#: The frame's column of each run's kind (a category; missing for the others).
GRADE_KIND = "grade_kind"
#: Each kind, with how the reasons that say it start.
KINDS: dict[str, tuple[str, ...]] = {
    "hedged": ("hedged:",),
    "retracted": ("retracted:",),
    "no_answer": ("no answer", "names no ", "chooses no ", "states no ", "holds no "),
}
#: A run with no kind, as a code.
NONE = -1


def kind_code(correct: bool | None, reason: str | None) -> int:
    """The index in ``KINDS`` of a wrong grade's kind, by how its reason starts; ``NONE``
    for any other run."""
    # guard: right-run-never-counted-as
    if correct is not False or not reason:
        return NONE
    for code, starts in enumerate(KINDS.values()):
        if reason.startswith(starts):
            return code
    return NONE


def kind_sql(correct: str, reason: str) -> str:
    """``kind_code`` in SQL, of the SQL expressions of a run's ``correct`` and reason: a
    TINYINT, never null."""
    cases = " ".join(
        f"WHEN {' OR '.join(f'starts_with({reason}, {_literal(s)})' for s in starts)} THEN {code}"
        for code, starts in enumerate(KINDS.values())
    )
    # guard: right-run-never-counted-as-2
    return (
        f"(CASE WHEN {correct} IS NOT DISTINCT FROM false THEN CASE {cases} ELSE {NONE} END "
        f"ELSE {NONE} END)::TINYINT"
    )


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def kinds_column(codes: np.ndarray[Any, Any]) -> pd.Categorical:
    """The frame's ``GRADE_KIND`` column of ``kind_code``s: one byte a run."""
    dtype = pd.CategoricalDtype(list(KINDS))
    return pd.Categorical.from_codes(np.asarray(codes, dtype=np.int8), dtype=dtype)


def kinds_of(frame: pd.DataFrame) -> pd.Series[Any]:
    """Each run's kind: the frame's ``GRADE_KIND``, else read from its reasons (a frame
    built otherwise), else none."""
    if GRADE_KIND in frame:
        return frame[GRADE_KIND]
    if "grade_reason" in frame and "correct" in frame:
        pairs = zip(frame["correct"], frame["grade_reason"], strict=True)
        codes = [kind_code(_verdict(c), _text(r)) for c, r in pairs]
        return pd.Series(kinds_column(np.array(codes)), index=frame.index)
    return pd.Series(kinds_column(np.full(len(frame), NONE)), index=frame.index)


def _verdict(correct: object) -> bool | None:
    return bool(correct) if isinstance(correct, bool | np.bool_) else None


def _text(reason: object) -> str | None:
    return reason if isinstance(reason, str) else None
