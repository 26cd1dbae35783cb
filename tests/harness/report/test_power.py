"""The power of the paired test against its derivation, scipy and simulated runs of the test
(bench/simulated.py's two models of tasks), and the estimates a finished run gives."""

import itertools
import math
import zlib
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from bench.power_check import realised_kappa
from bench.simulated import paired_chances
from loopbench.harness.report.power import (
    NORMAL_FROM,
    Design,
    PowerError,
    critical_t,
    design_power,
    detectable_shift,
    difference_variance,
    paired_power,
    plan,
    smallest_detectable,
    tasks_needed,
)
from loopbench.harness.report.power_estimate import estimate, pooled_icc
from loopbench.harness.report.power_exact import _mid_p_rejects, one_run_power
from loopbench.harness.results.reading import read_records
from loopbench.harness.results.records import RunRecord
from loopbench.harness.stats.distributions import t_power, t_quantile
from loopbench.harness.stats.sign_flip import sign_flip_p

#: Simulated experiments a setting: a standard error of at most 0.008 on a power.
SIMS = 4000
#: How near the reported power must come to simulated runs of the test: 3 points, plus
#: three standard errors of the simulation (at most 0.024).
TOLERANCE = 0.03 + 3 * 0.5 / math.sqrt(SIMS)


def test_t_distributions_match_scipy():
    for df in (1, 2, 4, 11, 29, 199, 10_000, 10**6):
        for q in (0.9, 0.975, 0.9995):
            assert t_quantile(q, df) == pytest.approx(stats.t.ppf(q, df), rel=1e-12)
        for alpha, shift in itertools.product((0.05, 0.01), (0.0, 0.7, 2.8, 6.0)):
            critical = stats.t.ppf(1 - alpha / 2, df)
            expected = stats.nct.sf(critical, df, shift) + stats.nct.cdf(-critical, df, shift)
            assert t_power(shift, df, alpha) == pytest.approx(expected, abs=1e-12)


def test_t_distributions_match_their_closed_forms():
    """Without scipy: t(1) is Cauchy, t(2) has a closed quantile, and with no shift the t
    test rejects alpha of the time."""
    for q in (0.6, 0.9, 0.975, 0.9995):
        assert t_quantile(q, 1) == pytest.approx(math.tan(math.pi * (q - 0.5)), rel=1e-12)
        assert t_quantile(q, 2) == pytest.approx((2 * q - 1) / math.sqrt(2 * q * (1 - q)))
    for df, alpha in itertools.product((1, 3, 40, 5000), (0.05, 0.01)):
        assert t_power(0.0, df, alpha) == pytest.approx(alpha, rel=1e-9)
    assert t_power(3.0, 30, 0.05) == pytest.approx(t_power(-3.0, 30, 0.05), rel=1e-12)


def _task_types(p_a, p_b, icc, kappa):
    """Four kinds of task, equally likely, whose chances have the model's moments:
    means p_A, p_B, Var(P) = ICC v per arm, Corr(P_A, P_B) = kappa."""
    sd_a, sd_b = math.sqrt(icc * p_a * (1 - p_a)), math.sqrt(icc * p_b * (1 - p_b))
    rest = math.sqrt(1 - kappa**2)
    return [
        (p_a + sd_a * z1, p_b + sd_b * (kappa * z1 + rest * z2))
        for z1, z2 in itertools.product((-1, 1), repeat=2)
    ]


@pytest.mark.parametrize(
    "p_a, p_b, icc, kappa, repeats",
    [(0.56, 0.66, 0.3, 1.0, 3), (0.4, 0.6, 0.2, 0.5, 1), (0.7, 0.75, 0.1, 0.0, 10)],
)
def test_the_variance_of_a_task_difference_is_derived_right(p_a, p_b, icc, kappa, repeats):
    """Var(d_t) by enumerating every outcome of every kind of task equals the formula."""
    runs = np.arange(repeats + 1)
    second_moment = 0.0
    for chance_a, chance_b in _task_types(p_a, p_b, icc, kappa):
        assert 0 < chance_a < 1 and 0 < chance_b < 1
        a, b = stats.binom.pmf(runs, repeats, chance_a), stats.binom.pmf(runs, repeats, chance_b)
        d = (runs[None, :] - runs[:, None]) / repeats  # rows: A's successes; columns: B's
        second_moment += float((np.outer(a, b) * d**2).sum()) / 4
    exact = second_moment - (p_b - p_a) ** 2
    assert difference_variance(p_a, p_b, repeats, icc, kappa) == pytest.approx(exact, rel=1e-12)


def simulated(model, design, tasks, repeats, sims, seed):
    """The paired test's rejection rate over simulated experiments (bench/simulated.py)."""
    rng = np.random.default_rng(seed)
    chance = paired_chances(
        model, design.baseline, design.arm_b, design.icc, design.arm_correlation,
        (sims, tasks), rng,
    )  # fmt: skip
    a, b = (rng.binomial(repeats, c) for c in chance)
    runs = np.full(tasks, repeats)
    return np.mean([sign_flip_p(y, x, runs) < design.alpha for x, y in zip(a, b, strict=True)])


#: Designs from 20 tasks up, in each of the three ways power is found: one run a task
#: (exact), repeats with fewer than NORMAL_FROM tasks (simulated), and normal theory.
SETTINGS = [
    (Design(0.8, 0.1, 1, 0.6, 0.9), 20),
    (Design(0.56, 0.15, 1, 0.3, 0.5), 60),
    (Design(0.3, 0.1, 1, 0.1, 1.0), 300),
    (Design(0.8, 0.1, 10, 0.6, 0.9), 20),  # normal theory says 0.69: simulated 0.88
    (Design(0.56, 0.2, 5, 0.6, 0.8), 20),
    (Design(0.8, 0.1, 5, 0.45, 0.8), 30),
    (Design(0.3, 0.1, 3, 0.3, 0.5), 50),
    (Design(0.56, 0.1, 10, 0.3, 0.8), 80),
    (Design(0.56, 0.05, 3, 0.3, 0.8), 150),
    (Design(0.8, 0.05, 10, 0.6, 0.8), 200),
    (Design(0.3, 0.05, 5, 0.15, 0.5), 400),
]


@pytest.mark.parametrize(("design", "tasks"), SETTINGS, ids=str)
def test_the_reported_power_is_the_simulated_power_of_the_test(design, tasks):
    """Against runs simulated by the bench's own model (another implementation, other
    random numbers); with one run a task or many tasks also against the logit model, where
    the answer does not depend on how difficulty is spread."""
    reported = design_power(design, tasks)
    models = ["comonotone"] if reported.method == "simulated" else ["comonotone", "logit"]
    for model in models:
        kappa = realised_kappa(
            model, design.baseline, design.arm_b, design.icc, design.arm_correlation
        )
        seed = zlib.crc32(f"{model} {design} {tasks}".encode())
        truth = simulated(model, Design(design.baseline, design.delta, design.repeats,
                          design.icc, kappa), tasks, design.repeats, SIMS, seed)  # fmt: skip
        assert abs(reported.value - truth) <= TOLERANCE, (model, reported, truth)


def test_the_three_ways_are_used_where_each_holds():
    design = Design(0.56, 0.1, 3, 0.3, 0.5)
    assert design_power(design, 40, 1).method == "exact"
    assert design_power(design, NORMAL_FROM - 1).method == "simulated"
    assert design_power(design, NORMAL_FROM).method == "normal"
    assert design_power(design, 40, math.inf).method == "normal"


def test_one_run_power_counts_every_outcome_exactly():
    """Six tasks: every way the six pairs can fall, weighted, against McNemar's mid-p."""
    chances = (0.5, 0.7, 0.3, 0.6)  # p_A, p_B, ICC, kappa
    design = Design(0.5, 0.2, 1, 0.3, 0.6)
    both = 0.5 * 0.7 + 0.6 * 0.3 * math.sqrt(0.25 * 0.21)
    cells = {"a": 0.5 - both, "b": 0.7 - both, "same": 1 - (0.5 - both) - (0.7 - both)}
    power = 0.0
    for pairs in itertools.product(cells, repeat=6):
        weight = math.prod(cells[c] for c in pairs)
        a, b = pairs.count("a"), pairs.count("b")
        after = [1] * b + [0] * a
        before = [0] * b + [1] * a
        power += weight * (sign_flip_p(after, before, [1] * len(after)) < 0.05)
    assert one_run_power(6, chances, 0.05) == pytest.approx(power)
    assert design_power(design, 6).value == pytest.approx(power)


def test_the_mid_p_rejections_are_mcnemars():
    for discordant in (1, 5, 6, 17, 40):
        fair = stats.binom.pmf(np.arange(discordant + 1), discordant, 0.5)
        distance = np.abs(2 * np.arange(discordant + 1) - discordant)
        mid = [fair[distance > x].sum() + fair[distance == x].sum() / 2 for x in distance]
        assert list(_mid_p_rejects(discordant, 0.05)) == [m < 0.05 for m in mid]


def test_the_critical_t_is_where_sign_flips_reject_in_normal_form():
    """|S| > z sqrt(sum d^2) and |t| > critical_t are one condition."""
    rng = np.random.default_rng(2)
    for tasks in (10, 40, 200):
        d = rng.normal(0.2, 1, (5000, tasks))
        s = np.abs(d.sum(1)) / np.sqrt((d * d).sum(1))
        t = np.abs(d.mean(1)) / (d.std(1, ddof=1) / math.sqrt(tasks))
        z = stats.norm.ppf(0.975)
        assert ((s > z) == (t > critical_t(tasks, 0.05))).mean() > 0.999
    assert math.isinf(critical_t(3, 0.05))  # three tasks agreeing are not enough


def test_tasks_needed_is_the_fewest_with_the_power():
    for design in (
        Design(0.56, 0.1, 3, 0.3, 0.5),
        Design(0.3, 0.3, 1, 0.1),
        Design(0.5, -0.1, 5, 0.2),
    ):
        needed = tasks_needed(design)
        assert needed is not None
        assert design_power(design, needed).value >= 0.8
        assert needed == 2 or design_power(design, needed - 1).value < 0.8
    assert tasks_needed(Design(0.5, 1e-6, 3, 0.3)) is None  # past MAX_TASKS


def test_power_rises_with_tasks_and_repeats_and_falls_with_an_unshared_icc():
    design = Design(0.56, 0.1, 3, 0.3, arm_correlation=0.5)
    powers = [paired_power(n, design.sd(), design.delta, design.alpha) for n in range(5, 400)]
    assert all(a < b for a, b in itertools.pairwise(powers))
    assert powers[0] < 0.1 and powers[-1] > 0.9
    needed = [row.tasks_needed for row in sorted(plan(design), key=lambda r: r.repeats)]
    assert all(a > b for a, b in itertools.pairwise(needed))
    by_icc = [tasks_needed(Design(0.56, 0.1, 3, icc, 0.5)) for icc in (0, 0.2, 0.4, 0.6)]
    assert all(a < b for a, b in itertools.pairwise(by_icc))


def test_the_table_shows_the_repeats_asked_and_the_floor():
    rows = plan(Design(0.56, 0.1, 4, 0.3, arm_correlation=0.0), tasks=40)
    assert [r.repeats for r in rows] == [4, 1, 3, 5, 10, math.inf]
    floor = rows[-1]
    assert floor.sd**2 == pytest.approx(0.3 * (0.56 * 0.44 + 0.66 * 0.34))
    assert all(r.power is not None and 0 < r.power < 1 for r in rows)


def test_the_smallest_detectable_difference_has_the_power():
    design = Design(0.56, 0.0, 3, 0.3, arm_correlation=0.8)
    rise = smallest_detectable(design, 160)
    assert rise is not None
    at = Design(0.56, rise, 3, 0.3, arm_correlation=0.8)
    assert design_power(at, 160).value == pytest.approx(0.8, abs=1e-5)
    few = smallest_detectable(design, 40)  # simulated: to the step of its search
    assert few is not None and few > rise
    assert design_power(Design(0.56, few, 3, 0.3, 0.8), 40).value >= 0.8
    assert design_power(Design(0.56, few - 0.002, 3, 0.3, 0.8), 40).value < 0.8
    assert smallest_detectable(Design(0.9, 0.0, 1, 0.5, 0.0), 3) is None  # not even 100%
    shift = detectable_shift(12, 0.05, 0.8)
    assert paired_power(12, 1.0, shift / math.sqrt(12), 0.05) == pytest.approx(0.8, abs=1e-6)


@pytest.mark.parametrize(
    "design, words",
    [
        (Design(0.95, 0.10, 3, 0.3), "arm B at 1.05"),
        (Design(0.56, 0.0, 3, 0.3), "--delta 0"),
        (Design(0.0, 0.10, 3, 0.3), "outside (0, 1)"),
        (Design(0.56, 0.10, 3, 1.5), "ICC of 1.5"),
        (Design(0.56, 0.10, 3, 0.3, alpha=0.2, power=0.1), "not above alpha"),
    ],
)
def test_a_design_the_model_cannot_take_is_refused(design, words):
    with pytest.raises(PowerError, match=words.replace("(", r"\(").replace(")", r"\)")):
        plan(design)


def test_pooled_icc_on_hand_examples():
    assert pooled_icc([[[1, 1, 1], [0, 0, 0]], [[1, 1], [0, 0]]]) == pytest.approx(1.0)
    assert pooled_icc([[[1, 0], [1, 0], [0, 1]]]) == 0.0  # truncated
    assert pooled_icc([[[1], [0]], [[0], [1]]]) is None  # nothing ran twice
    # One balanced arm, by the textbook: (MSB - MSW) / (MSB + (R - 1) MSW).
    groups = [[1, 1, 0], [1, 0, 0], [0, 0, 0], [1, 1, 1]]
    y = np.array(groups, dtype=float)
    msb = 3 * ((y.mean(axis=1) - y.mean()) ** 2).sum() / 3
    msw = ((y - y.mean(axis=1, keepdims=True)) ** 2).sum() / 8
    assert pooled_icc([groups]) == pytest.approx((msb - msw) / (msb + 2 * msw))


def write_results(folder: Path, arms: dict[str, float], tasks, repeats, icc, shared, seed):
    """A results folder of simulated runs: a task difficulty shared by the arms (each arm
    shifted by its accuracy), or one drawn afresh per arm; Beta with the given ICC."""
    rng = np.random.default_rng(seed)
    low = min(arms.values())
    scale = 1 - (max(arms.values()) - low)
    mean = low / scale
    variance = icc * np.mean([p * (1 - p) for p in arms.values()]) / scale**2

    def difficulty():
        if variance == 0:
            return np.full(tasks, low)
        size = mean * (1 - mean) / variance - 1
        return rng.beta(mean * size, (1 - mean) * size, tasks) * scale

    common = difficulty()
    lines = []
    for arm, accuracy in arms.items():
        chances = (common if shared else difficulty()) + accuracy - low
        for task, chance in enumerate(chances):
            for repeat in range(repeats):
                record = RunRecord(
                    arm=arm,
                    task_id=f"t{task}",
                    repeat=repeat,
                    status="answered",
                    correct=bool(rng.random() < chance),
                    task_set="s",
                )
                lines.append(record.model_dump_json())
    folder.mkdir()
    (folder / "runs.jsonl").write_text("\n".join(lines) + "\n")
    return folder


@pytest.mark.parametrize("shared", [True, False])
def test_estimates_from_a_run_recover_the_icc_and_the_arm_correlation(tmp_path, shared):
    arms = {"cot": 0.45, "react": 0.55, "reflexion": 0.6}
    folder = write_results(tmp_path / "r", arms, 150, 5, 0.3, shared, seed=4)
    found = estimate(read_records(folder), 0.05, 0.8)
    assert (found.arms, found.tasks, found.repeats, found.best) == (3, 150, 5, "reflexion")
    assert found.baseline == pytest.approx(np.mean(list(arms.values())), abs=0.03)
    assert found.icc == pytest.approx(0.3, abs=0.06)
    assert found.arm_correlation is not None
    assert found.arm_correlation >= 0.8 if shared else found.arm_correlation <= 0.2
    for pair in found.pairs:
        assert pair.tasks == 150
        assert pair.difference == pytest.approx(arms[pair.arm] - 0.6, abs=0.05)
        assert pair.detectable == pytest.approx(
            detectable_shift(150, 0.05, 0.8) * pair.sd / math.sqrt(150)
        )
        # At that difference the paired test on these tasks has the power asked for.
        assert paired_power(150, pair.sd, pair.detectable, 0.05) == pytest.approx(0.8, abs=1e-6)


def test_an_icc_estimate_has_the_spread_the_truth_allows():
    """Across simulated runs the estimator centres on the true ICC (little bias)."""
    estimates = []
    for seed in range(20):
        rng = np.random.default_rng(seed)
        chances = rng.beta(0.5 * 7 / 3, 0.5 * 7 / 3, 60)  # mean 0.5, ICC 0.3
        runs = rng.random((60, 4)) < chances[:, None]
        estimates.append(pooled_icc([runs.astype(float).tolist()]))
    assert np.mean(estimates) == pytest.approx(0.3, abs=0.03)


def test_a_run_of_one_arm_or_one_task_is_refused(tmp_path):
    one_arm = write_results(tmp_path / "a", {"cot": 0.5}, 10, 2, 0.2, True, seed=0)
    with pytest.raises(PowerError, match="1 arm"):
        estimate(read_records(one_arm), 0.05, 0.8)
    one_task = write_results(tmp_path / "t", {"cot": 0.5, "react": 0.6}, 1, 3, 0.2, True, 0)
    with pytest.raises(PowerError, match="1 task"):
        estimate(read_records(one_task), 0.05, 0.8)
