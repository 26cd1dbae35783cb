"""The stopping rule of --until-separated, proven by simulation: identical arms are declared
different at most alpha of the time over a whole run, a real gap stops the run early, and
the rule's interval covers the difference it reports."""

import numpy as np
import pytest

from loopbench.harness.stats.intervals import newcombe_interval
from loopbench.harness.stats.separation import BOUNDARIES, SeparationRule, judge, replay

SIMULATIONS = 1000


def simulate(rng, chances, repeats):
    """One run's outcomes: ``chances[arm]`` is each task's chance of a correct run."""
    return {
        arm: (rng.random((len(p), repeats)) < p[:, None]).astype(float)
        for arm, p in chances.items()
    }


def tasks(rng, n=12):
    """Tasks of unequal difficulty: repeats of one task are correlated."""
    return rng.beta(2, 2, n)


def declared(state):
    return any(d.look.verdict in ("better", "worse") for d in state.decisions.values())


@pytest.mark.parametrize("boundary", BOUNDARIES)
@pytest.mark.parametrize("arms", [2, 3])
def test_identical_arms_are_declared_different_at_most_alpha_of_the_time(arms, boundary):
    rng = np.random.default_rng(11)
    rule = SeparationRule(alpha=0.05, margin=0.0, max_repeats=10, boundary=boundary)
    false = 0
    for _ in range(SIMULATIONS):
        p = tasks(rng)
        outcomes = simulate(rng, {f"arm{i}": p for i in range(arms)}, rule.max_repeats)
        false += declared(replay(outcomes, rule, rule.max_repeats))
    assert false / SIMULATIONS <= rule.alpha


def test_a_fixed_sample_test_checked_every_round_would_not_hold_alpha():
    """Why alpha is spent across rounds: the same test at full alpha after every round
    declares identical arms different more often than alpha."""

    class Peeking(SeparationRule):
        def look_alpha(self, arms, round_=None):
            return self.alpha

    rng = np.random.default_rng(12)
    rule = Peeking(alpha=0.05, margin=0.0, max_repeats=10, boundary="bonferroni")
    false = 0
    for _ in range(SIMULATIONS):
        p = tasks(rng)
        false += declared(replay(simulate(rng, {"a": p, "b": p}, 10), rule, 10))
    assert false / SIMULATIONS > rule.alpha


def test_a_thirty_point_gap_stops_before_the_maximum_and_names_the_worse_arm():
    rng = np.random.default_rng(13)
    rule = SeparationRule(alpha=0.05, margin=0.05, max_repeats=10)
    rounds, wrong_way, worse = [], 0, 0
    for _ in range(SIMULATIONS // 4):
        good = rng.uniform(0.5, 0.95, 12)
        state = replay(simulate(rng, {"good": good, "poor": good - 0.3}, 10), rule, 10)
        rounds.append(state.rounds)
        verdicts = [d.look.verdict for d in state.decisions.values()]
        worse += verdicts == ["worse"] and "poor" in state.decisions
        wrong_way += "better" in verdicts or "within margin" in verdicts
    assert wrong_way == 0
    assert np.mean(rounds) < 0.6 * rule.max_repeats  # the fixed design always runs 10
    # Twelve tasks are twelve pieces of evidence, however many repeats: most runs decide;
    # the rest stop for futility, a gap too unlikely to be found on so few tasks.
    assert worse / (SIMULATIONS // 4) >= 0.85


def test_arms_alike_on_many_tasks_stop_as_within_the_margin():
    rng = np.random.default_rng(14)
    rule = SeparationRule(alpha=0.05, margin=0.10, max_repeats=10)
    p = tasks(rng, 400)
    state = replay(simulate(rng, {"a": p, "b": p}, 10), rule, 10)
    # Within the margin, or no gap of it likely any more: either stops the arm.
    assert [d.look.verdict for d in state.decisions.values()] in (["within margin"], ["futile"])
    assert state.rounds < rule.max_repeats


def test_decisions_replay_the_same_on_more_rounds():
    """A resumed run reaches the decisions the first one reached: a stopped arm keeps
    the look that stopped it."""
    rng = np.random.default_rng(15)
    good = rng.uniform(0.6, 0.95, 12)
    outcomes = simulate(rng, {"good": good, "poor": good - 0.5, "also": good}, 10)
    rule = SeparationRule(max_repeats=10)
    early = replay(outcomes, rule, 4)
    late = replay(outcomes, rule, 10)
    for arm, decision in early.decisions.items():
        assert late.decisions[arm] == decision


def test_runs_the_endpoint_failed_are_left_out_of_the_pairs():
    arm = np.array([[1.0], [np.nan], [0.0], [1.0]])  # four tasks, one repeat
    best = np.array([[1.0], [1.0], [np.nan], [0.0]])
    look = judge(arm, best, 0.05, 0.05)
    assert look.pairs == 2 and look.difference == 0.5


@pytest.mark.parametrize(
    ("both", "only_arm", "only_best", "neither"),
    [(0, 0, 0, 10), (10, 0, 0, 0), (30, 2, 9, 59), (5, 5, 5, 5), (0, 12, 0, 0)],
)
def test_the_paired_interval_holds_its_estimate_and_is_never_zero_wide(
    both, only_arm, only_best, neither
):
    n = both + only_arm + only_best + neither
    low, high = newcombe_interval(both, only_arm, only_best, neither, 1.96)
    estimate = (only_arm - only_best) / n
    assert -1 <= low <= estimate <= high <= 1
    assert high - low > 0.05


@pytest.mark.parametrize(("p_arm", "p_best"), [(0.5, 0.5), (0.3, 0.7), (0.9, 0.85)])
def test_the_paired_interval_covers_the_true_difference_about_95_percent(p_arm, p_best):
    rng = np.random.default_rng(16)
    covered = 0
    for _ in range(SIMULATIONS):
        shared = rng.random(60)  # one draw per pair: the two arms' runs are correlated
        arm, best = shared < p_arm, np.where(rng.random(60) < 0.5, shared, rng.random(60)) < p_best
        low, high = newcombe_interval(
            int((arm & best).sum()),
            int((arm & ~best).sum()),
            int((~arm & best).sum()),
            int((~arm & ~best).sum()),
            1.96,
        )
        covered += low <= p_arm - p_best <= high
    assert covered / SIMULATIONS >= 0.93
