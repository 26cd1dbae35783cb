"""The runs a report lists, their failures counted per arm, and what each failure label
means: the work that reads the failure rules and the traces' event models.

``_page`` imports this module only where the runs are labelled: in the child it forks for a
large folder (the parent, building the summary meanwhile, never imports the rules), or in
the process itself when no child was forked or the folder is small.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pandas as pd

from loopbench.harness.report.failures import (
    LABELS,
    RULES,
    ArmFailures,
    Label,
    labelled_frame,
    summarize_failures,
)
from loopbench.harness.report.html._runs import RunList, run_list
from loopbench.harness.report.html._sample import Sample, labels_by_run, sampled_runs
from loopbench.harness.results.records import RunRecord

#: What the two labels without a rule mean (docs/failures.md).
FALLBACKS = {
    "wrong but grounded": "A wrong answer none of the rules explains: its numbers come from "
    "what was looked up, yet it is wrong.",
    "wrong with no trace": "A wrong answer whose trace is missing, that no rule the record "
    "supports explains.",
}

#: The runs listed, what sample they are (None: all), each arm's failures, and each
#: label's rule as text, in the taxonomy's order.
Listed = tuple[RunList, Sample | None, list[ArmFailures], dict[Label, str]]


def listed(
    results: Path, frame: pd.DataFrame, records: list[RunRecord] | None, several: bool
) -> Listed:
    """The runs the page lists (all of ``records`` when given, else a sample of
    ``frame``'s), what sample, each arm's failures, and the rules."""
    labelled = labelled_frame(results, runs=frame)
    sample = None
    if records is None:
        runs, sample = sampled_runs(results, frame, labelled, several)
    else:
        costs = list(frame["cost_usd"])
        runs = run_list(results, records, costs, labels_by_run(labelled), several)
    rules = {label: _rule(label) for label in LABELS}
    return runs, sample, summarize_failures(labelled, examples=0), rules


def _rule(label: Label) -> str:
    rule = RULES.get(label)
    doc = inspect.cleandoc(rule.__doc__ or "") if rule else FALLBACKS.get(label, "")
    return " ".join(doc.split())
