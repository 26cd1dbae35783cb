"""Plots of a results folder, written as PNG files (matplotlib, no display needed)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from harness.experiment import short_label
from harness.patterns.base import STATUSES

STATUS_COLOURS = {
    "answered": "#4c78a8",
    "step_budget": "#f58518",
    "token_budget": "#e45756",
    "truncated": "#b279a2",
    "unparsed": "#9d755d",
    "refused": "#bab0ac",
    "api_error": "#222222",
    "pattern_error": "#54a24b",
}


def plot_outcomes(summary: pd.DataFrame, path: Path | str, title: str) -> None:
    """Per arm: how runs ended (stacked bars), each bar labelled with how many were correct."""
    arms = [short_label(a) for a in summary["arm"]]
    # A bare Figure renders without pyplot's global state or a display backend.
    fig = Figure(figsize=(8, 1.8 + 0.5 * len(arms)), layout="constrained")
    ax = fig.subplots()
    left = [0] * len(arms)
    for status in STATUSES:
        counts = [int(c) for c in summary[f"status_{status}"]]
        if any(counts):
            ax.barh(arms, counts, left=left, color=STATUS_COLOURS[status], label=status)
            left = [a + b for a, b in zip(left, counts, strict=True)]
    for y, (total, correct) in enumerate(zip(left, summary["correct"], strict=True)):
        ax.annotate(
            f"{int(correct)} correct",
            (total, y),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize=8,
        )
    ax.invert_yaxis()
    ax.set_xlim(0, max(left) * 1.18)
    ax.set_xlabel("runs")
    ax.set_title(title, fontsize=10, loc="left")
    fig.legend(loc="outside lower center", fontsize=8, frameon=False, ncol=4)
    fig.savefig(path, dpi=120)
