"""When to stop spending on an arm (``run --until-separated``).

The grid runs in rounds: round k runs repeat k-1 of every arm still running, on every
task. After each round every running arm is compared with the best running arm on the
runs both made (same task, same repeat), and it stops once the decision is made:

- **separated**: the paired test (``loopbench.harness.stats.sign_flip``: sign flips of per-task
  differences, two-sided, mid-p; the one test ``compare`` and ``table --vs`` use) rejects
  "no difference" at the round's alpha;
- **within the margin**: the paired interval for its difference (Newcombe's, on the
  effective number of pairs, tasks clustered; at one minus the round's alpha) lies inside
  (-margin, +margin).

Looking after every round with a fixed-sample test at alpha would declare identical
arms different far more often than alpha. Here alpha is spent across the rounds by a
group-sequential boundary (``loopbench.harness.stats.boundaries``: Lan-DeMets alpha spending,
Pocock-like by default), and across the pairs of arms by Bonferroni (alpha / pairs a pair),
so the chance of declaring any difference between identical arms, over the whole run and
whichever round it stops at, is at most alpha. A look also stops an arm for **futility**
when no difference is clearly likelier than a gap of about the margin and far likelier than
one of twice the margin (likelihood ratios,
``loopbench.harness.stats.boundaries.futility_bound``; folders run before it used the first
ratio alone, or the conditional power of a gap of the margin, below ``rule.futility``):
identical arms stop early instead of running every round. The futility boundary is
non-binding: the efficacy bounds are computed as if it never stopped a run, so it only
lowers the false alarms (``bench/stopping.py`` and ``bench/separation.py`` measure both).

Folders run before the group-sequential rule saved no ``boundary``: they replay with the
rule they ran by (``bonferroni``: alpha / (max_repeats * pairs) at every look, no futility).

The test treats tasks as the unit, so a decision is about tasks like these: repeats of a
task are correlated samples of it, and an arm is not called better for having been lucky
on a few tasks many times over.

Decisions are replayed from the records, look by look, so a resumed run and ``table``
reach the ones the run reached.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from loopbench.harness.files import read_bounded, special_file_problem
from loopbench.harness.results.reading import ResultsError
from loopbench.harness.results.records import RunRecord
from loopbench.harness.results.statuses import INFRASTRUCTURE_STATUSES
from loopbench.harness.stats.boundaries import (
    FUTILITY,
    FUTILITY_FROM,
    conditional_power,
    efficacy_bounds,
    futility_bound,
    nominal_alpha,
)
from loopbench.harness.stats.intervals import PairedTasks

#: Beside runs.jsonl: the rule a run stopped by, so the table can replay it.
RULE_FILE = "separation.json"

Verdict = Literal["better", "worse", "within margin", "futile", "undecided"]
#: How alpha is spent over the rounds: a Lan-DeMets spending function, or the rule of
#: folders run before them (the same alpha at every look, no futility).
Boundary = Literal["pocock", "obrien-fleming", "bonferroni"]
BOUNDARIES: tuple[Boundary, ...] = ("pocock", "obrien-fleming", "bonferroni")
#: When a look gives up on a gap: on the likelihood of no gap against gaps of about the
#: margin and of twice it; against the first alone (folders run before the two); or on the
#: conditional power of a gap of the margin (folders run before either).
Futility = Literal["likelihood-two-gaps", "likelihood", "conditional-power"]
FUTILITIES: tuple[Futility, ...] = ("likelihood-two-gaps", "likelihood", "conditional-power")


@dataclass(frozen=True)
class SeparationRule:
    alpha: float = 0.05
    """The chance, over the whole run, of declaring identical arms different."""
    margin: float = 0.05
    """A difference whose interval lies within +-margin counts as none."""
    max_repeats: int = 10
    """Rounds at most."""
    boundary: Boundary = "pocock"
    """How alpha is spent over the rounds (``loopbench.harness.stats.boundaries``)."""
    futility: float = FUTILITY
    """0: never stop for futility. With ``conditional-power`` futility, stop an arm once the
    chance of finding a gap of the margin falls below this."""
    futility_boundary: Futility = "likelihood-two-gaps"
    """How a look gives up on a gap (``loopbench.harness.stats.boundaries``)."""

    def pair_alpha(self, arms: int) -> float:
        """The alpha of one pair of arms over the whole run."""
        pairs = max(1, arms * (arms - 1) // 2)
        return self.alpha / pairs

    def look_alpha(self, arms: int, round_: int | None = None) -> float:
        """The nominal alpha of one look (the last round's when ``round_`` is None) at one
        pair of arms: the paired test's p must be at most this."""
        if self.boundary == "bonferroni":
            # guard: alpha-spent-across-rounds-pairs
            return self.pair_alpha(arms) / self.max_repeats
        bounds = self.bounds(arms)
        return nominal_alpha(bounds[(round_ or self.max_repeats) - 1])

    def bounds(self, arms: int) -> tuple[float, ...]:
        """The z bound of each round's look at one pair of arms."""
        assert self.boundary != "bonferroni"
        return efficacy_bounds(self.pair_alpha(arms), self.max_repeats, self.boundary)


@dataclass(frozen=True)
class Look:
    """One arm against the best running arm, on the runs both made so far."""

    verdict: Verdict
    difference: float
    """Its accuracy minus the best arm's."""
    low: float
    high: float
    p_value: float
    pairs: int
    conditional_power: float | None = None
    """The chance the last round would find a gap of the margin (``conditional-power``
    futility)."""
    futility_bound: float | None = None
    """The |difference| below which the look stops for futility (``likelihood`` futility)."""


@dataclass(frozen=True)
class Decision:
    arm: str
    against: str
    round: int
    look: Look


@dataclass
class Separation:
    """Where the rounds stand after replaying ``rounds`` of them."""

    rule: SeparationRule
    arms: list[str]
    rounds: int = 0
    decisions: dict[str, Decision] = field(default_factory=dict)
    """The arms stopped, with the look that stopped them."""
    last: dict[str, Decision] = field(default_factory=dict)
    """Every other arm's latest look (the best arm has none)."""

    @property
    def running(self) -> list[str]:
        return [arm for arm in self.arms if arm not in self.decisions]

    @property
    def done(self) -> bool:
        return len(self.running) <= 1 or self.rounds >= self.rule.max_repeats


def judge(arm: np.ndarray, best: np.ndarray, alpha: float, margin: float) -> Look:
    """One look at one arm against the best: outcomes as (tasks, repeats) arrays of 1, 0, or
    NaN (not run, or not the arm's doing), aligned by task and repeat."""
    # guard: pairs-need-both-runs
    made = ~(np.isnan(arm) | np.isnan(best))
    a, b = (arm == 1) & made, (best == 1) & made
    paired = PairedTasks(
        made.sum(axis=1).astype(float),
        a.sum(axis=1).astype(float),
        b.sum(axis=1).astype(float),
        (a & b).sum(axis=1).astype(float),
    )
    pairs = int(made.sum())
    p_value = paired.p_value()
    low, high = paired.interval(1 - alpha)
    verdict: Verdict = "undecided"
    if pairs and p_value <= alpha:
        verdict = "better" if paired.difference > 0 else "worse"
    elif pairs and _within(low, high, margin):
        verdict = "within margin"
    return Look(verdict, paired.difference, low, high, p_value, pairs)


def _within(low: float, high: float, margin: float) -> bool:
    """An interval within the margin: all of it, not one end."""
    # guard: within-margin-needs-whole-interval
    return -margin < low and high < margin


def judge_look(arm: np.ndarray, best: np.ndarray, rule: SeparationRule, arms: int) -> Look:
    """One look at round ``arm.shape[1]`` under ``rule``. The group-sequential rules decide
    on the paired test's normal approximation, z = sum of d_t / sqrt(sum of d_t^2), against
    the round's bound (the exact mid-p, shown, runs over alpha at the small levels of many
    looks), then the interval within the margin, then futility."""
    round_ = arm.shape[1]
    look = judge(arm, best, rule.look_alpha(arms, round_), rule.margin)
    if rule.boundary == "bonferroni" or not look.pairs:
        return look
    made = ~(np.isnan(arm) | np.isnan(best))
    counts = made.sum(axis=1)
    kept = counts > 0
    d = (np.where(made, arm, 0).sum(axis=1) - np.where(made, best, 0).sum(axis=1))[kept]
    d = d / counts[kept]
    spread = math.sqrt(float((d**2).sum()))
    z = float(d.sum()) / spread if spread else 0.0
    bounds = rule.bounds(arms)
    verdict: Verdict = "undecided"
    # guard: efficacy-needs-the-round-bound
    if abs(z) >= bounds[round_ - 1]:
        verdict = "better" if z > 0 else "worse"
    elif _within(look.low, look.high, rule.margin):
        verdict = "within margin"
    fraction = round_ / rule.max_repeats
    look = replace(look, verdict=verdict)
    if verdict != "undecided" or not rule.futility or fraction >= 1:
        return look
    if rule.futility_boundary != "conditional-power":
        # The likelihood first; the conditional power still stops a run whose last round is
        # too near to find a gap of the margin (too few rounds for it).
        precision = len(d) / spread if spread else 0.0
        look = _likelihood_futility(look, z, rule, precision)
        if look.verdict == "futile":
            return look
    if fraction < FUTILITY_FROM:
        return look
    # The z the last round would expect if the gap were the margin, or the gap seen when it
    # is larger, in the direction seen.
    shift = max(rule.margin * len(d) / spread, abs(z)) if spread else math.inf
    drift = shift / math.sqrt(fraction)
    power = conditional_power(z, fraction, bounds[-1], math.copysign(drift, z))
    # guard: futility-below-threshold
    if power < rule.futility:
        return replace(look, verdict="futile", conditional_power=power, futility_bound=None)
    return replace(look, conditional_power=power)


def _likelihood_futility(look: Look, z: float, rule: SeparationRule, precision: float) -> Look:
    """Futility on the likelihood; ``precision`` is 1 / the standard error of the mean
    difference, so a gap of the margin would give a z of margin * precision."""
    if precision <= 0:
        return look
    # A folder run with the one-gap boundary replays by it.
    # guard: likelihood-folder-keeps-its-bound
    far = rule.futility_boundary == "likelihood-two-gaps"
    bound = futility_bound(rule.margin * precision, far)
    # The bound on z as one on the difference.
    difference_bound = max(bound, 0.0) / precision
    # guard: futility-below-likelihood-bound
    if abs(z) < bound:
        return replace(look, verdict="futile", futility_bound=difference_bound)
    return replace(look, futility_bound=difference_bound)


def replay(outcomes: dict[str, np.ndarray], rule: SeparationRule, rounds: int) -> Separation:
    """The decisions after ``rounds`` rounds; ``outcomes[arm]`` is (tasks, repeats)."""
    state = Separation(rule, list(outcomes))
    for round_ in range(1, min(rounds, rule.max_repeats) + 1):
        running = state.running
        if len(running) <= 1:
            break
        state.rounds = round_
        seen = {arm: outcomes[arm][:, :round_] for arm in running}
        best = max(running, key=lambda arm: _accuracy(seen[arm]))  # ties: the first listed
        state.last.pop(best, None)
        for arm in running:
            if arm != best:
                look = judge_look(seen[arm], seen[best], rule, len(outcomes))
                state.last[arm] = Decision(arm, best, round_, look)
                if look.verdict != "undecided":
                    state.decisions[arm] = state.last[arm]
    return state


def _accuracy(outcomes: np.ndarray) -> float:
    graded = outcomes[~np.isnan(outcomes)]
    return float(graded.mean()) if graded.size else -1.0


def outcome_arrays(
    records: Sequence[RunRecord], arms: Sequence[str], tasks: Sequence[str], repeats: int
) -> dict[str, np.ndarray]:
    """Each arm's outcomes as (tasks, repeats): 1 correct, 0 not, NaN not run or not the
    arm's doing (api_error, pattern_error)."""
    arrays = {arm: np.full((len(tasks), repeats), np.nan) for arm in arms}
    row = {task: i for i, task in enumerate(tasks)}
    for record in records:
        grid = arrays.get(record.arm)
        if grid is None or record.task_id not in row or record.repeat >= repeats:
            continue
        if record.status not in INFRASTRUCTURE_STATUSES:
            grid[row[record.task_id], record.repeat] = float(record.correct is True)
    return arrays


@dataclass(frozen=True)
class StoppedRun:
    """What a results folder holds about a run stopped by the rule: enough to replay it."""

    rule: SeparationRule
    arms: list[str]
    tasks: list[str]

    def save(self, folder: Path) -> None:
        path = folder / RULE_FILE
        if problem := special_file_problem(path):  # writing to a FIFO waits for a reader
            raise ResultsError(f"{path}: {problem}; the folder is unusable")
        path.write_text(json.dumps(asdict(self), indent=1) + "\n")

    @classmethod
    def load(cls, folder: Path) -> StoppedRun | None:
        """The rule a run stopped by, or None for a folder run without one; ``ValueError``
        for a file that is not one (a FIFO or a device refused before it is opened)."""
        path = folder / RULE_FILE
        if problem := special_file_problem(path):
            raise ValueError(f"{path}: {problem}; expected the rule `run --until-separated` saves")
        if not path.is_file():
            return None
        try:
            data = json.loads(read_bounded(path))
            # A rule saved before boundaries were recorded is the one it ran by.
            # guard: rule-before-boundaries-is-bonferroni
            rule = {"boundary": "bonferroni", "futility": 0.0} | data["rule"]
            # A rule saved before likelihood futility gave up on the conditional power.
            # guard: rule-before-likelihood-is-conditional-power
            rule = {"futility_boundary": "conditional-power"} | rule
            if rule["boundary"] not in BOUNDARIES:
                raise ValueError(f"boundary {rule['boundary']!r} is none of {BOUNDARIES}")
            if rule["futility_boundary"] not in FUTILITIES:
                raise ValueError(
                    f"futility_boundary {rule['futility_boundary']!r} is none of {FUTILITIES}"
                )
            return cls(SeparationRule(**rule), list(data["arms"]), list(data["tasks"]))
        except OSError as exc:
            raise ValueError(f"{path}: cannot be read ({exc.strerror})") from None
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}: not a stopping rule loopbench wrote ({exc})") from None

    def replay(self, records: Sequence[RunRecord]) -> Separation:
        repeats = self.rule.max_repeats
        arrays = outcome_arrays(records, self.arms, self.tasks, repeats)
        made = [r for r in records if r.arm in arrays and r.repeat < repeats]
        rounds = max((r.repeat + 1 for r in made), default=0)
        return replay(arrays, self.rule, rounds)

    def footnote(self, records: Sequence[RunRecord]) -> str:
        """The rule, the decisions, and the runs a fixed design would have spent beyond these."""
        state = self.replay(records)
        rule = self.rule
        tasks = set(self.tasks)
        spent = sum(
            r.arm in self.arms and r.task_id in tasks and r.repeat < rule.max_repeats
            for r in records
        )
        fixed = len(self.arms) * len(self.tasks) * rule.max_repeats
        saved = fixed - spent
        lines = [
            f"Run until separated (--until-separated: {_spending(rule, len(self.arms))}; "
            f"margin {100 * rule.margin:g} points): {state.rounds} of at most "
            f"{rule.max_repeats} rounds; {spent} runs made, {saved} not spent "
            f"({saved / fixed:.0%}) against running every arm {rule.max_repeats} times. "
            f"{_levels(rule, len(self.arms))}"
        ]
        for arm in self.arms:
            decision = state.last.get(arm)
            if decision is not None:
                lines.append(_describe(decision, arm in state.decisions))
        return "\n".join(lines)

    def footnote_of(self, runs: pd.DataFrame) -> str:
        """``footnote`` of a folder's runs read as columns (``read_frame``): it reads the arm,
        task, repeat, status and verdict of the runs of its arms within its rounds, built as
        records for those runs alone."""
        mine = runs[runs["arm"].isin(self.arms) & (runs["repeat"] < self.rule.max_repeats)]
        columns = [
            mine[name].tolist() for name in ("arm", "task_id", "repeat", "status", "correct")
        ]
        records = [
            RunRecord.model_construct(
                arm=arm, task_id=task, repeat=repeat, status=status, correct=c
            )
            for arm, task, repeat, status, c in zip(*columns, strict=True)
        ]
        return self.footnote(records)


def _spending(rule: SeparationRule, arms: int) -> str:
    if rule.boundary == "bonferroni":
        return (
            f"alpha {rule.alpha:g} over the whole run, spent as {rule.look_alpha(arms):.2g} per "
            "look at a pair of arms"
        )
    first, last = rule.look_alpha(arms, 1), rule.look_alpha(arms)
    futile = ""
    if rule.futility and rule.futility_boundary == "likelihood-two-gaps":
        futile = (
            ", futility once no difference is clearly likelier than a gap of the margin and "
            "far likelier than one of twice it"
        )
    elif rule.futility and rule.futility_boundary == "likelihood":
        futile = ", futility once no difference is clearly likelier than a gap of the margin"
    elif rule.futility:
        futile = f", futility below {rule.futility:.0%} conditional power at the margin"
    return (
        f"alpha {rule.alpha:g} over the whole run, spent {rule.boundary.replace('-', ' ')}-like "
        f"over the rounds (p at most {first:.2g} at round 1 to {last:.2g} at round "
        f"{rule.max_repeats}){futile}"
    )


def _levels(rule: SeparationRule, arms: int) -> str:
    if rule.boundary == "bonferroni":
        return f"Intervals are at {1 - rule.look_alpha(arms):.2%}, the level of one look."
    return "Intervals are at the level of the round's look."


def _describe(decision: Decision, stopped: bool) -> str:
    look = decision.look
    gap = (
        f"{100 * look.difference:+.0f} points [{100 * look.low:+.0f}, {100 * look.high:+.0f}] "
        f"vs {decision.against} on {look.pairs} paired runs, p {look.p_value:.2g}"
    )
    if not stopped:
        return f"- {decision.arm}: undecided after round {decision.round} ({gap})"
    if look.verdict == "futile":
        why = (
            f"conditional power {look.conditional_power:.0%}"
            if look.conditional_power is not None
            else f"the gap within ±{100 * (look.futility_bound or 0):.1f} points"
        )
        return (
            f"- {decision.arm}: no gap of the margin likely against {decision.against} at "
            f"round {decision.round} ({why}; {gap})"
        )
    said = "within the margin of" if look.verdict == "within margin" else look.verdict + " than"
    return f"- {decision.arm}: {said} {decision.against} at round {decision.round} ({gap})"
