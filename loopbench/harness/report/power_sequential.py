"""The runs ``run --until-separated`` is expected to spend, beside the fixed design ``power``
plans: the fewest rounds whose power matches the fixed design's, and the mean runs an arm
at the difference asked and when the arms do not differ
(``loopbench.harness.stats.sequential_design``)."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from loopbench.harness.report.power import Design, difference_variance
from loopbench.harness.stats.separation import SeparationRule
from loopbench.harness.stats.sequential_design import PATHS, expected, fewest_rounds

#: The most rounds searched for one matching the fixed design's power.
MOST_ROUNDS = 60


def sequential_plan(design: Design, tasks: int, fixed_power: float) -> dict[str, Any]:
    """The rule planned for ``|delta|`` (its margin) on ``tasks`` tasks: the fewest rounds
    with at least ``fixed_power`` there, its false alarms, and the mean runs an arm."""
    gap = abs(design.delta)
    information = [
        tasks
        / difference_variance(design.baseline, design.arm_b, k, design.icc, design.arm_correlation)
        for k in range(1, MOST_ROUNDS + 1)
    ]
    fixed_runs = tasks * design.repeats
    rule = SeparationRule(design.alpha, gap, 1)
    found = None
    # No spread left to average (or a gap of none): no rounds to plan. Else the most rounds
    # first, so a power out of reach is said at once.
    if all(0 < i < math.inf for i in information) and gap > 0:
        most = expected(replace(rule, max_repeats=MOST_ROUNDS), information, gap, tasks=tasks)
        if most.declared >= fixed_power:
            found = fewest_rounds(rule, information, gap, fixed_power, tasks)
    plan: dict[str, Any] = {
        "tasks": tasks,
        "margin": gap,
        "boundary": SeparationRule.boundary,
        "futility": SeparationRule.futility,
        "futility_boundary": SeparationRule.futility_boundary,
        "fixed_runs": fixed_runs,
        "fixed_power": fixed_power,
        "paths": PATHS,
        "max_repeats": None,
    }
    if found is None:
        return plan
    rule, at_gap = found
    at_none = expected(rule, information, 0.0)
    return plan | {
        "max_repeats": rule.max_repeats,
        "power": at_gap.declared,
        "false_alarms": at_none.declared,
        "runs_at_delta": tasks * at_gap.rounds,
        "runs_if_none": tasks * at_none.rounds,
    }


def sequential_markdown(plan: dict[str, Any], repeats: int) -> str:
    tasks, fixed = plan["tasks"], plan["fixed_runs"]
    command = f"--until-separated --margin {plan['margin']:g}"
    if plan["max_repeats"] is None:
        return (
            f"Run until separated ({command}) on these {tasks} tasks: no number of rounds up to "
            f"{MOST_ROUNDS} reaches the fixed design's {plan['fixed_power']:.0%} power."
        )
    at, none = plan["runs_at_delta"], plan["runs_if_none"]
    return (
        f"**Expected runs an arm**: the fixed design, {tasks} tasks at {repeats} repeat(s): "
        f"{fixed:,} (power {plan['fixed_power']:.0%}). Run until separated ({command} "
        f"--max-repeats {plan['max_repeats']}) on the same tasks: {at:,.0f} on average at this "
        f"difference ({at / fixed:.0%} of the fixed design's; power {plan['power']:.0%}), "
        f"{none:,.0f} when the arms do not differ ({none / fixed:.0%}; false alarms "
        f"{plan['false_alarms']:.1%}). Simulated on normal paths of the rule's looks "
        "(docs/power.md)."
    )
