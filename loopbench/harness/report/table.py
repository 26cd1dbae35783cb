"""Per-arm tables from run records: accuracy with an interval, turns, tokens, cost, latency.

Accuracy is correct answers over runs that reached the model's reasoning: runs
that ended in ``api_error`` or ``pattern_error`` say nothing about the pattern, so
they are left out of accuracy, but their tokens stay in cost. Cost per correct
answer is the total cost of all runs, failures included, divided by the number
correct. A run whose judge failed (``grade_status``) has no verdict: it is left out of
accuracy and kept in cost. The judge's own cost is a column of its own, in cost per
correct answer only when asked (``Measures.with_judge_cost``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from pandas.core.groupby import DataFrameGroupBy

from loopbench.harness.errors import BadInput
from loopbench.harness.report.checks import (
    Metrics,
    answer_changes,
    check_measures,
    code_measures,
)
from loopbench.harness.report.judge_cost import (
    judge_measures,
    judge_share,
    judge_unreported,
    not_graded,
)
from loopbench.harness.report.lost_runs import lost_runs_scored
from loopbench.harness.report.model_axis import model_keys
from loopbench.harness.report.pass_k import PassK, task_counts
from loopbench.harness.report.table_columns import (
    cheaper,
    group_numbers,
    sorted_codes,
    task_keys,
)
from loopbench.harness.results.columns_sql import ANSWER_KEY
from loopbench.harness.results.grade_kinds import GRADE_KIND, KINDS, kinds_of
from loopbench.harness.results.statuses import INFRASTRUCTURE_STATUSES, STATUSES
from loopbench.harness.stats.intervals import PairedTasks, accuracy_interval, wilson_interval

GROUPINGS = ("slice", "task", "model")
#: What an accuracy interval is about: tasks like these (the default), or the runs made.
INTERVALS = ("tasks", "runs")


@dataclass(frozen=True)
class Measures:
    """What a summary computes beyond its fixed columns."""

    interval: str = "tasks"
    """The accuracy interval: about tasks like these ("tasks") or the runs made ("runs")."""
    pass_k: tuple[PassK, ...] = ()
    """pass@k and pass^k columns to add (coding runs always get pass@1)."""
    with_judge_cost: bool = False
    """Cost per correct answer counts the judge's cost too (``--with-judge-cost``)."""


def repeat_measures(frame: pd.DataFrame) -> tuple[PassK, ...]:
    """What repeats say about k tries, at k = the most repeats of a task: pass@1, pass@k and
    pass^k; none with one run a task."""
    most = int(frame.groupby(["arm", "task_id"], observed=True).size().max()) if len(frame) else 0
    return (PassK("@", 1), PassK("@", most), PassK("^", most)) if most > 1 else ()


def summarize(
    frame: pd.DataFrame,
    by: str | None = None,
    retried: pd.DataFrame | None = None,
    measures: Measures = Measures(),
) -> pd.DataFrame:
    """One row per arm (and ``by`` value). ``retried`` holds the records that later runs
    superseded (``--retry-errors``): not runs of their own, but their cost was spent."""
    if measures.interval not in INTERVALS:
        raise BadInput(f"unknown interval {measures.interval!r}; choose tasks or runs")
    arm_keys = [*model_keys(frame), "arm"]
    keys = list(dict.fromkeys([*arm_keys, *([_column(by)] if by else [])]))
    spent = retried if retried is not None and not retried.empty else None
    rows = []
    grouped = frame.groupby(keys, sort=True, dropna=False, observed=True)
    numbers = group_numbers(frame, keys, grouped)
    # Each group's rows taken alone: iterating the groupby copies the whole frame sorted.
    # Few groups: as small integers, numpy sorts them stably by radix (linear time).
    order = np.argsort(numbers.astype(np.min_scalar_type(grouped.ngroups)), kind="stable")
    ends = np.searchsorted(numbers[order], np.arange(grouped.ngroups + 1))
    # Grouped by the arm alone (no --by), the arms' grouping is the one just made.
    arms = (
        grouped
        if keys == arm_keys
        else frame.groupby(arm_keys, sort=False, dropna=False, observed=True)
    )
    missing = unreported(frame, [{}])
    # Only the columns a summary reads are copied per arm (a million runs' copies add up).
    unread = [c for c in (*UNSUMMARIZED, *missing) if c in frame and c not in keys]
    summarized = cheaper(frame.drop(columns=unread))
    graded_by_arm = _GradedByArm(summarized, arms, numbers if arms is grouped else None)
    for number, group in enumerate(grouped.size().index):
        runs = summarized.take(order[ends[number] : ends[number + 1]])
        group = group if isinstance(group, tuple) else (group,)
        arm = dict(zip(keys, group, strict=True))
        others = graded_by_arm.other_scores([arm[key] for key in arm_keys], runs["task_id"])
        earlier = None
        if spent is not None:
            same = pd.Series(True, index=spent.index)
            for key, value in zip(keys, group, strict=True):
                same &= spent[key] == value
            earlier = spent[same]
        summary = _summary(runs, earlier, measures) | lost_runs_scored(runs, others).columns()
        rows.append(dict(zip(keys, group, strict=True)) | summary)
    # The token kinds missing were not summarized: no column to leave out. The judge's
    # columns left out of ``summarized`` held nulls only: no run judged there either.
    return pd.DataFrame(rows).drop(columns=judge_unreported(summarized, rows))


class _GradedByArm:
    """The graded runs (not failed on infrastructure) and those right, counted per arm and
    task once, so each arm's ``lost_runs`` reads the other arms' by subtraction instead of
    copying their runs."""

    def __init__(
        self,
        frame: pd.DataFrame,
        arms: DataFrameGroupBy[Any, Any],
        arm_codes: np.ndarray | None = None,
    ) -> None:
        """``arms``: ``frame`` grouped by arm; ``arm_codes``: its ``ngroup``, when known."""
        if arm_codes is None:
            arm_codes = arms.ngroup().to_numpy()
        self.arm_number = {
            (key if isinstance(key, tuple) else (key,)): number
            for number, key in enumerate(arms.size().index)
        }
        task_codes, self.tasks = sorted_codes(frame["task_id"])
        cells = arm_codes * len(self.tasks) + task_codes
        graded = ~frame["status"].isin(INFRASTRUCTURE_STATUSES).to_numpy()
        right = graded & frame["correct"].eq(True).to_numpy()
        shape = (arms.ngroups, len(self.tasks))
        size = shape[0] * shape[1]
        self.graded = np.bincount(cells[graded], minlength=size).reshape(shape)
        self.right = np.bincount(cells[right], minlength=size).reshape(shape)

    def other_scores(self, arm: list[object], tasks: pd.Series) -> pd.Series | None:
        """The other arms' ``task_scores`` on ``tasks``; None when they graded none."""
        number = self.arm_number[tuple(arm)]
        wanted = np.zeros(len(self.tasks), dtype=bool)
        wanted[self.tasks.get_indexer(pd.Index(tasks.unique()))] = True
        graded = self.graded.sum(axis=0) - self.graded[number]
        right = self.right.sum(axis=0) - self.right[number]
        held = wanted & (graded > 0)
        if not held.any():
            return None
        return pd.Series(right[held] / graded[held], index=self.tasks[held])


#: Token kinds a table shows only when some run has them: older records hold none (null),
#: and most endpoints report none (0).
TOKEN_KINDS = ("tokens_reasoning", "tokens_cache_write")
#: Columns no summary reads, left out of the runs each arm's summary is given.
UNSUMMARIZED = (
    "options",
    "sampling",
    "schema_version",
    "pattern",
    "task_set",
    "retries",
    "repeated_actions",
    "tools_offered",
    "batched_calls",
    "replaced_characters",
    "task",
    "repeat",
    "answer_kind",
    "score",
    "slice",
    "model",
    # What the report reads beside the summary (the run list, facts and prompts).
    "run_id",
    "loopbench_version",
    "prompts_hash",
    "answer",
)
#: Columns the measures of an arm's graded runs read.
GRADED_READ = frozenset(
    {
        *("task_id", "correct", "first_correct", "metrics", "status"),
        *(ANSWER_KEY, GRADE_KIND, "grade_reason"),
    }
)


def unreported(frame: pd.DataFrame, rows: list[dict[str, object]]) -> list[str]:
    """The ``TOKEN_KINDS`` no run of ``frame`` has (null or 0 in every one), which the
    summary leaves out, so a table of runs without them reads as it did before them."""
    missing: list[str] = []
    for kind in TOKEN_KINDS if rows else ():
        has = kind in frame and _some_positive(frame[kind])
        # guard: token-kind-shown-only-when-some-run-has
        if not has:
            missing.append(kind)
    return missing


def _some_positive(values: pd.Series) -> bool:
    """Whether some value is above 0; a column of nulls alone (older records') is looked at
    as such, not converted to numbers."""
    if values.dtype == object and not values.notna().any():
        return False
    return bool(pd.to_numeric(values).fillna(0).gt(0).any())


def _column(by: str) -> str:
    if by not in GROUPINGS:
        raise BadInput(f"cannot group by {by!r}; choose one of {', '.join(GROUPINGS)}")
    return by


def _summary(
    runs: pd.DataFrame, retried: pd.DataFrame | None, measures: Measures
) -> dict[str, object]:
    # The graded runs' copy holds what their measures read (a million runs' copies add up).
    verdicts = runs[[name for name in runs.columns if name in GRADED_READ]]
    # A run whose judge failed has no verdict yet: out of accuracy, kept in cost.
    # guard: judge-failed-runs-left-out-of-accuracy
    graded = verdicts[~runs["status"].isin(INFRASTRUCTURE_STATUSES) & ~not_graded(runs)]
    right = graded["correct"].eq(True)  # None (not graded) is not correct
    correct = int(right.sum())
    if measures.interval == "runs":
        low, high = wilson_interval(correct, len(graded))
    else:
        low, high = accuracy_interval(task_keys(graded["task_id"]), right.to_numpy())
    total_cost = float(runs["cost_usd"].sum(min_count=len(runs))) if len(runs) else math.nan
    if retried is not None and len(retried):
        # guard: superseded-runs-stay-cost
        total_cost += float(retried["cost_usd"].sum(min_count=len(retried)))
    judge = judge_measures(runs, measures.with_judge_cost)
    paid = total_cost + judge_share(judge, measures.with_judge_cost)
    statuses = runs["status"].value_counts()
    metrics = Metrics(graded["metrics"])
    code = code_measures(graded, metrics)
    return {
        "n": len(runs),
        "correct": correct,
        "accuracy": correct / len(graded) if len(graded) else math.nan,
        "accuracy_low": low,
        "accuracy_high": high,
        "turns": runs["turns"].mean(),
        "tool_calls": runs["tool_calls"].mean(),
        "tokens_in": runs["tokens_in"].mean(),
        "tokens_out": runs["tokens_out"].mean(),
        "tokens_cached": runs["tokens_cached"].mean(),
        # Means of the runs that recorded them (null before they were recorded).
        **{kind: pd.to_numeric(runs[kind]).mean() for kind in TOKEN_KINDS if kind in runs},
        "cost_usd": total_cost,
        "cost_per_correct": paid / correct if correct else math.nan,
        **judge,
        "latency_p50": runs["latency_s"].quantile(0.5),
        "latency_p95": runs["latency_s"].quantile(0.95),
        # NaN when no run was streamed (the column is shown only when some was).
        "ttft_p50": _ttft(runs),
        "parse_failures": int(runs["parse_failures"].sum()),
        "retried_runs": 0 if retried is None else len(retried),
        "usage_missing": int(runs["usage_missing"].sum()),
        "usage_estimated": int(runs["usage_estimated"].sum()),
        "cache_hits": int(runs["cache_hits"].sum()),
        # NaN when replayed calls were not priced at run time (the model had no price then).
        "cost_from_cache_usd": float(runs["cost_from_cache_usd"].sum(min_count=1)),
        **{f"status_{s}": int(statuses.get(s, 0)) for s in STATUSES},
        **answer_changes(graded),
        **check_measures(graded, metrics),
        **code,
        **_pass_measures(graded, measures.pass_k, coding=not math.isnan(code["first_pass"])),
        "interval": measures.interval,
        "repeats_agree": _repeats_agree(graded),
        **why_wrong(graded),
    }


def _ttft(runs: pd.DataFrame) -> float:
    """The median time to first token of the runs that measured one (streamed runs)."""
    if "ttft_s" not in runs:  # a frame built without the column (an older reader's)
        return math.nan
    ttft = runs["ttft_s"]
    if ttft.dtype == object and not ttft.notna().any():  # none streamed: nothing to convert
        return math.nan
    return float(pd.to_numeric(ttft, errors="coerce").quantile(0.5))


def why_wrong(graded: pd.DataFrame) -> dict[str, int]:
    """Runs graded wrong because the reading could not tell, by why
    (``loopbench.harness.results.grade_kinds``): ``wrong_hedged``, ``wrong_retracted``,
    ``wrong_no_answer``."""
    counts = kinds_of(graded).value_counts()
    return {f"wrong_{kind}": int(counts.get(kind, 0)) for kind in KINDS}


def _repeats_agree(graded: pd.DataFrame) -> float:
    """1 when every task run more than once gave the same answer every time (its repeats
    are one sample, counted several times), 0 when some did not, NaN when none ran twice."""
    if ANSWER_KEY not in graded:
        return math.nan
    by_task = graded.groupby("task_id", sort=False, observed=True)[ANSWER_KEY]
    repeated = by_task.size() > 1
    if not repeated.any():
        return math.nan
    # guard: repeats-add-no-information-only
    return float((by_task.nunique()[repeated] == 1).all())


def _pass_measures(
    graded: pd.DataFrame, wanted: tuple[PassK, ...], coding: bool
) -> dict[str, float]:
    """The pass@k / pass^k asked for; coding runs report pass@1 over their samples."""
    chosen = list(dict.fromkeys([*([PassK("@", 1)] if coding else []), *wanted]))
    values: dict[str, float] = {}
    if not chosen:
        return values
    counts = task_counts(graded["task_id"], graded["correct"])  # once for every measure
    for measure in chosen:
        values |= measure.of_counts(*counts)
    return values


def with_reference(frame: pd.DataFrame, summary: pd.DataFrame, reference: str) -> pd.DataFrame:
    """Add, per arm (``reference`` an arm identity, as ``loopbench.harness.arms.arm_identity``
    writes it), the paired difference in accuracy against ``reference`` on the same
    (task, repeat) runs, those that failed on infrastructure on either side left out: its
    95% interval and the p of the paired test, both clustered by task (as ``compare``'s)."""
    arms = set(frame["arm"])
    if reference not in arms:
        raise BadInput(f"no arm {reference!r} in these results; arms: {', '.join(sorted(arms))}")
    # guard: table-vs-leaves-failed-runs
    usable = frame[~frame["status"].isin(INFRASTRUCTURE_STATUSES) & ~not_graded(frame)]
    base = usable[usable["arm"] == reference]
    columns: dict[str, list[float]] = {
        "vs_difference": [],
        "vs_ci_low": [],
        "vs_ci_high": [],
        "vs_p_value": [],
    }
    # With several models, each arm is paired with the reference on its own model.
    on = ["task_id", "repeat", *model_keys(frame)]
    for _, row in summary.iterrows():
        arm = row["arm"]
        runs = usable[usable["arm"] == arm]
        if "model" in on:
            runs = runs[runs["model"] == row["model"]]
        pairs = runs.merge(base, on=on, suffixes=("", "_r"))
        if arm == reference or pairs.empty:
            for values in columns.values():
                values.append(math.nan)
            continue
        paired = PairedTasks.of(
            pairs["task_id"].to_numpy(),
            pairs["correct"].eq(True).to_numpy(),
            pairs["correct_r"].eq(True).to_numpy(),
        )
        low, high = paired.interval()
        columns["vs_difference"].append(paired.difference)
        columns["vs_ci_low"].append(low)
        columns["vs_ci_high"].append(high)
        columns["vs_p_value"].append(paired.p_value())
    return summary.assign(**columns, vs_reference=reference)
