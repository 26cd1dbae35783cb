"""What the report shows, gathered from a results folder by the functions `table`, `plot` and
`failures` use, so its numbers and labels are theirs."""

from __future__ import annotations

import base64
import inspect
import json
import math
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from harness.columns import UNREAD, read_frames
from harness.records import RunRecord
from harness.report.axis import config_labels, model_keys
from harness.report.failures import (
    LABELS,
    RULES,
    ArmFailures,
    Label,
    label_folder,
    summarize_failures,
)
from harness.report.html._matrix import TaskRow, task_matrix
from harness.report.html._runs import run_list
from harness.report.plots import STATUS_COLOURS, plot_frontier, plot_outcomes
from harness.report.separation import StoppedRun
from harness.report.table import (
    Pricing,
    records_frame,
    render,
    summarize,
    with_reference,
)
from harness.store import EXPERIMENT, read_records

#: What the two labels without a rule mean (docs/failures.md).
FALLBACKS = {
    "wrong but grounded": "A wrong answer none of the rules explains: its numbers come from "
    "what was looked up, yet it is wrong.",
    "wrong with no trace": "A wrong answer whose trace is missing, that no rule the record "
    "supports explains.",
}


@dataclass(frozen=True)
class Plot:
    title: str
    image: str | None
    """The figure as a ``data:`` URI (SVG), or None when it cannot be drawn."""
    missing: str = ""
    """Why there is no figure."""
    key: tuple[tuple[str, str, str, str], ...] = ()
    """The arms as the figure numbers them: number, arm, accuracy, cost per correct."""


@dataclass(frozen=True)
class Page:
    title: str
    facts: list[tuple[str, str]]
    summary: str
    """The summary table as ``loopbench table --format html`` renders it (escaped HTML)."""
    notes: list[str]
    plots: list[Plot]
    arms: list[str]
    failures: list[ArmFailures]
    labels: list[Label]
    """The labels some arm's runs carry, in the taxonomy's order."""
    rules: dict[str, str]
    matrix: list[TaskRow]
    data: dict[str, Any]
    """What the page's script reads: every run, with its trace as a conversation."""


def build_page(results: Path, pricing: Pricing, reference: str | None = None) -> Page:
    """Everything the report shows. ``ResultsError``, ``PriceError`` or ``ValueError`` when
    the folder, the prices or ``reference`` cannot be used."""
    frame, retried = read_frames(results, pricing, drop=UNREAD)
    records = read_records(results)  # the page lists every run, answer and trace included
    if len(records) != len(frame):  # a writer added runs in between: one reading for both
        frame = records_frame(records, pricing).drop(columns=list(UNREAD), errors="ignore")
    if frame.empty:
        raise ValueError(f"{results}: no finished runs yet")
    summary = summarize(frame, retried=retried)
    if reference:
        summary = with_reference(frame, summary, reference)
    where = (
        f"{', '.join(sorted(frame['task_set'].unique()))} on "
        f"{', '.join(sorted(frame['model'].unique()))}"
    )
    _, notes = render(summary, "md").split("\n\n", 1)  # the table, then its notes
    stopped = StoppedRun.load(results)
    labelled = label_folder(results)
    arms = config_labels(summary)
    several = bool(model_keys(frame))  # a model axis: each arm is named after its model
    listed = run_list(results, records, list(frame["cost_usd"]), labelled, several)
    rules: dict[str, str] = {label: _rule(label) for label in LABELS}
    return Page(
        title=where,
        facts=_facts(results, records, pricing),
        summary=render(summary, "html"),
        notes=[*notes.split("\n\n"), *([stopped.footnote(records)] if stopped else [])],
        plots=_plots(summary, f"{where}; {pricing.label}"),
        arms=arms,
        failures=summarize_failures(labelled, examples=0),
        labels=[label for label in LABELS if any(label in run.labels for run in labelled)],
        rules=rules,
        matrix=task_matrix(records, arms, listed.questions, several),
        data={
            "runs": listed.runs,
            "questions": listed.questions,
            "systems": listed.systems,
            "colours": STATUS_COLOURS,
            "rules": rules,
        },
    )


def _rule(label: Label) -> str:
    rule = RULES.get(label)
    doc = inspect.cleandoc(rule.__doc__ or "") if rule else FALLBACKS.get(label, "")
    return " ".join(doc.split())


def _facts(results: Path, records: list[RunRecord], pricing: Pricing) -> list[tuple[str, str]]:
    try:
        experiment = json.loads((results / EXPERIMENT).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        experiment = {}
    experiment = experiment if isinstance(experiment, dict) else {}
    versions = sorted({r.loopbench_version for r in records if r.loopbench_version})
    facts = [
        ("task set", ", ".join(sorted({r.task_set for r in records}))),
        ("model", ", ".join(sorted({r.model for r in records}))),
        ("endpoint", str(experiment.get("base_url") or "")),
        (
            "runs",
            f"{len(records)} ({len({r.arm for r in records})} arms, "
            f"{len({r.task_id for r in records})} tasks, {max(r.repeat for r in records) + 1} "
            "repeats)",
        ),
        ("prices", pricing.label.removeprefix("cost ")),
        (
            "experiment",
            f"{experiment['experiment_id']} created {experiment.get('created_at', '?')}"
            if experiment.get("experiment_id")
            else "",
        ),
        ("written by", "loopbench " + ", ".join(versions) if versions else ""),
        ("report made", datetime.now(UTC).isoformat(timespec="seconds")),
    ]
    return [(key, value) for key, value in facts if value.strip()]


def _plots(summary: pd.DataFrame, where: str) -> list[Plot]:
    figures: list[tuple[str, Callable[[pd.DataFrame, Path, str], None]]] = [
        ("Accuracy against cost per correct answer", plot_frontier),
        ("How runs ended", plot_outcomes),
    ]
    plots = []
    with tempfile.TemporaryDirectory() as tmp:
        for number, (title, draw) in enumerate(figures):
            path = Path(tmp) / f"{number}.svg"
            try:
                draw(summary, path, where)
            except ValueError as exc:
                plots.append(Plot(title, None, str(exc)))
                continue
            svg = base64.b64encode(path.read_bytes()).decode("ascii")
            key = _frontier_key(summary) if draw is plot_frontier else ()
            plots.append(Plot(title, f"data:image/svg+xml;base64,{svg}", key=key))
    return plots


def _frontier_key(summary: pd.DataFrame) -> tuple[tuple[str, str, str, str], ...]:
    """The frontier's legend, larger: ``plot_frontier`` numbers the arms that have a cost
    per correct answer, in the summary's order."""
    rows = summary[summary["cost_per_correct"].notna()]
    return tuple(
        (str(number), arm, f"{accuracy:.0%}", _dollars(cost))
        for number, (arm, accuracy, cost) in enumerate(
            zip(config_labels(rows), rows["accuracy"], rows["cost_per_correct"], strict=True),
            start=1,
        )
    )


def _dollars(value: float) -> str:
    """Two significant digits, never an exponent: $0.000024, $0.31, $12.40."""
    places = 2 if value >= 1 or value <= 0 else max(2, 1 - math.floor(math.log10(value)))
    return f"${value:.{places}f}"
