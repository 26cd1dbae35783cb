"""What the report shows, gathered from a results folder by the functions `table`, `plot` and
`failures` use, so its numbers and labels are theirs."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from loopbench.harness.errors import BadInput
from loopbench.harness.report.aside import Aside
from loopbench.harness.report.html._facts import facts
from loopbench.harness.report.html._matrix import TaskRow, task_cells, task_matrix
from loopbench.harness.report.html._memory import after_summary
from loopbench.harness.report.html._plotting import Drawing, Plot, plots
from loopbench.harness.report.html._prompts import ArmPrompts, overridden_prompts
from loopbench.harness.report.judge_accuracy import (
    Judging,
    with_corrected,
    with_corrected_reference,
)
from loopbench.harness.report.model_axis import config_labels, model_keys
from loopbench.harness.report.plots import STATUS_COLOURS
from loopbench.harness.report.published import with_published
from loopbench.harness.report.rendering import render
from loopbench.harness.report.step_budget import KEEP_SHARE, step_budgets
from loopbench.harness.report.step_budget_text import render_budgets, step_budget_note
from loopbench.harness.report.table import Measures, repeat_measures, summarize, with_reference
from loopbench.harness.results.columns import UNREAD, read_frames
from loopbench.harness.results.frames import Pricing, records_frame
from loopbench.harness.results.published import read_published
from loopbench.harness.results.reading import RUNS, has_traces, read_records
from loopbench.harness.stats.separation import StoppedRun

if TYPE_CHECKING:  # the rules and the traces' readers are imported where runs are labelled
    from loopbench.harness.report.failures import ArmFailures, Label
    from loopbench.harness.report.html._listing import Listed
    from loopbench.harness.report.html._sample import Sample
    from loopbench.harness.results.records import RunRecord

#: From this many bytes of runs (some 50,000 runs) the figures are drawn by a child.
DRAW_ASIDE_FROM = 50_000_000
#: Up to this many runs the page lists them all; above it, a sample (``_sample``).
LIST_ALL_RUNS = 5_000

#: The columns the page groups and counts the runs by, again and again: a million strings
#: hashed at each grouping took a second of a report.
KEYED = ("model", "arm", "task_id")


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
    rules: dict[Label, str]
    matrix: list[TaskRow]
    data: dict[str, Any]
    """What the page's script reads: the runs listed, each with its trace as a conversation."""
    sample: Sample | None = None
    """Set when the page lists only some runs (more than ``LIST_ALL_RUNS``)."""
    prompts: list[ArmPrompts] = field(default_factory=list)
    """The prompt slots each arm overrode, with their text."""
    step_budget: str = ""
    """The step budget table (``loopbench.harness.report.step_budget``, escaped HTML); empty when no
    run was graded."""
    step_budget_note: str = ""


def build_page(results: Path, pricing: Pricing, reference: str | None = None) -> Page:
    """Everything the report shows. ``ResultsError``, ``PriceError`` or ``ValueError`` when
    the folder, the prices or ``reference`` cannot be used.

    Every table, plot and count is over all the runs, read as columns; the run list holds
    every run up to ``LIST_ALL_RUNS`` and a fixed sample above (``_sample``), whose records
    and traces alone are then read. A large folder's figures are drawn by a child forked
    before the runs are read (``_plotting``)."""
    drawing = _drawing(results)
    try:
        return _built(results, pricing, reference, drawing)
    except BaseException:
        if drawing is not None:
            drawing.cancel()
        raise


def _drawing(results: Path) -> Drawing | None:
    """A child to draw the figures, for a folder of ``DRAW_ASIDE_FROM`` bytes of runs or
    more; None where none was forked."""
    try:
        large = (results / RUNS).stat().st_size >= DRAW_ASIDE_FROM
    except OSError:
        return None
    drawing = Drawing() if large else None
    return drawing if drawing is not None and drawing.aside.forked else None


def _built(results: Path, pricing: Pricing, reference: str | None, drawing: Drawing | None) -> Page:
    """``build_page``, the figures drawn by ``drawing`` when given."""
    frame, retried, records = _read(results, pricing)
    if frame.empty:
        raise BadInput(f"{results}: no finished runs yet")
    several = bool(model_keys(frame))  # a model axis: each arm is named after its model
    aside = _aside(results, frame, records, several)
    summary = summarize(frame, retried=retried, measures=Measures(pass_k=repeat_measures(frame)))
    summary = with_published(summary, read_published(results))
    judging = Judging.of(results)
    summary = with_corrected(frame, summary, judging)
    if reference:
        summary = with_reference(frame, summary, reference)
        summary = with_corrected_reference(frame, summary, reference, judging)
    where = (
        f"{', '.join(sorted(frame['task_set'].unique()))} on "
        f"{', '.join(sorted(frame['model'].unique()))}"
    )
    titled = f"{where}; {pricing.label}"
    if drawing is not None:
        drawing.give(summary, titled)
    _, notes = render(summary, "md").split("\n\n", 1)  # the table, then its notes
    if said := judging.note():
        notes = f"{notes}\n\n{said}"
    budget, budget_note = _step_budget(frame)
    frame = after_summary(frame)  # memory peaks next, while the runs are labelled
    stopped = StoppedRun.load(results)
    arms = config_labels(summary)
    # While a child lists the runs.
    figures = drawing.result() if drawing is not None else plots(summary, titled)
    # What needs no listed run, made while a child may still be listing them.
    shown, prompts = facts(results, frame, pricing), overridden_prompts(frame)
    cells = task_cells(frame, several)
    listed, sample, failures, rules = (
        aside.result() if aside else _listed(results, frame, records, several)
    )
    # guard: report-shows-prompts-arms-overrode
    return Page(
        title=where,
        facts=shown,
        summary=render(summary, "html"),
        notes=[*notes.split("\n\n"), *([stopped.footnote_of(frame)] if stopped else [])],
        plots=figures,
        arms=arms,
        failures=failures,
        labels=[label for label in rules if any(arm.counts[label] for arm in failures)],
        rules=rules,
        matrix=task_matrix(cells, arms, listed.questions),
        data={
            "runs": listed.runs,
            "questions": listed.questions,
            "systems": listed.systems,
            "colours": STATUS_COLOURS,
            "rules": rules,
        },
        sample=sample,
        prompts=prompts,
        step_budget=budget,
        step_budget_note=budget_note,
    )


def _listed(
    results: Path, frame: pd.DataFrame, records: list[RunRecord] | None, several: bool
) -> Listed:
    """The runs the page lists (all of ``records`` when given, else a sample of
    ``frame``'s), what sample, each arm's failures, and each label's rule as text."""
    from loopbench.harness.report.html._listing import listed

    return listed(results, frame, records, several)


def _aside(
    results: Path, frame: pd.DataFrame, records: list[RunRecord] | None, several: bool
) -> Aside[Listed] | None:
    """A large folder's runs labelled and sampled in a forked child, beside the summary
    here; None where no child was forked, so that they are listed here from the frame less
    the summary's columns, as the page holds it by then (not from the whole frame kept)."""
    if records is not None:
        return None
    aside = Aside(functools.partial(_listed_of_all, results, frame, several))
    return aside if aside.forked else None


def _listed_of_all(results: Path, frame: pd.DataFrame, several: bool) -> Listed:
    """``_listed`` of a sample of all the runs, less the columns only the summary reads."""
    return _listed(results, after_summary(frame), None, several)


def _keyed(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its ``KEYED`` columns as categories (sorted, so grouped in the order
    the strings sort), each string hashed once instead of at every grouping. The groupings
    it meets pass ``observed=True``: pandas before 3 would add a group for every
    combination of categories, seen or not."""
    return frame.astype({name: "category" for name in KEYED if name in frame})


def _step_budget(frame: pd.DataFrame) -> tuple[str, str]:
    """The step budget table at the default share and its note; empty with no graded run."""
    budgets = step_budgets(frame, KEEP_SHARE)
    graded = budgets["step_budget_correct_runs"] + budgets["step_budget_failed_runs"]
    # guard: report-step-budget-shown-when-graded
    if not graded.sum():
        return "", ""
    return render_budgets(budgets, "html"), step_budget_note(KEEP_SHARE)


def _read(
    results: Path, pricing: Pricing
) -> tuple[pd.DataFrame, pd.DataFrame, list[RunRecord] | None]:
    """The runs (``KEYED`` as categories) and the superseded records, as columns, and the
    records themselves when the page lists every run (up to ``LIST_ALL_RUNS``: answers and
    traces included)."""
    # Run ids find the listed runs; versions are a fact; prompt hashes name the prompts
    # arms overrode; answers, when the folder has traces, are what the failure rules read
    # beside them (labelled_frame reads again without).
    # guard: report-keeps-prompts-hash
    kept = {"run_id", "loopbench_version", "prompts_hash"}
    kept |= {"answer"} if has_traces(results) else set()
    drop = [name for name in UNREAD if name not in kept]
    frame, retried = read_frames(results, pricing, drop=drop)
    # guard: report-lists-every-run-up
    if len(frame) > LIST_ALL_RUNS:
        return _keyed(frame), retried, None
    records = read_records(results)
    if len(records) != len(frame):  # a writer added runs in between: one reading for both
        frame = records_frame(records, pricing).drop(columns=drop, errors="ignore")
    return _keyed(frame), retried, records
