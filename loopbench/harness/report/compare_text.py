"""A comparison (``loopbench.harness.report.compare``) as ``loopbench compare`` prints it: the JSON
rows, and the markdown table with its notes."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from loopbench.harness.report.compare import REPAIR_MEASURES, ArmComparison, Comparison
from loopbench.harness.report.deciding_digits import dollars, money
from loopbench.harness.report.pairing import LeftOut
from loopbench.harness.terminal import one_line, printable

#: The note over the arms whose prompts differ between the two sides.
PROMPTS_DIFFER = (
    "Prompts that differ between the two sides, by the hash of the slots overridden "
    "(compared all the same)"
)


def as_json(comparison: Comparison) -> dict[str, Any]:
    return {
        "arms": [r.row() for r in comparison.arms],
        "only_before": list(comparison.only_before),
        "only_after": list(comparison.only_after),
        "matched": comparison.matched,
        "sampling": {
            "baseline": comparison.sampling[0],
            "candidate": comparison.sampling[1],
            "differs": comparison.sampling_differs,
        },
    }


def as_markdown(comparison: Comparison) -> str:
    """The table and its notes, for a terminal and a job summary: a cell's names one line,
    every control character shown, not acted on (``loopbench.harness.terminal``)."""
    lines = [*_table(comparison.arms), *_notes(comparison)]
    return printable("\n".join(lines)) + "\n" + METHOD_NOTE


#: What every comparison's figures mean, said under its table.
METHOD_NOTE = (
    "\nPairs are matched by (arm, task, repeat); runs that failed on infrastructure are left "
    "out. Tasks are the unit: accuracy, the difference and cost per correct answer weigh "
    "each task the same (the mean of the per-task differences; a task's mean cost over "
    "its share correct), the difference's interval is Newcombe's on the effective "
    "number of pairs and p is the paired test's (sign flips of the same per-task "
    "differences, two-sided, mid-p), all about tasks like these, since repeats of a task "
    "are correlated samples of it."
)


def _table(results: list[ArmComparison]) -> list[str]:
    """One row per arm, its names on one line; the corrected difference beside the judge's
    own when a side's judge was calibrated."""
    corrected = any(r.judge is not None and r.judge.corrected is not None for r in results)
    lines = [
        "| arm | pairs | accuracy before → after | difference [95% CI] | "
        + ("corrected [CI] | " if corrected else "")
        + "p (paired) | "
        "$/correct before → after | turns | tokens | right→wrong | wrong→right | verdict |",
        "|---|---|---|---|---|---|---|---|---|---|---|" + ("---|" if corrected else ""),
    ]
    for r in results:
        p = r.paired
        costs = p.cost_per_correct_before, p.cost_per_correct_after
        decimals = money(list(costs))
        extra = f"{corrected_cell(r)} | " if corrected else ""
        # guard: terminal-compare-cells-one-line
        lines.append(
            f"| {one_line(r.arm)} | {p.n_pairs} | "
            f"{p.accuracy_before:.0%} → {p.accuracy_after:.0%} | "
            f"{difference_cell(p.difference, p.ci_low, p.ci_high)} | {extra}{p.p_value:.3g} | "
            f"{dollars(costs[0], decimals)} → {dollars(costs[1], decimals)} | "
            f"{r.turns_before:.1f} → {r.turns_after:.1f} | "
            f"{r.tokens_before:,.0f} → {r.tokens_after:,.0f} | "
            f"{one_line(flipped(p.right_to_wrong))} | {one_line(flipped(p.wrong_to_right))} | "
            f"{'**REGRESSED**: ' + one_line(r.why) if r.regressed else 'ok'} |"
        )
    return lines


def corrected_cell(r: ArmComparison) -> str:
    """The corrected difference and its interval (at 1 - alpha), or a dash."""
    c = r.judge.corrected if r.judge else None
    if c is None or math.isnan(c.estimate):
        return "—"
    return difference_cell(c.estimate, c.low, c.high)


def _notes(comparison: Comparison) -> list[str]:
    """What the table does not say: sampling, matched and unmatched arms, runs left out,
    coding runs, options and prompts that differ, and which accuracy the gate judged."""
    results = comparison.arms
    lines: list[str] = []
    judged = [r for r in results if r.judge is not None]
    if judged:
        level = judged[0].judge.level if judged[0].judge else 0.95
        lines.append(
            "\nGraded by a judge. corrected [CI]: the difference corrected for each side's "
            f"judge (Rogan-Gladen), its {level:.0%} interval carrying the tasks' sampling and "
            "the labels' uncertainty. The accuracy gate judged:"
        )
        lines += [f"- {r.arm}: {r.judge.why}" for r in judged if r.judge]
    if comparison.sampling_differs:
        lines.append(
            f"\nSampling differs: the baseline was sent {comparison.sampling[0]}, the "
            f"candidate {comparison.sampling[1]}; a difference may come from that."
        )
    for candidate, baseline in comparison.matched.items():
        lines.append(f"\nMatched {candidate} (candidate) to {baseline}: the same configuration.")
    for side, arms in (("baseline", comparison.only_before), ("candidate", comparison.only_after)):
        if arms:
            lines.append(f"\nOnly in the {side}, not compared: {', '.join(arms)}.")
    for r in results:
        if r.left_out:
            # guard: compare-says-how-many-runs
            lines.append(f"\n{runs_left_out_line(r.arm, r.left_out, r.paired.n_pairs)}")
            # guard: compare-says-what-left-out
            lines.append(left_out_line(r.arm, r.left_out))
    coding = [r for r in results if r.repair]
    if coding:
        lines.append("\nCoding runs, on the held-out suite (before → after):")
        lines += [f"- {r.arm}: {_repair_line(r.repair)}" for r in coding]
    changed = [r for r in results if r.option_changes]
    if changed:
        lines.append(
            "\nResolved options that differ between the two sides (compared all the same):"
        )
        lines += [f"- {r.arm}: {'; '.join(r.option_changes)}" for r in changed]
    # guard: compare-markdown-lists-arms-whose
    prompted = [r for r in results if r.prompts_change]
    if prompted:
        lines.append(f"\n{PROMPTS_DIFFER}:")
        lines += [f"- {r.arm}: {r.prompts_change}" for r in prompted]
    return lines


#: Flipped pairs a table cell lists one by one (a depot grid's arm has at most 120 pairs).
FLIPS_LISTED = 200
#: Past that, the cell counts the pairs per task and names this many of the commonest.
FLIPS_NAMED = 20


def flipped(tasks: list[str]) -> str:
    """The tasks whose pairs flipped, one entry per pair, up to ``FLIPS_LISTED`` pairs.

    A large folder flips thousands of pairs: the cell then counts them per task, "t3 (12)",
    and names the commonest tasks; ``--format json`` lists every pair."""
    if not tasks:
        return "—"
    # guard: many-flipped-pairs-counted-per
    if len(tasks) <= FLIPS_LISTED:
        return ", ".join(tasks)
    counts = Counter(tasks).most_common()
    shown = ", ".join(f"{task} ({n})" for task, n in counts[:FLIPS_NAMED])
    rest = len(counts) - FLIPS_NAMED
    more = f", and {rest} more tasks" if rest > 0 else ""
    return f"{len(tasks)} pairs: {shown}{more}"


def _repair_line(repair: dict[str, tuple[float, float]]) -> str:
    def shown(key: str, value: float) -> str:
        if math.isnan(value):
            return "—"
        return f"{value:.0%}" if key == "first_pass" else f"{value:.0f}"

    return "; ".join(
        f"{label} {shown(key, repair[key][0])} → {shown(key, repair[key][1])}"
        for key, label in REPAIR_MEASURES.items()
    )


def difference_cell(difference: float, low: float, high: float) -> str:
    """ "+12% [+3%, +21%]": whole points, or the decimals that keep an interval that has a
    width from being shown without one."""
    decimals = 0
    while decimals < 6 and low < high and _points(low, decimals) == _points(high, decimals):
        decimals += 1
    return f"{difference:+.{decimals}%} [{low:+.{decimals}%}, {high:+.{decimals}%}]"


def _points(share: float, decimals: int) -> float:
    return float(f"{100 * share:.{decimals}f}")  # as shown: -0 and +0 are one figure


#: Tasks a left-out note names before it counts the rest.
TASKS_NAMED = 10


def runs_left_out_line(arm: str, left: LeftOut, pairs: int) -> str:
    """How many of each side's runs of ``arm`` are in no pair, in one plain line: both
    accuracy and cost per correct answer are on the pairs left."""
    return (
        f"{arm}: left out {left.runs_before:,} of the baseline's {pairs + left.runs_before:,} "
        f"runs and {left.runs_after:,} of the candidate's {pairs + left.runs_after:,}; "
        f"accuracy and cost per correct answer are both on the {_count(pairs, 'pair')} left."
    )


def left_out_line(arm: str, left: LeftOut) -> str:
    """What of ``arm``'s runs is in no pair, side by side, in one sentence."""
    parts = []
    for side, other, alone in (
        ("baseline", "candidate", left.before),
        ("candidate", "baseline", left.after),
    ):
        where = []
        if alone.tasks:
            where.append(
                f"{_count(alone.task_runs, 'run')} on {_count(len(alone.tasks), 'task')} the "
                f"{other} did not run ({_named(alone.tasks)})"
            )
        if alone.repeats:
            where.append(
                f"{_count(alone.runs - alone.task_runs, 'run')} at "
                f"{_plural(alone.repeats, 'repeat')} {', '.join(map(str, alone.repeats))} "
                f"({_count(alone.repeat_tasks, 'task')}) the {other} has no run for"
            )
        if where:
            parts.append(f"in the {side} only, {' and '.join(where)}")
    if left.failed_pairs:
        lost = (
            f", which leaves {_count(len(left.tasks_all_failed), 'task')} with no pair "
            f"({_named(left.tasks_all_failed)})"
            if left.tasks_all_failed
            else ""
        )
        parts.append(
            f"{_count(left.failed_pairs, 'pair')} where a side failed on infrastructure{lost}"
        )
    if left.ungraded_pairs:
        parts.append(
            f"{_count(left.ungraded_pairs, 'pair')} where the judge failed to grade a side's "
            "run (`loopbench grade --regrade RESULTS` grades it again)"
        )
    return f"Left out of {arm}'s pairs, and so not compared: {'; '.join(parts)}."


def _plural(items: tuple[int, ...], what: str) -> str:
    return what if len(items) == 1 else f"{what}s"


def _count(n: int, what: str) -> str:
    return f"{n:,} {what}{'' if n == 1 else 's'}"


def _named(tasks: tuple[str, ...]) -> str:
    rest = len(tasks) - TASKS_NAMED
    return ", ".join(tasks[:TASKS_NAMED]) + (f" and {rest:,} more" if rest > 0 else "")
