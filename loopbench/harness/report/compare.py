"""Compare two result sets arm by arm on the same (task, repeat) pairs, and decide regressions.

An arm regresses when its accuracy falls by more than ``max_drop`` and the fall is
significant (the paired test's two-sided p below ``alpha``: sign flips of per-task
differences, ``loopbench.harness.stats.sign_flip``), or when its cost per correct answer rises by
more than ``max_cost_rise`` and the bootstrap interval of that rise excludes zero. Tasks
are the unit: the verdict is about tasks like these, so a change that helps some tasks
and hurts others as much is not a regression, however many repeats were run. The fall,
its interval and the test come from the same per-task differences, each task weighing
the same (a task with more pairs left after failures does not outweigh the others), so
a change that improved the tasks is never called a regression. Cost per correct answer is
on the same pairs and weighs each task the same way (``loopbench.harness.stats.intervals``): a task
that kept ten pairs when failures left the others one does not make cost per correct rise
while accuracy rose. Runs that ended in an
infrastructure failure on either side are left out of the pairs: they say nothing about
the pattern. What is in no pair (tasks or repeats one side did not run, failed pairs) is
counted in ``ArmComparison.left_out`` and said, as are pairs in which a side's judge
failed to grade its run. Graded by a judge, both sides calibrated, the accuracy criterion
is judged on the difference corrected for each side's judge
(``loopbench.harness.report.judge_compare``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from loopbench.harness.errors import BadInput
from loopbench.harness.report.aside import FORK_FROM, in_halves
from loopbench.harness.report.checks import answer_changes, code_measures
from loopbench.harness.report.compare_options import PROMPTS, option_changes, prompts_change
from loopbench.harness.report.judge_compare import (
    JudgeChoice,
    JudgedDifference,
    judge_corrected_accuracy,
    judged_difference,
    paid,
)
from loopbench.harness.report.model_axis import MODEL_AND_ARM, arms_by_model, model_keys
from loopbench.harness.report.pairing import KEYS, LeftOut, paired_rows
from loopbench.harness.report.ungraded import ungraded
from loopbench.harness.report.verdict import Criterion, judge_accuracy, judge_cost
from loopbench.harness.sampling import describe_runs
from loopbench.harness.stats.intervals import PairedDifference, paired_difference


class CompareError(BadInput):
    """The two result sets cannot be compared (exit code 2)."""


def check_comparable(folder: object, frame: pd.DataFrame) -> None:
    """Refuse a side (``folder``'s runs) that has no accuracy to compare: no finished run,
    or not one graded (every run ended in a failure of the endpoint or the harness)."""
    if frame.empty:
        raise CompareError(f"{folder}: holds no finished runs")
    # guard: compare-side-nothing-graded-refused
    if (nothing := ungraded(frame)) is not None and nothing.runs == len(frame):
        raise CompareError(
            f"{folder}: no run in it was graded (all {nothing.runs} ended in a failure of "
            f"the endpoint or the harness, most in {nothing.status}): there is no accuracy "
            "to compare; see the error column of its runs.jsonl, and run it again with "
            "--retry-errors"
        )


@dataclass(frozen=True)
class ArmComparison:
    arm: str
    paired: PairedDifference
    turns_before: float
    turns_after: float
    tokens_before: float
    tokens_after: float
    regressed: bool
    why: str
    #: Resolved options that differ between the two sides: a default changed, for instance.
    option_changes: tuple[str, ...] = ()
    #: The prompts overridden (by ``prompts_hash``), before → after, when they differ.
    prompts_change: str = ""
    #: Coding runs: each repair measure on the paired runs, (before, after).
    repair: dict[str, tuple[float, float]] = field(default_factory=dict)
    #: Each criterion's verdict: accuracy, then cost per correct answer.
    criteria: tuple[Criterion, ...] = ()
    #: The runs in no pair: compared on the rest, and said so.
    left_out: LeftOut = field(default_factory=LeftOut)
    #: Runs graded by a judge on a side: the difference corrected for the judge's error
    #: (both sides calibrated), and which difference the accuracy gate used, in words.
    judge: JudgedDifference | None = None

    def row(self) -> dict[str, Any]:
        p = self.paired
        return {
            "arm": self.arm,
            "n_pairs": p.n_pairs,
            "accuracy_before": p.accuracy_before,
            "accuracy_after": p.accuracy_after,
            "difference": p.difference,
            "ci_low": p.ci_low,
            "ci_high": p.ci_high,
            "p_value": p.p_value,
            "p_value_by_task": p.p_value_by_task,
            "tasks": p.tasks,
            "cost_per_correct_before": _none_if_nan(p.cost_per_correct_before),
            "cost_per_correct_after": _none_if_nan(p.cost_per_correct_after),
            "turns_before": self.turns_before,
            "turns_after": self.turns_after,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "right_to_wrong": p.right_to_wrong,
            "wrong_to_right": p.wrong_to_right,
            "regressed": self.regressed,
            "why": self.why,
            "option_changes": list(self.option_changes),
            "prompts_change": self.prompts_change or None,
            "left_out": self.left_out.row(),
            **(self.judge.row() if self.judge else {}),
            **{
                f"{measure}_{side}": _none_if_nan(value)
                for measure, values in self.repair.items()
                for side, value in zip(("before", "after"), values, strict=True)
            },
        }


def _none_if_nan(value: float) -> float | None:
    return None if math.isnan(value) else value


@dataclass(frozen=True)
class Comparison:
    arms: list[ArmComparison]
    #: Arms found on one side only: not compared, and said so.
    only_before: tuple[str, ...] = ()
    only_after: tuple[str, ...] = ()
    #: Candidate arms matched to a baseline arm of another name that runs the same
    #: configuration (one side wrote a default out, e.g. from a grid): candidate -> baseline.
    matched: dict[str, str] = field(default_factory=dict)
    #: The sampling settings each side's runs were sent, in words (baseline, candidate).
    sampling: tuple[str, str] = ("", "")

    @property
    def sampling_differs(self) -> bool:
        return self.sampling[0] != self.sampling[1]


def match_same_configurations(before: pd.DataFrame, after: pd.DataFrame) -> dict[str, str]:
    """Arms on one side only, matched by what they ran, as their records say: the same
    pattern (and model, when arms are named after it) and the same resolved options
    (``react_text:guard=off,tool=plain`` ran ``react_text``). An option only one side's
    records hold (one added since the other ran) must be at its default there: not named
    in that side's arm. An arm whose records hold no options matches none."""
    arms_before, arms_after = set(before["arm"].unique()), set(after["arm"].unique())
    baseline = _configurations(before, arms_before - arms_after)
    matched: dict[str, str] = {}
    for arm, ran in sorted(_configurations(after, arms_after - arms_before).items()):
        twin = next(
            (b for b, other in sorted(baseline.items()) if ran.same_as(other)),
            None,
        )
        # guard: compare-matches-configuration
        if twin is not None and twin not in matched.values():
            matched[arm] = twin
    return matched


@dataclass(frozen=True)
class _Ran:
    """What an arm ran: its model and pattern, every option's value, and the options its
    name sets (the others were at their defaults)."""

    key: tuple[str, str]
    options: Mapping[str, Any]
    named: frozenset[str]

    def same_as(self, other: _Ran) -> bool:
        if self.key != other.key or not self.options or not other.options:
            return False
        for name in self.options.keys() | other.options.keys():
            if name in self.options and name in other.options:
                if self.options[name] != other.options[name]:
                    return False
            elif name in (self.named if name in self.options else other.named):
                return False
        return True


def _configurations(frame: pd.DataFrame, arms: set[str]) -> dict[str, _Ran]:
    """What each of ``arms`` ran, from its first record."""
    if not arms or "options" not in frame or "pattern" not in frame:
        return {}
    first = frame[frame["arm"].isin(arms)].drop_duplicates("arm")
    ran: dict[str, _Ran] = {}
    for arm, pattern, options in zip(first["arm"], first["pattern"], first["options"], strict=True):
        model, _, identity = arm.rpartition(MODEL_AND_ARM)
        written = identity.partition(":")[2]
        named = frozenset(p.partition("=")[0].strip() for p in written.split(",") if p.strip())
        ran[arm] = _Ran((model, pattern), options or {}, named)
    return ran


@dataclass(frozen=True)
class Thresholds:
    """When an arm regresses: its accuracy falls by more than ``max_drop`` at a p-value
    below ``alpha``, or its cost per correct answer rises by more than ``max_cost_rise``."""

    max_drop: float
    alpha: float
    max_cost_rise: float


def compare(
    before: pd.DataFrame,
    after: pd.DataFrame,
    arms: list[str] | None = None,
    max_drop: float = 0.05,
    alpha: float = 0.05,
    max_cost_rise: float = 0.10,
) -> Comparison:
    return compare_judged(
        before, after, arms, Thresholds(max_drop, alpha, max_cost_rise), JudgeChoice()
    )


def compare_judged(
    before: pd.DataFrame,
    after: pd.DataFrame,
    arms: list[str] | None,
    thresholds: Thresholds,
    judged: JudgeChoice,
) -> Comparison:
    """``compare``, with what the judges of either side add: their cost in cost per
    correct answer when asked, and each side's calibration (``judged.judging``)."""
    _same_task_set(before, after)
    if model_keys(before) or model_keys(after):  # a model axis: compare each model's arms
        before, after = arms_by_model(before), arms_by_model(after)
    matched = match_same_configurations(before, after)
    if matched:
        after = after.assign(arm=after["arm"].replace(matched))
    # Each arm's rows found in one pass over each side, and taken one arm at a time, the
    # columns its pairs read alone: not a comparison of a million arm names per arm and side.
    rows = before.groupby("arm", sort=False).indices, after.groupby("arm", sort=False).indices
    arms_before, arms_after = set(map(str, rows[0])), set(map(str, rows[1]))
    sides = (before, after)

    def compared(arm: str) -> ArmComparison:
        at = (np.asarray(rows[0][arm]), np.asarray(rows[1][arm]))
        return _compare_arm(sides, at, arm, thresholds, judged)

    # Half the arms compared in a forked child, beside the other half, at scale (two cores).
    fork = len(before) + len(after) >= FORK_FROM
    return Comparison(
        in_halves(compared, _chosen(arms, sorted(arms_before & arms_after)), fork=fork),
        tuple(sorted(arms_before - arms_after)),
        tuple(sorted(arms_after - arms_before)),
        matched,
        (_sampling(before), _sampling(after)),
    )


#: The columns of a side's runs an arm's pairs read.
PAIRED = (
    *KEYS,
    "status",
    "grade_status",
    "correct",
    "first_correct",
    "metrics",
    "cost_usd",
    "judge_cost_usd",
    "judge_tokens_in",
    "usage_missing",
    "turns",
    "tokens_in",
    "tokens_out",
)


def _same_task_set(before: pd.DataFrame, after: pd.DataFrame) -> None:
    sets_before, sets_after = set(before["task_set"].unique()), set(after["task_set"].unique())
    if sets_before != sets_after:
        raise CompareError(
            f"the results are on different task sets ({sorted(sets_before)} vs "
            f"{sorted(sets_after)}); compare runs of the same task set"
        )


def _chosen(arms: list[str] | None, shared: list[str]) -> list[str]:
    """The arms asked for (every arm both sides ran, by default), each on both sides."""
    chosen = arms or shared
    missing = [a for a in chosen if a not in shared]
    if missing or not chosen:
        raise CompareError(
            f"arm {missing[0] if missing else '(any)'} is not in both result sets; "
            f"arms in both: {', '.join(shared) or 'none'}"
        )
    return chosen


def _compare_arm(
    sides: tuple[pd.DataFrame, pd.DataFrame],
    rows: tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]],
    arm: str,
    thresholds: Thresholds,
    judged: JudgeChoice,
) -> ArmComparison:
    """The arm's comparison, of its runs at ``rows`` of each side."""
    before, after = (_paired_columns(side) for side in sides)
    pairs, left_out = paired_rows(before, after, *rows)
    if pairs.empty:
        raise CompareError(f"arm {arm}: no (task, repeat) pair ran in both result sets")
    paired = paired_difference(
        pairs["task_id"].to_numpy(),
        pairs["correct_b"].eq(True).to_numpy(),  # None (not graded) is not correct
        pairs["correct_a"].eq(True).to_numpy(),
        (paid(pairs, "_b", judged.with_judge_cost), paid(pairs, "_a", judged.with_judge_cost)),
    )
    unknown = int(pairs["usage_missing_b"].sum() + pairs["usage_missing_a"].sum())
    judge = judged_difference(pairs, arm, judged, thresholds.alpha)
    regressed, why, criteria = _verdict(paired, thresholds, unknown, judge)
    prompts = [
        side[[name for name in ("options", "prompts_hash") if name in side]].take(at)
        for side, at in zip(sides, rows, strict=True)
    ]
    changes = option_changes(prompts[0]["options"], prompts[1]["options"])
    return ArmComparison(
        arm,
        paired,
        float(pairs["turns_b"].mean()),
        float(pairs["turns_a"].mean()),
        float((pairs["tokens_in_b"] + pairs["tokens_out_b"]).mean()),
        float((pairs["tokens_in_a"] + pairs["tokens_out_a"]).mean()),
        regressed,
        why,
        changes,
        prompts_change(*prompts),
        repair_measures(pairs),
        criteria,
        left_out,
        judge,
    )


def _paired_columns(runs: pd.DataFrame) -> pd.DataFrame:
    """The columns of ``PAIRED`` ``runs`` holds (not a copy)."""
    return runs[[name for name in PAIRED if name in runs]]


def _sampling(runs: pd.DataFrame) -> str:
    return describe_runs(runs["sampling"]) if "sampling" in runs else "not recorded"


REPAIR_MEASURES = {
    "first_pass": "first pass",
    "wrong_to_right": "fixes",
    "right_to_wrong": "breakages",
    "false_accepts": "false accepts",
}


def repair_measures(pairs: pd.DataFrame) -> dict[str, tuple[float, float]]:
    """The fixes-and-breakages measures of coding runs on each side of the pairs; empty
    for runs that are not on code."""
    sides: list[pd.DataFrame] = []
    measures: list[dict[str, float]] = []
    for suffix in ("_b", "_a"):
        side = pairs[["first_correct" + suffix, "correct" + suffix, "metrics" + suffix]]
        sides.append(side.set_axis(["first_correct", "correct", "metrics"], axis=1))
        measures.append(code_measures(sides[-1]))
    if all(math.isnan(side["first_pass"]) for side in measures):
        return {}
    both = [m | answer_changes(side) for m, side in zip(measures, sides, strict=True)]
    return {key: (both[0][key], both[1][key]) for key in REPAIR_MEASURES}


def _verdict(
    p: PairedDifference,
    thresholds: Thresholds,
    usage_unknown: int,
    judge: JudgedDifference | None = None,
) -> tuple[bool, str, tuple[Criterion, Criterion]]:
    """The arm's verdict in one line, and each criterion's on its own (a JUnit case each).
    With both sides' judges calibrated, accuracy is judged on the corrected difference."""
    # guard: compare-gate-uses-corrected-difference
    if judge is not None and judge.corrected is not None:
        accuracy_criterion = judge_corrected_accuracy(
            judge.corrected, p.tasks, thresholds.max_drop, thresholds.alpha
        )
    else:
        accuracy_criterion = judge_accuracy(p, thresholds.max_drop, thresholds.alpha)
    criteria = (
        accuracy_criterion,
        judge_cost(p, thresholds.max_cost_rise, usage_unknown),
    )
    accuracy, cost = criteria
    if accuracy.regressed:
        return True, accuracy.why, criteria
    if usage_unknown:
        return False, f"accuracy within thresholds; {cost.why}", criteria
    if cost.regressed:
        return True, cost.why, criteria
    return False, "within thresholds", criteria


__all__ = [
    "PROMPTS",
    "ArmComparison",
    "CompareError",
    "Comparison",
    "JudgeChoice",
    "LeftOut",
    "compare",
    "compare_judged",
]
