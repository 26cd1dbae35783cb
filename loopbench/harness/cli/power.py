"""``loopbench power``: the tasks and repeats a paired comparison of two arms needs, before a
run, and what a finished run could have detected (the model: ``loopbench.harness.report.power``)."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import click

from loopbench.harness.cli.bundles import bundled
from loopbench.harness.cli.errors import Command, Finite
from loopbench.harness.errors import BadInput
from loopbench.harness.report.power import (
    CONSERVATIVE,
    INDEPENDENT,
    MAX_REPEATS,
    NORMAL_FROM,
    SHARED,
    Design,
    design_power,
    fewest_tasks,
    plan,
    smallest_detectable,
)
from loopbench.harness.report.power_estimate import Estimates, estimate
from loopbench.harness.report.power_sequential import sequential_plan
from loopbench.harness.report.power_text import Setting, markdown

DEFAULT_REPEATS = 3
#: The test whose power is reported: the one compare, table --vs and --until-separated use.
TEST = "sign flips of per-task differences, two-sided, mid-p"
#: Assumed when neither --icc nor a run with repeats says otherwise.
DEFAULT_ICC = 0.3
SHARE = Finite(0, 1, min_open=True, max_open=True)


#: Words --arm-correlation takes besides a number from 0 to 1.
CORRELATIONS = {"shared": SHARED, "independent": INDEPENDENT}


def _arm_correlation(text: str | None) -> float | None:
    if text is None:
        return None
    word = text.strip().lower()
    if word in CORRELATIONS:
        return CORRELATIONS[word]
    try:
        number = float(word)
    except ValueError:
        number = math.nan
    if not 0 <= number <= 1:  # also refuses nan
        raise BadInput(
            f"--arm-correlation {text!r}: write shared, independent or a number from 0 to 1"
        )
    return number


@dataclass(frozen=True)
class Givens:
    """What the flags give of the design (``--baseline``, ``--repeats``, ``--icc``,
    ``--arm-correlation``); each one not given is estimated from ``--from`` or assumed."""

    baseline: float | None
    repeats: int | None
    icc: float | None
    arm_correlation: str | None


@dataclass(frozen=True)
class TestLevel:
    """The paired test's significance level (``--alpha``) and the power wanted (``--power``)."""

    alpha: float
    wanted: float


@click.command("power", cls=Command)
@click.option("--baseline", type=SHARE, help="Arm A's accuracy, as a share (0.56).")
@click.option(
    "--delta",
    type=Finite(-1, 1),
    help="The difference to detect: arm B's accuracy minus arm A's (0.10 is 10 points).",
)
@click.option(
    "--tasks",
    type=click.IntRange(min=2),
    help="Tasks in the design: say the power they have instead of the tasks needed.",
)
@click.option(
    "--repeats",
    type=click.IntRange(min=1, max=MAX_REPEATS),
    help=f"Runs of every (arm, task).  [default: {DEFAULT_REPEATS}, or the run's with --from]",
)
@click.option(
    "--icc",
    type=Finite(0, 1),
    help="Share of a run's variance that lies between tasks (intraclass correlation).  "
    f"[default: {DEFAULT_ICC}, or estimated with --from]",
)
@click.option(
    "--arm-correlation",
    metavar="shared|independent|0..1",
    help="Correlation of a task's difficulty for the two arms: shared (1), independent (0) "
    f"or between.  [default: {CONSERVATIVE} (conservative: arms on one model usually share "
    "more), or estimated with --from]",
)
@click.option(
    "--alpha",
    type=SHARE,
    default=0.05,
    show_default=True,
    help="Significance level of the two-sided paired test.",
)
@click.option(
    "--power",
    "wanted",
    type=SHARE,
    default=0.8,
    show_default=True,
    help="Chance wanted of detecting the difference.",
)
@click.option(
    "--from",
    "results",
    type=click.Path(path_type=Path),
    help="A finished results folder: estimate tasks, repeats, baseline, ICC and arm "
    "correlation from it (flags given win), and say what it could have detected.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "json"]),
    default="md",
    show_default=True,
    help="Output format.",
)
@bundled("given", Givens)
@bundled("level", TestLevel)
def power_command(
    given: Givens,
    delta: float | None,
    tasks: int | None,
    level: TestLevel,
    results: Path | None,
    fmt: str,
) -> None:
    """How many tasks a paired comparison of two arms needs, or the power of --tasks."""
    kappa = _arm_correlation(given.arm_correlation)
    alpha, wanted = level.alpha, level.wanted
    found = _estimate(results, alpha, wanted) if results is not None else None
    if found is None and given.baseline is None:
        raise BadInput("give --baseline (arm A's accuracy, e.g. 0.56), or --from RESULTS")
    if delta is None and found is None:
        raise BadInput("give --delta, the difference to detect (0.10 is 10 points)")
    settings = _settings(found, given.baseline, given.repeats, given.icc, kappa)
    report: dict[str, Any] = {}
    if found is not None:
        report["from"] = _finished(str(results), found, settings, alpha, wanted)
    if delta is not None:
        report |= _planned(_design(settings, delta, alpha, wanted), settings, tasks)
    report = _without_nan(report)
    click.echo(json.dumps(report, indent=2) if fmt == "json" else markdown(report))


def _without_nan(value: Any) -> Any:
    """The report with nan (an sd of fewer than 2 tasks, a difference of none) as null: JSON
    has no nan."""
    if isinstance(value, dict):
        return {key: _without_nan(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_without_nan(item) for item in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _estimate(results: Path, alpha: float, wanted: float) -> Estimates:
    from loopbench.harness.api import load  # the results' reader: only with --from

    records = load(results).records()
    if not records:
        raise BadInput(f"{results}: no finished runs yet")
    return estimate(records, alpha, wanted, source=results)


def _settings(
    found: Estimates | None,
    baseline: float | None,
    repeats: int | None,
    icc: float | None,
    arm_correlation: float | None,
) -> dict[str, Setting]:
    """Each input: the flag if given, else the run's estimate, else the default."""

    def pick(flag: float | None, estimated: float | None, default: float, why: str) -> Setting:
        if flag is not None:
            return Setting(flag, "given")
        if estimated is not None:
            return Setting(estimated, "estimated")
        return Setting(default, why)

    assumed = "assumed; measure yours with --from" if found is None else "assumed"
    if found is not None and found.icc is None:
        assumed = "assumed: each (arm, task) of the run ran once, so it cannot tell"
    if baseline is None and found is not None:
        if not 0 < found.baseline < 1:
            raise BadInput(
                f"the run's arms are right {found.baseline:.0%} of the time: no spread to "
                "plan with; give --baseline"
            )
        baseline_setting = Setting(found.baseline, "estimated")
    else:
        assert baseline is not None  # the command asks for one when there is no run
        baseline_setting = Setting(baseline, "given")
    # guard: power-assumes-conservative-arm
    return {
        "baseline": baseline_setting,
        "repeats": pick(repeats, found.repeats if found else None, DEFAULT_REPEATS, "assumed"),
        "icc": pick(icc, found.icc if found else None, DEFAULT_ICC, assumed),
        "arm_correlation": pick(
            arm_correlation,
            found.arm_correlation if found else None,
            CONSERVATIVE,
            "assumed, conservatively; measure yours with --from"
            if found is None
            else "assumed, conservatively",
        ),
    }


def _design(settings: dict[str, Setting], delta: float, alpha: float, wanted: float) -> Design:
    return Design(
        settings["baseline"].value,
        delta,
        int(settings["repeats"].value),
        settings["icc"].value,
        settings["arm_correlation"].value,
        alpha,
        wanted,
    )


def _planned(design: Design, settings: dict[str, Setting], tasks: int | None) -> dict[str, Any]:
    rows = plan(design, tasks)
    planned = tasks if tasks is not None else rows[0].tasks_needed
    sequential = None
    if planned is not None and design.delta != 0:
        fixed_power = rows[0].power if tasks is not None else design_power(design, planned).value
        sequential = sequential_plan(design, planned, fixed_power or 0.0)
    return {
        "design": {**asdict(design), "arm_b": design.arm_b, "tasks": tasks},
        "sources": {name: s.source for name, s in settings.items()},
        "test": TEST,
        "tasks_needed": rows[0].tasks_needed,
        "power_of_tasks": rows[0].power,
        "method": rows[0].method,
        "normal_theory_from_tasks": NORMAL_FROM,
        "fewest_tasks": fewest_tasks(design.alpha),
        "rows": [
            {**asdict(row), "repeats": None if math.isinf(row.repeats) else int(row.repeats)}
            for row in rows
        ],
        "sequential": sequential,
    }


def _finished(
    results: str, found: Estimates, settings: dict[str, Setting], alpha: float, wanted: float
) -> dict[str, Any]:
    """The run's own design (its tasks and repeats) and the smallest rise it could detect."""
    design = replace(_design(settings, 0.0, alpha, wanted), repeats=found.repeats)
    return {
        "results": results,
        "alpha": alpha,
        "power": wanted,
        **{k: v for k, v in asdict(found).items() if k != "pairs"},
        "used": {name: asdict(settings[name]) for name in ("baseline", "icc", "arm_correlation")},
        "test": TEST,
        "smallest_detectable": smallest_detectable(design, found.tasks),
        "method": design_power(design, found.tasks).method,
        "normal_theory_from_tasks": NORMAL_FROM,
        "pairs": [asdict(p) for p in found.pairs],
    }
