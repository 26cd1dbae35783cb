"""The group-sequential boundaries of --until-separated: the alpha spent over the rounds sums
to alpha, the bounds hold it for identical arms, futility stops identical arms early, and a
real gap is still found."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from loopbench.harness.stats.boundaries import (
    FAR_GAP,
    FAR_LOG_RATIO,
    FUTILITY_OFFSET,
    FUTILITY_SLOPE,
    SPENDINGS,
    conditional_power,
    efficacy_bounds,
    futility_bound,
    nominal_alpha,
    spent,
)
from loopbench.harness.stats.separation import (
    FUTILITIES,
    SeparationRule,
    StoppedRun,
    judge_look,
    replay,
)
from loopbench.harness.stats.sequential_design import expected, fewest_rounds


@pytest.mark.parametrize("spending", SPENDINGS)
def test_the_alpha_spent_over_the_rounds_sums_to_alpha(spending):
    fractions = [k / 10 for k in range(11)]
    steps = [
        spent(0.05, b, spending) - spent(0.05, a, spending)
        for a, b in itertools.pairwise(fractions)
    ]
    assert all(step >= 0 for step in steps)
    assert sum(steps) == pytest.approx(0.05, abs=1e-12)


@pytest.mark.parametrize("spending", SPENDINGS)
@pytest.mark.parametrize("looks", [1, 4, 10])
def test_the_bounds_cross_for_identical_arms_alpha_of_the_time(spending, looks):
    """Brownian paths at the looks: the share crossing any look's bound is alpha."""
    bounds = np.array(efficacy_bounds(0.05, looks, spending))
    rng = np.random.default_rng(1)
    motion = np.cumsum(rng.standard_normal((200_000, looks)), axis=1)
    z = motion / np.sqrt(np.arange(1, looks + 1))
    crossed = (np.abs(z) >= bounds).any(axis=1).mean()
    assert crossed == pytest.approx(0.05, abs=0.003)


def test_pocock_spends_early_and_obrien_fleming_late():
    pocock, late = efficacy_bounds(0.05, 5, "pocock"), efficacy_bounds(0.05, 5, "obrien-fleming")
    assert pocock[0] < 2.5 < late[0]  # known values: 2.44 and 4.38
    assert late[-1] < pocock[-1]
    assert nominal_alpha(pocock[0]) == pytest.approx(
        2 * 0.05 * math.log(1 + (math.e - 1) / 5) / 2, rel=0.02
    )


def test_conditional_power_falls_as_the_gap_seen_shrinks():
    strong = conditional_power(2.0, 0.5, 2.0, 2.8)
    none = conditional_power(0.0, 0.5, 2.0, 2.8)
    assert strong > none > conditional_power(0.0, 0.9, 2.0, 2.8)
    assert conditional_power(2.5, 1.0, 2.0, 0.0) == 1.0


def simulate(rng, chances, repeats):
    return {
        arm: (rng.random((len(p), repeats)) < p[:, None]).astype(float)
        for arm, p in chances.items()
    }


@pytest.mark.parametrize("futility", FUTILITIES)
def test_futility_stops_identical_arms_early(futility):
    """Over a grid of task counts, identical arms stop well before the last round, most of
    them for futility; without the futility check they run to it."""
    rng = np.random.default_rng(21)
    for tasks in (50, 200):
        rule = SeparationRule(0.05, 0.05, 10, futility_boundary=futility)
        rounds, futile = [], 0
        for _ in range(60):
            p = rng.beta(2, 2, tasks)
            state = replay(simulate(rng, {"a": p, "b": p}, 10), rule, 10)
            rounds.append(state.rounds)
            futile += any(d.look.verdict == "futile" for d in state.decisions.values())
        assert np.mean(rounds) < 0.8 * rule.max_repeats
        assert futile / 60 >= 0.5
    never = SeparationRule(alpha=0.05, margin=0.05, max_repeats=10, futility=0.0)
    p = rng.beta(2, 2, 50)
    assert replay(simulate(rng, {"a": p, "b": p}, 10), never, 10).rounds >= 9


def test_a_real_gap_is_still_found_and_early():
    rng = np.random.default_rng(22)
    rule = SeparationRule(alpha=0.05, margin=0.05, max_repeats=10)
    found, rounds = 0, []
    for _ in range(60):
        good = rng.beta(2, 2, 200)
        state = replay(
            simulate(rng, {"good": good, "poor": np.clip(good - 0.1, 0, 1)}, 10), rule, 10
        )
        found += (
            state.decisions.get("poor") is not None
            and state.decisions["poor"].look.verdict == "worse"
        )
        rounds.append(state.rounds)
    assert found / 60 >= 0.95
    assert np.mean(rounds) < 4


def test_the_planner_agrees_with_the_rule_it_plans():
    """The canonical normal paths ``power`` plans with give the rule's power and rounds
    within simulation error of replaying the rule on simulated runs."""
    rule = SeparationRule(alpha=0.05, margin=0.05, max_repeats=10)
    planned = expected(rule, [200 * k / 0.4 for k in range(1, 11)], 0.1, paths=4000)
    rng = np.random.default_rng(23)
    rounds = []
    for _ in range(60):
        good = rng.beta(2, 2, 200)
        rounds.append(
            replay(simulate(rng, {"g": good, "p": np.clip(good - 0.1, 0, 1)}, 10), rule, 10).rounds
        )
    assert planned.declared > 0.99
    assert abs(planned.rounds - np.mean(rounds)) < 0.5


def test_the_likelihood_futility_bound_is_wald_s_acceptance_boundary_both_ways():
    """At the bound, no difference is exp(2 slope offset) times likelier than a gap of
    2 slope margins (the normal likelihood of the z seen, scipy's density as the oracle)."""
    slope_gap = 2 * FUTILITY_SLOPE
    for eta in (1.5, 2.5, 4.0):
        z = futility_bound(eta)
        ratio = stats.norm.pdf(z) / stats.norm.pdf(z - slope_gap * eta)
        assert ratio == pytest.approx(math.exp(2 * FUTILITY_SLOPE * FUTILITY_OFFSET))
    assert futility_bound(1.0) < 0  # early on nothing stops


def test_the_two_gap_bound_keeps_no_difference_far_likelier_than_twice_the_margin():
    """At the two-gap bound no difference is at least exp(FAR_LOG_RATIO) times likelier than
    a gap of twice the margin and exp(2 slope offset) times likelier than one of 2 slope
    margins, with equality for one of them (scipy's density as the oracle)."""
    for eta in (1.5, 2.0, 2.5, 3.0, 4.0, 6.0):
        z = futility_bound(eta, far=True)
        far = stats.norm.logpdf(z) - stats.norm.logpdf(z - FAR_GAP * eta)
        near = stats.norm.logpdf(z) - stats.norm.logpdf(z - 2 * FUTILITY_SLOPE * eta)
        assert far >= FAR_LOG_RATIO - 1e-9
        assert near >= 2 * FUTILITY_SLOPE * FUTILITY_OFFSET - 1e-9
        assert min(far - FAR_LOG_RATIO, near - 2 * FUTILITY_SLOPE * FUTILITY_OFFSET) < 1e-9
    # Where the one-gap bound first rises above zero, the two-gap one waits.
    assert futility_bound(2.0) > 0 > futility_bound(2.0, far=True)


def crafted_look() -> tuple[np.ndarray, np.ndarray]:
    """Four rounds on 200 tasks: +1 point after 800 pairs, z 0.46, eta 2.29, between the
    two-gap bound (0.11) and the one-gap one (0.68), early enough (4 of 40 rounds) for
    the conditional power to stay out of it."""
    up, down, even = [1, 1, 0, 0], [0, 0, 0, 0], [1, 0, 1, 0]
    arm = [up] * 40 + [down] * 36 + [even] * 124
    best = [down] * 40 + [up] * 36 + [even] * 124
    return np.array(arm, dtype=float), np.array(best, dtype=float)


def test_a_folder_run_with_the_one_gap_likelihood_boundary_replays_by_it(tmp_path):
    (tmp_path / "separation.json").write_text(
        '{"rule": {"alpha": 0.05, "margin": 0.05, "max_repeats": 40, "boundary": "pocock",'
        ' "futility": 0.2, "futility_boundary": "likelihood"}, "arms": ["a", "b"],'
        ' "tasks": ["t"]}'
    )
    loaded = StoppedRun.load(tmp_path)
    assert loaded is not None and loaded.rule.futility_boundary == "likelihood"
    arm, best = crafted_look()
    assert judge_look(arm, best, loaded.rule, 2).verdict == "futile"
    now = judge_look(arm, best, SeparationRule(0.05, 0.05, 40), 2)
    assert now.verdict == "undecided" and now.futility_bound == pytest.approx(0.0025)


def test_likelihood_futility_stops_identical_arms_sooner_at_the_same_power():
    """Planned for the same power at the margin, the likelihood boundary spends fewer rounds
    on identical arms than conditional power did, and no more at the margin."""
    tasks, information = 200, [200 * k / 0.4 for k in range(1, 40)]
    figures = {}
    for futility in FUTILITIES:
        base = SeparationRule(0.05, 0.05, 1, futility_boundary=futility)
        found = fewest_rounds(base, information, 0.05, 0.85, tasks)
        assert found is not None
        rule, at_margin = found
        figures[futility] = (at_margin.rounds, expected(rule, information, 0.0).rounds)
    likelihood, conditional = figures["likelihood"], figures["conditional-power"]
    assert likelihood[1] < 0.8 * conditional[1]
    assert likelihood[0] <= conditional[0] + 0.2
    # Sparing twice the margin gives back most of it (6.07 rounds against 6.55 and 4.86).
    two_gaps = figures["likelihood-two-gaps"]
    assert likelihood[1] < two_gaps[1] < conditional[1]
    assert two_gaps[0] <= conditional[0] + 0.2


def test_likelihood_futility_stops_identical_arms_long_before_many_rounds_end():
    """With rounds to spare (where the conditional power of a gap stays high), identical arms
    stop on the likelihood in the first quarter of them (before an interval fits within the
    margin), each decision saying the gap it was within."""
    rng = np.random.default_rng(24)
    rule = SeparationRule(0.05, 0.05, 24)
    rounds, on_likelihood = [], 0
    for _ in range(30):
        p = rng.beta(2, 2, 200)
        state = replay(simulate(rng, {"a": p, "b": p}, 24), rule, 24)
        rounds.append(state.rounds)
        for decision in state.decisions.values():
            if decision.look.verdict == "futile" and decision.look.conditional_power is None:
                on_likelihood += 1
                assert abs(decision.look.difference) < decision.look.futility_bound
    assert on_likelihood >= 25
    assert np.mean(rounds) < 0.3 * rule.max_repeats


def test_a_folder_run_before_likelihood_futility_replays_by_conditional_power(tmp_path):
    (tmp_path / "separation.json").write_text(
        '{"rule": {"alpha": 0.05, "margin": 0.05, "max_repeats": 10, "boundary": "pocock",'
        ' "futility": 0.2}, "arms": ["a", "b"], "tasks": ["t"]}'
    )
    loaded = StoppedRun.load(tmp_path)
    assert loaded is not None and loaded.rule.futility_boundary == "conditional-power"
    assert SeparationRule().futility_boundary == "likelihood-two-gaps"


def test_a_folder_run_before_the_boundaries_replays_by_its_own_rule(tmp_path):
    (tmp_path / "separation.json").write_text(
        '{"rule": {"alpha": 0.05, "margin": 0.05, "max_repeats": 10},'
        ' "arms": ["a", "b"], "tasks": ["t"]}'
    )
    loaded = StoppedRun.load(tmp_path)
    assert loaded is not None
    assert loaded.rule.boundary == "bonferroni" and loaded.rule.futility == 0.0
    assert loaded.rule.look_alpha(2) == pytest.approx(0.005)


def test_a_boundary_loopbench_does_not_know_is_refused(tmp_path):
    (tmp_path / "separation.json").write_text(
        '{"rule": {"alpha": 0.05, "margin": 0.05, "max_repeats": 10, "boundary": "haybittle"},'
        ' "arms": ["a", "b"], "tasks": ["t"]}'
    )
    with pytest.raises(ValueError, match="haybittle"):
        StoppedRun.load(tmp_path)
