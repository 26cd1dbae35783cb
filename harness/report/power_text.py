"""The markdown ``loopbench power`` prints: the plan of a design with its table of repeats,
and what a finished run could have detected, each rendered from the report the command
also prints as JSON, with ``Setting``, an input and the source the text names beside it.
Apart from the command (``harness.cli.power``) so that module keeps to its options and the
gathering of settings, and the wording can change without touching it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from harness.report.power import INDEPENDENT, MAX_TASKS, SHARED


@dataclass(frozen=True)
class Setting:
    """One input of the design and where it came from: given, estimated or assumed."""

    value: float
    source: str

    def said(self, text: str) -> str:
        return text if self.source == "given" else f"{text} ({self.source})"


def markdown(report: dict[str, Any]) -> str:
    parts = []
    if "from" in report:
        parts.append(_finished_markdown(report["from"]))
    if "design" in report:
        parts.append(_planned_markdown(report))
    return "\n\n".join(parts)


ROUGH = "†"


def _rough(tasks: int | None, bound: int) -> str:
    return ROUGH if tasks is not None and tasks < bound else ""


def _rough_note(bound: int, icc: float) -> str:
    return (
        f"{ROUGH} Fewer than {bound} tasks at ICC {icc:.2f}: power there depends on how "
        "difficulty is spread over the tasks, which the ICC does not say: simulated runs can "
        "part from the formula by 0.1 or more. Treat as rough."
    )


def _points(share: float | None) -> str:
    if share is None or math.isnan(share):
        return "—"
    points = abs(100 * share)
    return f"{points:.1f} points" if points < 10 else f"{points:.0f} points"


def _correlation(value: float) -> str:
    return {SHARED: "shared by the arms", INDEPENDENT: "independent between the arms"}.get(
        value, f"correlated {value:.2f} between the arms"
    )


def _planned_markdown(report: dict[str, Any]) -> str:
    d, sources, bound = report["design"], report["sources"], report["reliable_from_tasks"]
    said = {name: Setting(d[name], source) for name, source in sources.items()}
    runs, given = d["repeats"], d["tasks"]
    lines = [
        f"Arm A right {d['baseline']:.0%} of the time, arm B {d['arm_b']:.0%} "
        f"({'+' if d['delta'] > 0 else '-'}{_points(d['delta'])}); "
        + said["icc"].said(f"ICC {d['icc']:.2f}")
        + "; task difficulty "
        + said["arm_correlation"].said(_correlation(d["arm_correlation"]))
        + f"; paired t test on per-task differences, two-sided alpha {d['alpha']:g}.",
        "",
    ]
    first = report["rows"][0]
    needed = first["tasks_needed"]
    if given is None:
        lines.append(
            f"**{_tasks(needed)}**{_rough(needed, bound)} at {runs} repeat(s) give "
            f"{d['power']:.0%} power" + (f" ({needed * runs:,} runs an arm)." if needed else ".")
        )
    else:
        lines.append(
            f"**Power {first['power']:.0%}**{_rough(given, bound)} with {given} tasks at "
            f"{runs} repeat(s) ({given * runs:,} runs an arm); {d['power']:.0%} power needs "
            f"{_tasks(needed)}{_rough(needed, bound)}."
        )
    lines += [
        "",
        "| repeats | sd of a task's difference | "
        + (f"power with {given} tasks | " if given else "")
        + f"tasks for {d['power']:.0%} power | runs an arm |",
        "|---|---|---|---|" + ("---|" if given else ""),
    ]
    for row in sorted(report["rows"], key=lambda r: r["repeats"] or math.inf):
        repeats, needed = row["repeats"], row["tasks_needed"]
        lines.append(
            f"| {_repeats(repeats, runs)} | {row['sd']:.3f} | "
            + (f"{row['power']:.0%}{_rough(given, bound)} | " if given else "")
            + (f"{needed:,}{_rough(needed, bound)} | " if needed else "— | ")
            + (f"{needed * repeats:,} |" if needed and repeats else "— |")
        )
    floor = report["rows"][-1]["sd"] ** 2
    lines += [
        "",
        f"Var(a task's difference) = {floor:.4f} between tasks, which no number of repeats "
        f"removes, + {first['sd'] ** 2 - floor:.4f} run to run at {runs} repeat(s), which "
        "shrinks as 1/repeats: repeats help while the second term is the larger. "
        + (
            "A difficulty the arms share cancels in the difference, so the first is small; "
            "it grows as the arms' task effects differ (--arm-correlation below 1). "
            if d["arm_correlation"] == SHARED
            else ""
        )
        + "Model: docs/power.md.",
    ]
    if ROUGH in "\n".join(lines[2:]):
        lines += ["", _rough_note(bound, d["icc"])]
    return "\n".join(lines)


def _repeats(repeats: int | None, design: int) -> str:
    if repeats is None:
        return "∞"
    return f"**{repeats}**" if repeats == design else str(repeats)


def _tasks(needed: int | None) -> str:
    return f"{needed:,} tasks" if needed else f"more than {MAX_TASKS:,} tasks"


def _finished_markdown(found: dict[str, Any]) -> str:
    used = {name: Setting(**value) for name, value in found["used"].items()}
    icc, kappa = found["icc"], found["arm_correlation"]
    bound, rough = (
        found["reliable_from_tasks"],
        _rough(found["tasks"], found["reliable_from_tasks"]),
    )
    lines = [
        f"**{found['results']}**: {found['arms']} arms, {found['tasks']} tasks, "
        f"{found['repeats']} repeat(s); accuracy {found['baseline']:.0%} over all arms; "
        + (
            "ICC not estimable (each (arm, task) ran once)"
            if icc is None
            else f"ICC {icc:.2f} (one-way ANOVA on each (arm, task)'s runs, pooled over arms)"
        )
        + (
            ""
            if kappa is None
            else f"; arm correlation {kappa:.2f} (from the per-task differences)"
        )
        + ".",
        "",
        f"Smallest rise over {used['baseline'].value:.0%} this run could detect with "
        f"{found['power']:.0%} power (two-sided alpha {found['alpha']:g}): "
        f"**{_points(found['smallest_detectable'])}**{rough}, at "
        + used["icc"].said(f"ICC {used['icc'].value:.2f}")
        + " and "
        + used["arm_correlation"].said(f"arm correlation {used['arm_correlation'].value:.2f}")
        + ".",
        "",
        f"| arm | accuracy | vs {found['best']} (the best arm) | tasks | sd of per-task "
        "difference | smallest detectable at that sd |",
        "|---|---|---|---|---|---|",
    ]
    for p in found["pairs"]:
        lines.append(
            f"| {p['arm']} | {p['accuracy']:.0%} | {100 * p['difference']:+.0f} points | "
            f"{p['tasks']} | {p['sd']:.3f} | {_points(p['detectable'])}"
            f"{_rough(p['tasks'], bound)} |"
        )
    if rough:
        lines += ["", _rough_note(bound, used["icc"].value)]
    return "\n".join(lines)
