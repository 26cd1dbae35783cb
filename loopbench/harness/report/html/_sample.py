"""Which runs the report of a large folder lists: a fixed sample, the same every time.

A page listing every run grows with the folder: 3 MB for 2,880 runs with their traces
opens in a second; 100,000 runs made 35 MB and took 1.6 GB to build. Above
``LIST_ALL_RUNS`` runs (``_page``) the tables, plots and counts stay over every run, and the list
holds, for each arm and failure label, up to ``PER_LABEL`` of the runs carrying it, and
``CORRECT_PER_ARM`` correct runs of each arm. Within each group runs are taken in the
order of a hash of their key (model, arm, task, repeat): spread over tasks and repeats,
the same each time the folder is reported, and the same keys in two folders of one grid.
The hash is pandas' (a fixed key), not Python's, which changes with every process.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from loopbench.harness.report.failures import Label
from loopbench.harness.report.html._runs import RunList, run_list
from loopbench.harness.report.html._scan import records_of
from loopbench.harness.results.reading import RunKey, has_traces

#: Runs listed per arm and failure label.
PER_LABEL = 12
#: Correct runs listed per arm.
CORRECT_PER_ARM = 3

_KEY = ["model", "arm", "task_id", "repeat"]


@dataclass(frozen=True)
class Sample:
    """What the page says of its run list when it holds only some runs."""

    listed: int
    runs: int
    results: str
    """The results folder as the command was given it, quoted for a shell: the export
    command shown names it."""
    traced: bool
    """Whether the folder has traces (traces.jsonl)."""
    per_label: int = PER_LABEL
    correct_per_arm: int = CORRECT_PER_ARM


def sample_rows(labelled: pd.DataFrame) -> np.ndarray[Any, np.dtype[np.intp]]:
    """Positions in ``labelled`` (as ``labelled_frame`` makes it) of the runs to list,
    ascending. Runs without a run_id are never chosen: their record cannot be found."""
    # guard: sample-does-not-depend-python
    order = pd.util.hash_pandas_object(labelled[_KEY], index=False).to_numpy()
    run_ids = labelled["run_id"].to_numpy()
    findable = ~pd.isna(run_ids) & run_ids.astype(bool)  # neither null nor empty
    arms = _arm_codes(labelled)
    failing = np.flatnonzero(findable & labelled["failed"].to_numpy(dtype=bool))
    tuples, found = pd.factorize(labelled["labels"].to_numpy()[failing])
    chosen = []
    # Each label's runs apart (a run carries a tuple of labels): none copied once per label.
    for label in dict.fromkeys(label for labels in found for label in labels):
        carrying = [code for code, labels in enumerate(found) if label in labels]
        rows = failing[np.isin(tuples, carrying)]
        # guard: large-report-lists-at-most
        listed = _first(rows, arms[rows], order[rows], PER_LABEL)
        chosen.append(listed)
    correct = np.flatnonzero(findable & labelled["correct"].eq(True).to_numpy(dtype=bool))
    chosen.append(_first(correct, arms[correct], order[correct], CORRECT_PER_ARM))
    return np.unique(np.concatenate([np.empty(0, dtype=np.intp), *chosen])).astype(np.intp)


def _arm_codes(labelled: pd.DataFrame) -> np.ndarray[Any, Any]:
    """Each run's (model, arm) as a whole number; -1 where either is null (in no group)."""
    models = pd.factorize(labelled["model"])[0]
    arms, arm_names = pd.factorize(labelled["arm"])
    codes: np.ndarray[Any, Any] = np.where(
        (models >= 0) & (arms >= 0), models.astype(np.int64) * len(arm_names) + arms, -1
    )
    return codes


def _first(
    rows: np.ndarray[Any, Any],
    groups: np.ndarray[Any, Any],
    order: np.ndarray[Any, Any],
    count: int,
) -> np.ndarray[Any, Any]:
    """Of ``rows``, the first ``count`` of each group (null: none) in hash ``order``, ties
    in row order. Each group's are found among those at or under its ``count``-th smallest
    hash, in linear time, rather than by sorting all of them."""
    first = []
    for group in np.unique(groups[groups >= 0]).tolist():
        mine = np.flatnonzero(groups == group)
        if 0 < count < len(mine):
            mine = mine[order[mine] <= np.partition(order[mine], count - 1)[count - 1]]
        ranked = mine[np.argsort(order[mine], kind="stable")]  # stable: ties in row order
        first.append(rows[ranked[:count]])
    chosen: np.ndarray[Any, Any] = np.concatenate([rows[:0], *first])
    return chosen


def sampled_runs(
    results: Path, runs: pd.DataFrame, labelled: pd.DataFrame, by_model: bool
) -> tuple[RunList, Sample]:
    """The run list of ``sample_rows``: only those runs' records and traces are read.
    ``runs`` is the folder's frame (with run_id and cost_usd), ``labelled`` its labels."""
    rows = sample_rows(labelled)
    traced = has_traces(results)
    chosen = labelled.iloc[rows]
    records = records_of(results, set(chosen["run_id"]))
    costs = dict(zip(runs["run_id"].iloc[rows], runs["cost_usd"].iloc[rows], strict=True))
    listed = run_list(
        results,
        records,
        [costs[record.run_id] for record in records],
        labels_by_run(chosen),
        by_model,
        askers=_askers(labelled) if traced else {},
    )
    return listed, Sample(len(records), len(runs), shlex.quote(str(results)), traced)


def _askers(labelled: pd.DataFrame) -> dict[str, str]:
    """A run of each task whose trace gives the task's question, so the matrix shows every
    task's: the first traced one when the labels read one (they read runs not correct)."""
    runs = labelled[["task_id", "run_id", "traced"]]
    runs = runs[runs["run_id"].fillna("").ne("")]
    first = runs.sort_values("traced", ascending=False, kind="stable").drop_duplicates("task_id")
    return dict(zip(first["task_id"], first["run_id"], strict=True))


def labels_by_run(labelled: pd.DataFrame) -> dict[RunKey, tuple[Label, ...]]:
    """Each run's labels (a ``labelled_frame``'s rows) by its key."""
    columns = [labelled[name].tolist() for name in (*_KEY, "labels")]
    return {(m, a, t, int(r)): tuple(found) for m, a, t, r, found in zip(*columns, strict=True)}
