"""Every run of a results folder labelled by the failure rules, and the labels counted per arm.

The rules themselves are in ``loopbench.harness.report.failure_rules``. A folder is read as columns
(``loopbench.harness.results.columns``) rather than as one record object per run, so that a million
runs are labelled in seconds: runs whose records agree on everything the rules read get their
labels once, and traces are read only for the runs that failed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from loopbench.harness.report.failure_rules import (
    CODE_EDITS,
    LABELS,
    RULES,
    Label,
    RunFacts,
    failed,
    label_run,
    labels,
)
from loopbench.harness.report.failure_traces import RunTrace, read_traces
from loopbench.harness.report.model_axis import MODEL_AND_ARM, model_keys
from loopbench.harness.results.columns import FIELDS, read_frame
from loopbench.harness.results.reading import has_traces

__all__ = [
    "LABELS",
    "RULES",
    "ArmFailures",
    "FailedRun",
    "Label",
    "RunFacts",
    "failed",
    "label_run",
    "labelled_frame",
    "labels",
    "summarize_failures",
]

#: What the rules read of a record (``RunFacts``), less the answer, which no rule reads
#: without a trace: a folder without traces is labelled without reading its answers.
RULE_FIELDS = (
    "status",
    "correct",
    "pattern",
    "options",
    "metrics",
    "tools_offered",
    "answer_kind",
    "repeated_actions",
    "tool_calls",
    "parse_failures",
)
#: The facts the rules read that are dicts, told apart otherwise (``_distinct_records``).
DICTS = ("options", "metrics")
#: What names a run in the labelled frame and its examples.
NAMING = ("model", "arm", "task_id", "repeat", "status", "correct")
#: What the rules read besides, when the folder has traces.
TRACED = ("run_id", "answer")


@dataclass(frozen=True, slots=True)
class _Row:
    """``RunFacts`` from a row of the runs' columns."""

    status: str
    correct: bool | None
    answer: str | None
    pattern: str
    options: Mapping[str, Any]
    metrics: Mapping[str, float]
    tools_offered: bool | None
    answer_kind: str | None
    repeated_actions: int
    tool_calls: int
    parse_failures: int


def columns_labelled(folder: Path | str) -> tuple[str, ...]:
    """The columns ``labelled_frame`` reads beside a frame's usual ones, so a reader of the
    folder keeps them instead of reading it twice: run ids and answers, with traces."""
    return TRACED if has_traces(folder) else ()


def labelled_frame(folder: Path | str, runs: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per run of ``folder`` (superseded runs left out), in the order of ``runs``
    (as ``read_frame`` reads it when not given): model, arm, task_id, repeat, status,
    correct, run_id (empty when ``runs`` has none), ``failed``, ``labels`` (a tuple in
    ``LABELS`` order, empty for a run not failed) and ``traced``: whether the rules read
    the run's trace (read for runs not correct only).

    ``runs`` saves a second reading: a frame from ``read_frame(s)`` of the same folder. One
    without a column the rules need is read again. Raises ``ResultsError`` as the readers do.
    """
    folder = Path(folder)
    with_traces = has_traces(folder)
    needed = {*RULE_FIELDS, *NAMING, *(TRACED if with_traces else ())}
    if runs is None or not needed <= set(runs.columns):
        runs = read_frame(folder, drop=[n for n in FIELDS if n not in {*needed, *TRACED}])
    if runs.empty:
        return pd.DataFrame(columns=[*NAMING, "run_id", "failed", "labels", "traced"])
    run_ids = runs["run_id"] if "run_id" in runs else pd.Series("", index=runs.index)
    answers = runs["answer"] if "answer" in runs else pd.Series(None, index=runs.index)
    traces = _failed_traces(folder, runs, run_ids) if with_traces else {}
    columns = [runs[name].to_numpy() for name in RULE_FIELDS]
    answer_of = answers.to_numpy()

    def row(i: int) -> _Row:
        return _row([column[i] for column in columns], answer_of[i])

    # Without a trace a run's labels follow from its record alone: they are computed once
    # per distinct record, from its first run, and traced runs are labelled one by one. A
    # run answered and correct has none, whatever the rest of its record.
    maybe = runs["status"].ne("answered").to_numpy() | ~runs["correct"].eq(True).to_numpy()
    group = _distinct_records(runs, answers, maybe)
    # Each distinct record's first run (the numbers are 0, 1, ...), without sorting them.
    first = np.full(int(group.max()) + 1 if len(group) else 0, len(group))
    np.minimum.at(first, group, np.arange(len(group)))
    distinct_fails = np.zeros(len(first), dtype=bool)
    distinct_found = np.empty(len(first), dtype=object)
    for number, i in enumerate(np.flatnonzero(maybe)[first].tolist()):
        facts = row(i)
        distinct_fails[number], distinct_found[number] = failed(facts), tuple(labels(facts, None))
    fails = np.zeros(len(runs), dtype=bool)
    found = np.empty(len(runs), dtype=object)
    found[:] = [()] * len(runs)
    fails[maybe], found[maybe] = distinct_fails[group], distinct_found[group]
    traced = run_ids.isin(traces.keys()).to_numpy()
    for i in np.flatnonzero(traced):
        facts, trace = row(int(i)), traces[str(run_ids.iat[int(i)])]
        fails[i], found[i] = failed(facts), tuple(labels(facts, trace))
    return runs[list(NAMING)].assign(
        run_id=run_ids.to_numpy(),
        failed=fails,
        labels=pd.Series(found, index=runs.index, dtype=object),
        traced=traced,
    )


def _distinct_records(runs: pd.DataFrame, answers: pd.Series, chosen: np.ndarray) -> np.ndarray:
    """Per ``chosen`` run, the number of its distinct record as the rules read it (0, 1, ...
    in order of first appearance). Options are told apart by identity: the column reader
    gives equal ones one shared dict, so equal records still share a number; metrics by
    the one thing the rules read of them (runs' metrics differ in much they do not read).
    The facts are grouped as numbers standing for their values: a frame built of a
    million Python strings is scanned and copied again, and a column of nulls alone needs
    no hashing."""
    rows = np.flatnonzero(chosen)
    facts = pd.DataFrame(
        {
            name: _value_codes(runs[name].to_numpy()[rows])
            for name in RULE_FIELDS
            if name not in DICTS
        }
    )
    options = runs["options"].to_numpy()[rows]
    facts["options"] = np.fromiter(map(id, options), dtype=np.int64, count=len(rows))
    facts["metrics"] = _code_edits(runs["metrics"].to_numpy()[rows])
    facts["answer"] = _value_codes(answers.to_numpy()[rows])
    # guard: runs-labelled-once-per-distinct
    grouped = facts.groupby(list(facts.columns), dropna=False, sort=False, observed=True)
    return grouped.ngroup().to_numpy()


def _value_codes(values: np.ndarray) -> np.ndarray:
    """A number per value, equal for equal values (all nulls one value), as a grouping
    tells them apart: numbers as they are, others factorized (nulls only: one code)."""
    if values.dtype != object:
        return values
    if pd.api.types.infer_dtype(values, skipna=True) == "empty":
        return np.zeros(len(values), dtype=np.int8)
    codes: np.ndarray = pd.factorize(values, use_na_sentinel=False)[0]
    return codes


def _code_edits(metrics: np.ndarray) -> np.ndarray:
    """Whether each run's metrics hold ``CODE_EDITS``, each distinct dict looked into once
    (equal metrics share one dict)."""
    ids = np.fromiter(map(id, metrics), dtype=np.int64, count=len(metrics))
    _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    held = [CODE_EDITS in (metrics[i] or {}) for i in first.tolist()]
    return np.array(held, dtype=bool)[inverse]


def _row(facts: list[Any], answer: Any) -> _Row:
    fact = dict(zip(RULE_FIELDS, facts, strict=True))
    correct, offered, kind = fact["correct"], fact["tools_offered"], fact["answer_kind"]
    return _Row(
        status=fact["status"],
        correct=None if correct is None or correct != correct else bool(correct),
        answer=answer if isinstance(answer, str) else None,
        pattern=fact["pattern"],
        options=fact["options"] or {},
        metrics=fact["metrics"] or {},
        tools_offered=None if offered is None or offered != offered else bool(offered),
        answer_kind=kind if isinstance(kind, str) else None,
        repeated_actions=int(fact["repeated_actions"]),
        tool_calls=int(fact["tool_calls"]),
        parse_failures=int(fact["parse_failures"]),
    )


def _failed_traces(folder: Path, runs: pd.DataFrame, run_ids: pd.Series) -> dict[str, RunTrace]:
    """The traces of the runs that did not end correct: no other run's is read."""
    not_correct = runs["correct"].ne(True) | runs["status"].ne("answered")
    return read_traces(folder, wanted=set(run_ids[not_correct]))


@dataclass(frozen=True)
class FailedRun:
    """An example of a label: which run it is."""

    run_id: str
    model: str
    arm: str
    task_id: str
    repeat: int
    status: str


@dataclass(frozen=True)
class ArmFailures:
    """One arm's failed runs: how many carry each label, with example runs."""

    arm: str
    runs: int
    failed: int
    untraced: int
    """Failed runs without a trace: they carry only the labels their record supports."""
    counts: dict[Label, int]
    examples: dict[Label, list[FailedRun]]

    def share(self, label: Label) -> float:
        return self.counts[label] / self.failed if self.failed else 0.0


def summarize_failures(labelled: pd.DataFrame, examples: int = 3) -> list[ArmFailures]:
    """Per arm, sorted by name (each named after its model when runs are on several
    models): the share of its failed runs carrying each label, with the first ``examples``
    runs carrying it, in the frame's order."""
    if labelled.empty:
        return []
    codes, tuples = pd.factorize(labelled["labels"])
    # Which distinct label tuples carry each label, and (only when examples are asked for)
    # which runs: computed once for all arms.
    with_label = {
        label: [c for c, found in enumerate(tuples) if label in found] for label in LABELS
    }
    carrying = {
        label: np.isin(codes, tuple_codes) if examples else np.zeros(len(codes), dtype=bool)
        for label, tuple_codes in with_label.items()
    }
    failed_runs = labelled["failed"].to_numpy(dtype=bool)
    traced = labelled["traced"].to_numpy(dtype=bool)
    arm_codes, named = _arm_codes(labelled)  # each arm's runs found in one pass, not per arm
    summaries = []
    for arm in sorted(named):
        mine = arm_codes == named[arm]
        failing = mine & failed_runs
        per_tuple = np.bincount(codes[failing], minlength=len(tuples))
        summaries.append(
            ArmFailures(
                arm=arm,
                runs=int(mine.sum()),
                failed=int(failing.sum()),
                untraced=int((failing & ~traced).sum()),
                counts={label: int(per_tuple[c].sum()) for label, c in with_label.items()},
                examples={
                    label: _examples(labelled, failing & carrying[label], examples)
                    if examples
                    else []
                    for label in LABELS
                },
            )
        )
    return summaries


def _arm_codes(labelled: pd.DataFrame) -> tuple[np.ndarray, dict[str, int]]:
    """Each run's arm as a number, and each arm's name (after its model on a model axis)
    with its number: a categorical's codes when no arm is null (no string made per run)."""
    if not model_keys(labelled):
        codes, names = pd.factorize(labelled["arm"])
        if (codes >= 0).all():
            return codes, {str(name): number for number, name in enumerate(names)}
    arms = labelled["arm"].astype(str)
    if model_keys(labelled):
        arms = labelled["model"].astype(str) + MODEL_AND_ARM + arms
    codes, names = pd.factorize(arms)
    return codes, {str(name): number for number, name in enumerate(names)}


def _examples(labelled: pd.DataFrame, chosen: np.ndarray, examples: int) -> list[FailedRun]:
    rows = labelled.iloc[np.flatnonzero(chosen)[:examples]]
    columns = [rows[name].astype(str) for name in ("run_id", "model", "arm", "task_id")]
    return [
        FailedRun(run_id, model, arm, task_id, int(repeat), str(status))
        for run_id, model, arm, task_id, repeat, status in zip(
            *columns, rows["repeat"], rows["status"], strict=True
        )
    ]
