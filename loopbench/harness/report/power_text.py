"""The markdown ``loopbench power`` prints: the plan of a design with its table of repeats,
and what a finished run could have detected, each rendered from the report the command
also prints as JSON, with ``Setting``, an input and the source the text names beside it.
Apart from the command (``loopbench.harness.cli.power``) so that module keeps to its options and the
gathering of settings, and the wording can change without touching it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from loopbench.harness.report.power import INDEPENDENT, MAX_TASKS, SHARED
from loopbench.harness.report.power_sequential import sequential_markdown


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


SIMULATED = "‡"


@dataclass(frozen=True)
class Marks:
    """Which tasks-needed figures were simulated rather than computed: repeats and few
    tasks, unless the ICC is 1 (repeats are then copies: exact) or no outcome rejects."""

    icc: float
    fewest: int
    bound: int

    def tasks(self, tasks: int | None, repeats: float | None) -> str:
        if tasks is None or repeats is None or repeats == 1 or math.isinf(repeats):
            return ""
        return SIMULATED if self.icc < 1 and self.fewest <= tasks < self.bound else ""

    @staticmethod
    def power(method: str | None) -> str:
        return SIMULATED if method == "simulated" else ""


def _simulated_note(bound: int) -> str:
    return (
        f"{SIMULATED} Simulated: with repeats and fewer than {bound} tasks the power depends "
        "on how difficulty is spread over the tasks, which the ICC and the arm correlation do "
        "not fix, and normal theory can miss it by 10 points or more. These figures simulate "
        "the test with each task's chance Beta distributed (docs/power.md); tasks unlike that "
        "can differ by several points."
    )


def _signed_points(share: float | None) -> str:
    return "—" if share is None or math.isnan(share) else f"{100 * share:+.0f} points"


def _number(value: float | None) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.3f}"


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
    d, sources, bound = report["design"], report["sources"], report["normal_theory_from_tasks"]
    said = {name: Setting(d[name], source) for name, source in sources.items()}
    runs, given = d["repeats"], d["tasks"]
    fewest = report["fewest_tasks"]
    mark = Marks(d["icc"], fewest, bound)
    lines = [
        f"Arm A right {d['baseline']:.0%} of the time, arm B {d['arm_b']:.0%} "
        f"({'+' if d['delta'] > 0 else '-'}{_points(d['delta'])}); "
        + said["icc"].said(f"ICC {d['icc']:.2f}")
        + "; task difficulty "
        + said["arm_correlation"].said(_correlation(d["arm_correlation"]))
        + f"; the paired test ({report['test']}) at alpha {d['alpha']:g}.",
        "",
    ]
    first = report["rows"][0]
    needed = first["tasks_needed"]
    if given is None:
        lines.append(
            f"**{_tasks(needed)}**{mark.tasks(needed, runs)} at {runs} repeat(s) give "
            f"{d['power']:.0%} power" + (f" ({needed * runs:,} runs an arm)." if needed else ".")
        )
    else:
        lines.append(
            f"**Power {first['power']:.0%}**{mark.power(first['method'])} with {given} tasks "
            f"at {runs} repeat(s) ({given * runs:,} runs an arm); {d['power']:.0%} power needs "
            f"{_tasks(needed)}{mark.tasks(needed, runs)}."
        )
        if given < fewest:
            lines.append(_too_few_note(given, fewest, d["alpha"]))
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
            + (f"{row['power']:.0%}{mark.power(row['method'])} | " if given else "")
            + (f"{needed:,}{mark.tasks(needed, repeats)} | " if needed else "— | ")
            + (f"{needed * repeats:,} |" if needed and repeats else "— |")
        )
    floor = report["rows"][-1]["sd"] ** 2
    lines += [
        "",
        f"Var(a task's difference) = {floor:.4f} between tasks, which no number of repeats "
        f"removes, + {first['sd'] ** 2 - floor:.4f} run to run at {runs} repeat(s), which "
        "shrinks as 1/repeats: repeats help while the second term is the larger. "
        "A difficulty the arms share cancels in the difference; the first term grows as the "
        "arms' task effects differ (a lower --arm-correlation). Model: docs/power.md.",
    ]
    if SIMULATED in "\n".join(lines[2:]):
        lines += ["", _simulated_note(bound)]
    if report.get("sequential"):
        lines += ["", sequential_markdown(report["sequential"], runs)]
    return "\n".join(lines)


def _too_few_note(given: int, fewest: int, alpha: float) -> str:
    return (
        f"No outcome of {given} tasks rejects at alpha {alpha:g}: the smallest p the paired "
        f"test gives N tasks is 2^-N (every task's difference of one sign), so it needs at "
        f"least {fewest} tasks."
    )


def _repeats(repeats: int | None, design: int) -> str:
    if repeats is None:
        return "∞"
    return f"**{repeats}**" if repeats == design else str(repeats)


def _tasks(needed: int | None) -> str:
    return f"{needed:,} tasks" if needed else f"more than {MAX_TASKS:,} tasks"


def _finished_markdown(found: dict[str, Any]) -> str:
    used = {name: Setting(**value) for name, value in found["used"].items()}
    icc, kappa = found["icc"], found["arm_correlation"]
    bound = found["normal_theory_from_tasks"]
    rough = SIMULATED if found["method"] == "simulated" else ""
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
        f"{found['power']:.0%} power (the paired test at alpha {found['alpha']:g}): "
        + (
            f"**{_points(found['smallest_detectable'])}**{rough}, at "
            if found["smallest_detectable"] is not None
            else "**none**, not even a rise to 100%, at "
        )
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
            f"| {p['arm']} | {p['accuracy']:.0%} | {_signed_points(p['difference'])} | "
            f"{p['tasks']} | {_number(p['sd'])} | {_points(p['detectable'])}"
            f"{APPROXIMATE if p['detectable'] is not None and p['tasks'] < bound else ''} |"
        )
    if rough:
        lines += ["", _simulated_note(bound)]
    if any(p["tasks"] < bound for p in found["pairs"]):
        lines += ["", _approximate_note(bound)]
    return "\n".join(lines)


APPROXIMATE = "*"


def _approximate_note(bound: int) -> str:
    return (
        f"{APPROXIMATE} From the observed sd by normal theory, which with fewer than {bound} "
        "tasks can be several points off: a rough guide."
    )
