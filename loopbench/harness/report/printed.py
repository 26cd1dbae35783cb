"""What a printed table says around its rows: its title (the set, the model, the repeats,
the grader, the sampling and the prices) and, for a run stopped by --until-separated, its
decisions. ``loopbench table``, ``loopbench run`` and ``Results.printed`` print them."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from loopbench.harness.results.frames import Pricing
from loopbench.harness.results.identity import graded_by
from loopbench.harness.results.reading import read_experiment
from loopbench.harness.sampling import describe_runs
from loopbench.harness.stats.separation import StoppedRun


def stopping_note(results: Path, runs: pd.DataFrame) -> str:
    """For a run stopped by --until-separated: its decisions and the runs not spent, from
    the folder's ``runs`` as the table read them."""
    stopped = StoppedRun.load(results)
    return stopped.footnote_of(runs) if stopped else ""


def table_title(frame: pd.DataFrame, pricing: Pricing, results: Path) -> str:
    sets = ", ".join(sorted(frame["task_set"].unique()))
    found = frame["model"].unique()  # once: a million runs' models are not found twice
    models = ", ".join(sorted(found))
    repeats = int(frame["repeat"].max()) + 1
    sampling = describe_runs(frame["sampling"]) if "sampling" in frame else "not read"
    code = "answer_kind" in frame and bool(frame["answer_kind"].eq("code").any())
    graded = graded_by(read_experiment(results), code)
    return (
        f"**{sets}** on {models}, {repeats} repeat(s), graded by {graded}; sampling: "
        f"{sampling}; {pricing.label_for(found)}"
    )
