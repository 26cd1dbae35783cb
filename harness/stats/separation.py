"""When to stop spending on an arm (``run --until-separated``).

The grid runs in rounds: round k runs repeat k-1 of every arm still running, on every
task. After each round every running arm is compared with the best running arm on the
runs both made (same task, same repeat), and it stops once the decision is made:

- **separated**: the paired test (``harness.stats.sign_flip``: sign flips of per-task
  differences, two-sided, mid-p; the one test ``compare`` and ``table --vs`` use) rejects
  "no difference" at the round's alpha;
- **within the margin**: the paired interval for its difference (Newcombe's, on the
  effective number of pairs, tasks clustered; at one minus the round's alpha) lies inside
  (-margin, +margin).

Looking after every round with a fixed-sample test at alpha would declare identical
arms different far more often than alpha. Here alpha is spent across the rounds and the
pairs of arms (Bonferroni): each look at each pair gets alpha / (max_repeats * pairs),
so by the union bound the chance of declaring any difference between identical arms,
over the whole run and whichever round it stops at, is at most alpha
(``bench/separation.py`` measures it).

The test treats tasks as the unit, so a decision is about tasks like these: repeats of a
task are correlated samples of it, and an arm is not called better for having been lucky
on a few tasks many times over.

Decisions are replayed from the records, look by look, so a resumed run and ``table``
reach the ones the run reached.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from harness.files import read_bounded, special_file_problem
from harness.results.reading import ResultsError
from harness.results.records import RunRecord
from harness.results.statuses import INFRASTRUCTURE_STATUSES
from harness.stats.intervals import PairedTasks

#: Beside runs.jsonl: the rule a run stopped by, so the table can replay it.
RULE_FILE = "separation.json"

Verdict = Literal["better", "worse", "within margin", "undecided"]


@dataclass(frozen=True)
class SeparationRule:
    alpha: float = 0.05
    """The chance, over the whole run, of declaring identical arms different."""
    margin: float = 0.05
    """A difference whose interval lies within +-margin counts as none."""
    max_repeats: int = 10
    """Rounds at most: the fixed design this run is measured against."""

    def look_alpha(self, arms: int) -> float:
        """The alpha of one look at one pair of arms."""
        pairs = max(1, arms * (arms - 1) // 2)
        # guard: alpha-spent-across-rounds-pairs
        return self.alpha / (self.max_repeats * pairs)


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
    # guard: within-margin-needs-whole-interval
    elif pairs and -margin < low and high < margin:
        verdict = "within margin"
    return Look(verdict, paired.difference, low, high, p_value, pairs)


def replay(outcomes: dict[str, np.ndarray], rule: SeparationRule, rounds: int) -> Separation:
    """The decisions after ``rounds`` rounds; ``outcomes[arm]`` is (tasks, repeats)."""
    state = Separation(rule, list(outcomes))
    alpha = rule.look_alpha(len(outcomes))
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
                look = judge(seen[arm], seen[best], alpha, rule.margin)
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
            return cls(SeparationRule(**data["rule"]), list(data["arms"]), list(data["tasks"]))
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
        look_alpha = rule.look_alpha(len(self.arms))
        lines = [
            f"Run until separated (--until-separated: alpha {rule.alpha:g} over the whole run, "
            f"spent as {look_alpha:.2g} per look at a pair of arms; margin {100 * rule.margin:g} "
            f"points): {state.rounds} of at most {rule.max_repeats} rounds; {spent} runs made, "
            f"{saved} not spent ({saved / fixed:.0%}) against running every arm "
            f"{rule.max_repeats} times. Intervals are at {1 - look_alpha:.2%}, the level of "
            "one look."
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


def _describe(decision: Decision, stopped: bool) -> str:
    look = decision.look
    gap = (
        f"{100 * look.difference:+.0f} points [{100 * look.low:+.0f}, {100 * look.high:+.0f}] "
        f"vs {decision.against} on {look.pairs} paired runs, p {look.p_value:.2g}"
    )
    if not stopped:
        return f"- {decision.arm}: undecided after round {decision.round} ({gap})"
    said = "within the margin of" if look.verdict == "within margin" else look.verdict + " than"
    return f"- {decision.arm}: {said} {decision.against} at round {decision.round} ({gap})"
