"""Plots of a results folder, written as PNG files (matplotlib, no display needed).

matplotlib is imported when a plot is drawn, not with this module: a command reads its
inputs and checks its output first, so a path it cannot use is refused before matplotlib
has had a chance to print anything (such as that it is building its font cache).
"""

from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from loopbench.harness.errors import BadInput
from loopbench.harness.report.model_axis import arms_by_model, config_labels, model_keys
from loopbench.harness.results.statuses import STATUSES
from loopbench.harness.terminal import one_line

# guard: plots-matplotlib-imported-only-draw
if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: One colour per status, in the order of the status list, so a new status always has one.
_PALETTE = (
    "#4c78a8",
    "#f58518",
    "#e45756",
    "#b279a2",
    "#9d755d",
    "#72b7b2",
    "#eeca3b",
    "#bab0ac",
    "#222222",
    "#54a24b",
    "#ff9da6",
    "#79706e",
)
STATUS_COLOURS = {status: _PALETTE[i % len(_PALETTE)] for i, status in enumerate(STATUSES)}


def plot_outcomes(summary: pd.DataFrame, path: Path | str, title: str) -> None:
    """Per arm: how runs ended (stacked bars), each bar labelled with how many were correct."""
    arms = _shown(config_labels(summary))
    fig = _figure(8, 1.8 + 0.5 * len(arms))
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
    ax.set_title(_drawn(title), fontsize=10, loc="left")
    fig.legend(loc="outside lower center", fontsize=8, frameon=False, ncol=4)
    fig.savefig(path, dpi=120)


def _shown(names: list[str]) -> list[str]:
    """Names as a plot shows them (``_drawn``)."""
    # guard: plots-names-drawn-with-their
    return [_drawn(str(name)) for name in names]


def _drawn(text: str) -> str:
    """``text`` as a plot draws it, as written: on one line, a control character as its
    escape, and so is a character the font has no glyph for (a model or task set named in
    CJK or with an emoji), where matplotlib would draw a box and warn on stderr of each; a
    ``$`` drawn as itself, not starting mathtext."""
    glyphs = _glyphs()
    shown = one_line(text)
    # guard: plots-missing-glyph-escaped
    shown = "".join(c if ord(c) in glyphs else c.encode("unicode_escape").decode() for c in shown)
    return shown.replace("$", r"\$")


@functools.cache
def _glyphs() -> frozenset[int]:
    """The characters the font that plots' text is drawn in has glyphs for."""
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    return frozenset(FT2Font(font_manager.findfont(font_manager.FontProperties())).get_charmap())


def _figure(width: float, height: float) -> Figure:
    """A bare Figure, which renders without pyplot's global state or a display backend."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _pareto(points: list[tuple[float, float]]) -> list[int]:
    """Indices of points no other point beats on both cost (lower) and accuracy (higher)."""
    front = []
    for i, (cost, acc) in enumerate(points):
        beaten = any(
            (c <= cost and a >= acc) and (c < cost or a > acc)
            for j, (c, a) in enumerate(points)
            if j != i
        )
        if not beaten:
            front.append(i)
    return sorted(front, key=lambda i: points[i][0])


def plot_frontier(summary: pd.DataFrame, path: Path | str, title: str) -> None:
    """Accuracy (95% interval bars) against cost per correct answer, Pareto frontier marked.

    Arms are numbered on the plot and named in the legend, so labels never overlap.
    """
    rows = summary[summary["cost_per_correct"].notna()].reset_index(drop=True)
    if rows.empty:
        raise BadInput(
            "no arm has a cost per correct answer (nothing correct, or no price for the "
            "model); pass --price-as MODEL to price the tokens"
        )
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    fig = _figure(9, 5.5)
    ax = fig.subplots()
    x, y = rows["cost_per_correct"], rows["accuracy"]
    errors = [y - rows["accuracy_low"], rows["accuracy_high"] - y]
    ax.errorbar(x, y, yerr=errors, fmt="o", color="#4c78a8", ecolor="#9ecae9", capsize=3)
    front = _pareto(list(zip(x, y, strict=True)))
    ax.plot(x[front], y[front], "--", color="#e45756", label="Pareto frontier")
    for number, (cx, cy) in enumerate(zip(x, y, strict=True), start=1):
        ax.annotate(str(number), (cx, cy), xytext=(5, 4), textcoords="offset points", fontsize=8)
    handles = [
        ax.plot([], [], " ", label=f"{n}  {a}")[0]
        for n, a in enumerate(_shown(config_labels(rows)), start=1)
    ]
    ax.set_xscale("log")
    # Label a few round values only: log-scale minor labels crowd into each other.
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"${v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("cost per correct answer (USD, log scale)")
    ax.set_ylabel("accuracy (95% Wilson interval)")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(_drawn(title), fontsize=10, loc="left")
    ax.legend(
        handles=[*ax.get_legend_handles_labels()[0][:1], *handles],
        fontsize=7,
        loc="center left",
        bbox_to_anchor=(1.01, 0.5),
        frameon=False,
    )
    fig.savefig(path, dpi=120)


def _share(summary: pd.DataFrame, column: str) -> pd.Series[float]:
    """A token kind's mean per arm; all NaN (left out of the plot) when no run has it."""
    if column in summary:
        return pd.to_numeric(summary[column]).astype(float)
    return pd.Series(math.nan, index=summary.index, dtype=float)


def plot_tokens(summary: pd.DataFrame, path: Path | str, title: str) -> None:
    """Mean tokens per run and arm: fresh input, cached input, input written to the cache
    and output (its reasoning apart), stacked; cache writes and reasoning only when some run
    has them (``table.unreported``)."""
    arms = _shown(config_labels(summary))
    written = _share(summary, "tokens_cache_write")
    reasoning = _share(summary, "tokens_reasoning")
    fresh = summary["tokens_in"] - summary["tokens_cached"] - written.fillna(0)
    parts = [
        ("input (fresh)", fresh, "#4c78a8"),
        ("input (cached)", summary["tokens_cached"], "#9ecae9"),
        ("input (cache write)", written, "#72b7b2"),
        ("output", summary["tokens_out"] - reasoning.fillna(0), "#f58518"),
        ("output (reasoning)", reasoning, "#ffbf79"),
    ]
    parts = [
        (label, values.fillna(0), colour) for label, values, colour in parts if values.notna().any()
    ]
    fig = _figure(8, 1.8 + 0.45 * len(arms))
    ax = fig.subplots()
    left = [0.0] * len(arms)
    for label, values, colour in parts:
        ax.barh(arms, list(values), left=left, color=colour, label=label)
        left = [a + float(b) for a, b in zip(left, values, strict=True)]
    ax.invert_yaxis()
    ax.set_xlabel("tokens per run (mean)")
    ax.set_title(_drawn(title), fontsize=10, loc="left")
    fig.legend(loc="outside lower center", fontsize=8, frameon=False, ncol=3)
    fig.savefig(path, dpi=120)


def plot_turns(frame: pd.DataFrame, path: Path | str, title: str) -> None:
    """Turns per run and arm, correct runs and the rest apart (agents succeed quickly and
    fail slowly)."""
    if model_keys(frame):
        frame = arms_by_model(frame)
    arms = sorted(frame["arm"].unique())
    fig = _figure(8, 1.8 + 0.55 * len(arms))
    ax = fig.subplots()
    for kind, offset, colour in (("correct", -0.18, "#54a24b"), ("not correct", 0.18, "#e45756")):
        data, positions = [], []
        for i, arm in enumerate(arms):
            runs = frame[frame["arm"] == arm]
            picked = runs["correct"].eq(True) if kind == "correct" else ~runs["correct"].eq(True)
            turns = list(runs.loc[picked, "turns"])
            if turns:
                data.append(turns)
                positions.append(i + offset)
        if data:
            parts = ax.boxplot(
                data,
                positions=positions,
                orientation="horizontal",
                widths=0.3,
                patch_artist=True,
                manage_ticks=False,
            )
            for box in parts["boxes"]:
                box.set_facecolor(colour)
            ax.plot([], [], "s", color=colour, label=kind)
    ax.set_yticks(range(len(arms)), _shown(arms))
    ax.invert_yaxis()
    ax.set_xlabel("model calls per run")
    ax.set_title(_drawn(title), fontsize=10, loc="left")
    fig.legend(loc="outside lower center", fontsize=8, frameon=False, ncol=2)
    fig.savefig(path, dpi=120)
