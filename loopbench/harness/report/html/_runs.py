"""Every run as the page's script reads it: the record's fields, the failure labels and
the trace as a conversation, kept compact for a few thousand runs (a system prompt is held
once and pointed to; a task's question once, and the trace's copy of it left out)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loopbench.harness.report.failure_traces import RunTrace
from loopbench.harness.report.failures import Label
from loopbench.harness.report.html._conversation import Entry, conversation
from loopbench.harness.report.html._matrix import arm_label
from loopbench.harness.report.html._scan import traces_of
from loopbench.harness.results.reading import RunKey, run_key
from loopbench.harness.results.records import RunRecord
from loopbench.harness.trace import MAX_TEXT, cut

#: The most of a record's text the page shows: as much as a trace keeps by default. A longer
#: one (a results folder loopbench did not write: a 50 MB error) would swell the page.
SHOWN_TEXT = MAX_TEXT


def _shown(text: str | None) -> str | None:
    # guard: report-shows-record-texts-cut
    return None if text is None else cut(text, SHOWN_TEXT)


@dataclass(frozen=True)
class RunList:
    runs: list[dict[str, Any]]
    """By arm, task and repeat."""
    questions: dict[str, str]
    """Each task's question, as its first traced run was asked it."""
    systems: list[str]
    """The system prompts; a trace's ``system`` entry holds its number (``ref``)."""


def run_list(
    results: Path,
    records: Sequence[RunRecord],
    costs: Sequence[float | None],
    labels: Mapping[RunKey, tuple[Label, ...]],
    by_model: bool = False,
    askers: Mapping[str, str] | None = None,
) -> RunList:
    """``records`` with their cost as priced for the table, and their labels; with
    ``by_model``, each run's arm is named after its model, as the summary names it.

    A task's question is as its first traced run of ``records`` was asked it, or, given
    ``askers`` (task to run_id: runs not listed, when only some are), as that run was."""
    wanted = {r.run_id for r in records if r.run_id} | set((askers or {}).values())
    traces = _traces(results, wanted)
    questions: dict[str, str] = {}
    if askers is None:
        for record in records:
            if question := traces.get(record.run_id, ("", None))[0]:
                questions.setdefault(record.task_id, question)
    else:
        for task, run_id in askers.items():
            if question := traces.get(run_id, ("", None))[0]:
                questions[task] = question
    systems: dict[str, int] = {}
    runs = []
    for record, cost in sorted(zip(records, costs, strict=True), key=lambda p: run_key(p[0])):
        question, entries = traces.get(record.run_id, ("", None))
        asked = question or questions.get(record.task_id)
        for entry in entries or []:
            if entry["k"] == "system":
                entry["ref"] = systems.setdefault(entry.pop("text"), len(systems))
            elif entry["k"] == "message" and entry["role"] == "user" and entry["text"] == asked:
                entry.update(text="", question=True)  # shown once, above the conversation
        runs.append(
            {
                "id": record.run_id,
                "arm": arm_label(record, by_model),
                "task": record.task_id,
                "repeat": record.repeat,
                "status": record.status,
                "correct": record.correct,
                "labels": list(labels[run_key(record)]),
                "turns": record.turns,
                "tool_calls": record.tool_calls,
                "tokens_in": record.tokens_in,
                "tokens_out": record.tokens_out,
                # The shares only where some were recorded: older runs' pages as before.
                **_shares(record),
                "cost": None if cost is None or math.isnan(cost) else float(cost),
                # Only a judge's runs: older runs' pages as before.
                **_judged(record),
                "latency": record.latency_s,
                "answer": _shown(record.answer),
                "reason": _shown(record.grade_reason),
                "error": _shown(record.error),
                # Only when the run was asked otherwise than the task's first run.
                **({"question": question} if asked != questions.get(record.task_id) else {}),
                "trace": entries,
            }
        )
    return RunList(runs, questions, list(systems))


def _judged(record: RunRecord) -> dict[str, object]:
    """The judge's grading of a run: why it failed, its tokens and cost, where recorded."""
    values = {
        "grade_status": record.grade_status,
        "judge_tokens_in": record.judge_tokens_in,
        "judge_tokens_out": record.judge_tokens_out,
        "judge_cost": record.judge_cost_usd,
    }
    return {key: value for key, value in values.items() if value is not None}


def _traces(results: Path, wanted: set[str]) -> dict[str, tuple[str, list[Entry]]]:
    """By run id: the run's question, as the failure rules read it, and its conversation."""
    traces: dict[str, tuple[str, list[Entry]]] = {}
    for line in traces_of(results, wanted):
        events = line["events"]
        traces[line["run_id"]] = (RunTrace.of(events).question, conversation(events))
    return traces


def _shares(record: RunRecord) -> dict[str, int]:
    """The run's reasoning and cache-write tokens, those it recorded some of."""
    shares = {"tokens_reasoning": record.tokens_reasoning}
    shares["tokens_cache_write"] = record.tokens_cache_write
    return {name: count for name, count in shares.items() if count}
