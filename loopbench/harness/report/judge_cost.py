"""What a judge's grading adds to a per-arm table: its cost kept apart, and the runs it
failed to grade.

A judge's tokens and cost are the record's ``judge_tokens_in``, ``judge_tokens_out`` and
``judge_cost_usd``, never part of ``cost_usd``: the table shows them in a column of their
own, and cost per correct answer is the runs' cost unless ``--with-judge-cost`` adds the
judge's. A run whose judge failed (``grade_status``) has an answer but no verdict: it is
left out of accuracy, kept in cost and in the run counts, and counted in a note saying how
to grade it again.
"""

from __future__ import annotations

import math

import pandas as pd

#: The judge's columns in a summary; left out when no run was judged (older folders).
JUDGE_COLUMNS = ("judge_cost_usd", "judge_tokens_in", "judge_tokens_out", "judge_in_cost")
#: The grading statuses of a run whose judge failed, as a summary counts them.
NOT_GRADED = {
    "judge_api_error": "the judge's endpoint failed",
    "judge_unreadable": "no verdict could be read from the judge's reply",
}


def not_graded(runs: pd.DataFrame) -> pd.Series:
    """Runs whose judge failed: an answer and no verdict (``grade_status`` set)."""
    if "grade_status" not in runs:
        return pd.Series(False, index=runs.index)
    return runs["grade_status"].notna()


def _judged(runs: pd.DataFrame) -> pd.Series:
    """Runs a judge graded or tried to: their judge's tokens or cost recorded."""
    judged = pd.Series(False, index=runs.index)
    for name in ("judge_tokens_in", "judge_tokens_out", "judge_cost_usd"):
        if name in runs:
            judged |= runs[name].notna()
    return judged


def judge_measures(runs: pd.DataFrame, with_judge_cost: bool = False) -> dict[str, object]:
    """The judge's cost (summed, as the cost column is; 0 when no run was judged, NaN when
    a judged run's cost is unknown: its model has no price), its tokens per judged run, the
    runs it failed to grade by why, and whether cost per correct answer counts its cost."""
    judged = runs[_judged(runs)]
    cost = 0.0
    if len(judged):  # a frame without the cost column (tokens only) has no known cost
        known = judged.get("judge_cost_usd")
        cost = math.nan if known is None else float(pd.to_numeric(known).sum(min_count=len(judged)))
    failed = runs.loc[not_graded(runs), "grade_status"] if "grade_status" in runs else None
    counts = failed.value_counts() if failed is not None else pd.Series(dtype=int)
    return {
        "judge_cost_usd": cost,
        "judge_tokens_in": _mean(judged, "judge_tokens_in"),
        "judge_tokens_out": _mean(judged, "judge_tokens_out"),
        "judge_in_cost": with_judge_cost,
        "not_graded": int(counts.sum()),
        **{f"not_graded_{kind}": int(counts.get(kind, 0)) for kind in NOT_GRADED},
    }


def _mean(runs: pd.DataFrame, name: str) -> float:
    if name not in runs or not len(runs):
        return math.nan
    return float(pd.to_numeric(runs[name]).mean())


def judge_share(measures: dict[str, object], with_judge_cost: bool) -> float:
    """What the judge adds to the cost that cost per correct answer divides: nothing
    unless asked."""
    # guard: judge-cost-out-of-cost-per-correct
    if not with_judge_cost:
        return 0.0
    cost = measures["judge_cost_usd"]
    return float(cost) if isinstance(cost, float | int) else math.nan


def judge_unreported(frame: pd.DataFrame, rows: list[dict[str, object]]) -> list[str]:
    """The judge's columns when no run of ``frame`` was judged, and the not-graded counts
    when no judge failed: left out, so an older folder's table reads as it did."""
    if not rows:
        return []
    missing: list[str] = []
    if not _judged(frame).any():
        missing += JUDGE_COLUMNS
    if not not_graded(frame).any():
        missing += ["not_graded", *(f"not_graded_{kind}" for kind in NOT_GRADED)]
    return missing


def not_graded_note(summary: pd.DataFrame) -> str:
    """How many runs the judge failed to grade, why, and how to grade them again."""
    if "not_graded" not in summary or not summary["not_graded"].sum():
        return ""
    total = int(summary["not_graded"].sum())
    why = "; ".join(
        f"{int(summary[f'not_graded_{kind}'].sum())} where {said}"
        for kind, said in NOT_GRADED.items()
        if summary[f"not_graded_{kind}"].sum()
    )
    return (
        f"\n\n{total} run(s) not graded: the judge failed ({why}). They are left out of "
        "accuracy and kept in cost and in n; `loopbench grade --regrade RESULTS` grades them "
        "again."
    )


def judge_cost_note(summary: pd.DataFrame) -> str:
    """What the judge's column holds, and whether cost per correct answer counts it."""
    if "judge_cost_usd" not in summary:
        return ""
    counted = bool(summary["judge_in_cost"].any())
    return " judge $: what the judge's calls on these runs' answers cost, apart from cost $ " + (
        "and counted in $/correct (--with-judge-cost)."
        if counted
        else "and not in $/correct (--with-judge-cost counts it)."
    )
