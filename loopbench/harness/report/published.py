"""Published results beside the measured ones: for each arm a source reported figures for
(``loopbench.harness.results.published``), the figure, the source's model and whether it lies inside
the arm's accuracy interval, above it or below it."""

from __future__ import annotations

import math

import pandas as pd

from loopbench.harness.results.published import PublishedResult

#: Rounding room at an interval's bounds: a bound computed as 0.9999999999 is 1.
TOLERANCE = 1e-9
NOTE = (
    " published: the accuracy a source reported for the arm (its model and citation beside "
    "it; the runs' model is in the title), and whether it lies inside this arm's 95% "
    "interval, above it or below it; a source's model, prompts and task set differ from "
    "these runs', so read it as what to expect, not as a result to match."
)


def verdict(published: float, low: float, high: float) -> str:
    """Where ``published`` lies against the interval [low, high], its bounds inside."""
    if math.isnan(low) or math.isnan(high):
        return "no interval"
    # guard: published-figure-bound-inside
    if published > high + TOLERANCE:
        return "above"
    # guard: published-figure-under-interval
    return "below" if published < low - TOLERANCE else "inside"


def with_published(summary: pd.DataFrame, published: dict[str, PublishedResult]) -> pd.DataFrame:
    """The summary with each arm's published figures and their verdict (``published_*``
    columns, empty for an arm no source reported); unchanged when there are none."""
    if not published:
        return summary
    entries = [published.get(str(arm)) for arm in summary["arm"]]

    def column(values: list[object]) -> pd.Series:
        return pd.Series(values, index=summary.index, dtype=object)

    bounds = zip(entries, summary["accuracy_low"], summary["accuracy_high"], strict=True)
    verdicts = [verdict(e.accuracy, low, high) if e else None for e, low, high in bounds]
    return summary.assign(
        **{
            f"published_{name}": column([getattr(e, name) if e else None for e in entries])
            for name in PublishedResult.model_fields
        },
        published_verdict=column([*verdicts]),
    )


def described(row: pd.Series) -> str:
    """A row's published cell: "74% (GPT-4, Yao et al. 2023): above", with the source's
    cost where it gave one; empty for an arm no source reported."""
    accuracy = row["published_accuracy"]
    if not _given(accuracy):
        return ""
    costs = [
        f"${row[f'published_{name}']:.2f} {label}"
        for name, label in (("cost_per_run", "a run"), ("cost_per_correct", "a correct"))
        if _given(row[f"published_{name}"])
    ]
    cost = f", {', '.join(costs)}" if costs else ""
    figure = f"{100 * accuracy:.1f}".removesuffix(".0")
    return (
        f"{figure}% ({row['published_model']}, {row['published_source']}): "
        f"{row['published_verdict']}{cost}"
    )


def _given(value: object) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))
