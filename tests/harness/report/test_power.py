"""The power formula against its derivation, scipy and simulated runs (bench/power_check.py's
two generating models), and the estimates a finished run gives."""

import itertools
import math
import zlib
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from bench.power_check import MODELS, Setting, t_test_rejects, task_differences
from harness.records import RunRecord
from harness.report.power import (
    Design,
    PowerError,
    detectable_shift,
    difference_variance,
    paired_power,
    plan,
    reliable_from,
    smallest_detectable,
    t_power,
    t_quantile,
    tasks_needed,
)
from harness.report.power_estimate import estimate, pooled_icc
from harness.store import read_records

#: Simulated experiments a setting: a standard error of at most 0.004 on a power.
SIMS = 16_000


def test_t_distributions_match_scipy():
    for df in (1, 2, 4, 11, 29, 199, 10_000, 10**6):
        for q in (0.9, 0.975, 0.9995):
            assert t_quantile(q, df) == pytest.approx(stats.t.ppf(q, df), rel=1e-7)
        for alpha, shift in itertools.product((0.05, 0.01), (0.0, 0.7, 2.8, 6.0)):
            critical = stats.t.ppf(1 - alpha / 2, df)
            expected = stats.nct.sf(critical, df, shift) + stats.nct.cdf(-critical, df, shift)
            assert t_power(shift, df, alpha) == pytest.approx(expected, abs=1e-6)


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


def _region_settings(count, seed):
    """Designs across the asked ranges where the formula claims to hold (at least
    max(10, 500 ICC^2) tasks), feasible in both models, with an informative power."""
    rng = np.random.default_rng(seed)
    found = []
    while len(found) < count:
        s = Setting(
            int(rng.choice([10, 15, 20, 30, 50, 100, 200])),
            int(rng.choice([1, 2, 3, 5, 10])),
            round(float(rng.uniform(0, 0.6)), 2),
            round(float(rng.uniform(0.3, 0.8)), 2),
            round(float(rng.uniform(0.05, 0.3)), 2),
        )
        if (
            s.tasks >= reliable_from(s.icc)
            and all(s.feasible(m) for m in MODELS)
            and 0.15 <= s.formula() <= 0.95
        ):
            found.append(s)
    return found


REGION = _region_settings(18, seed=3)
CORNERS = [  # the largest gaps bench/power_check.py finds inside the region
    Setting(10, 2, 0.0, 0.56, 0.3),
    Setting(20, 1, 0.15, 0.56, 0.3),  # logit: about +0.039, the largest
    Setting(20, 10, 0.15, 0.8, 0.1),  # beta: about -0.035
    Setting(50, 3, 0.3, 0.8, 0.1),
    Setting(200, 1, 0.6, 0.8, 0.05),
    Setting(200, 3, 0.6, 0.56, 0.05),
]
#: The formula's largest bias inside the region is about 0.04 (bench/power_check.py at
#: 16,000 experiments: 0.043); SIMS adds a standard error of at most 0.004.
TOLERANCE = 0.045


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("s", REGION + CORNERS, ids=str)
def test_the_formula_matches_simulated_power(model, s):
    if not s.feasible(model):
        pytest.skip(f"{model} cannot give these accuracies and ICC")
    rng = np.random.default_rng(zlib.crc32(f"{model} {s}".encode()))
    simulated = t_test_rejects(task_differences(model, s, SIMS, rng), s.alpha).mean()
    assert abs(s.formula() - simulated) <= TOLERANCE


def test_below_the_region_accuracies_and_icc_do_not_settle_power():
    """Why the formula claims nothing below max(10, 500 ICC^2) tasks: two models alike in
    accuracies and ICC give powers far apart, so no formula of those can match both."""
    s = Setting(10, 10, 0.6, 0.8, 0.1)
    assert s.tasks < reliable_from(s.icc)
    rng = np.random.default_rng(0)
    beta, logit = (
        t_test_rejects(task_differences(m, s, 4000, rng), s.alpha).mean() for m in MODELS
    )
    assert beta - logit > 0.4


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize(
    "design",
    [Design(0.56, 0.10, 3, 0.3), Design(0.3, 0.15, 1, 0.1), Design(0.7, 0.1, 10, 0.2)],
    ids=str,
)
def test_the_tasks_needed_reach_the_power_in_simulation(model, design):
    needed = tasks_needed(design.sd(), design.delta, design.alpha, design.power)
    assert needed is not None and needed >= reliable_from(design.icc)
    rng = np.random.default_rng(1)
    for tasks, lowest, highest in ((needed, 0.77, 0.84), (needed * 2 // 3, 0.5, 0.76)):
        s = Setting(tasks, design.repeats, design.icc, design.baseline, design.delta)
        simulated = t_test_rejects(task_differences(model, s, SIMS // 2, rng), s.alpha).mean()
        assert lowest <= simulated <= highest


def test_tasks_needed_is_the_fewest_with_the_power():
    for sd, delta in ((0.33, 0.1), (0.6, 0.05), (0.1, 0.3), (0.5, -0.1)):
        needed = tasks_needed(sd, delta, 0.05, 0.8)
        assert needed is not None
        assert paired_power(needed, sd, delta, 0.05) >= 0.8
        assert needed == 2 or paired_power(needed - 1, sd, delta, 0.05) < 0.8
    assert tasks_needed(0.5, 1e-6, 0.05, 0.8) is None  # past MAX_TASKS


def test_power_rises_with_tasks_and_repeats_and_falls_with_an_unshared_icc():
    design = Design(0.56, 0.1, 3, 0.3, arm_correlation=0.5)
    powers = [paired_power(n, design.sd(), design.delta, design.alpha) for n in range(2, 400)]
    assert all(a < b for a, b in itertools.pairwise(powers))
    assert powers[0] < 0.06 and powers[-1] > 0.9
    needed = [row.tasks_needed for row in sorted(plan(design), key=lambda r: r.repeats)]
    assert all(a > b for a, b in itertools.pairwise(needed))
    by_icc = [
        tasks_needed(Design(0.56, 0.1, 3, icc, 0.5).sd(), 0.1, 0.05, 0.8)
        for icc in (0, 0.2, 0.4, 0.6)
    ]
    assert all(a < b for a, b in itertools.pairwise(by_icc))


def test_the_table_shows_the_repeats_asked_and_the_floor():
    rows = plan(Design(0.56, 0.1, 4, 0.3, arm_correlation=0.0), tasks=40)
    assert [r.repeats for r in rows] == [4, 1, 3, 5, 10, math.inf]
    floor = rows[-1]
    assert floor.sd**2 == pytest.approx(0.3 * (0.56 * 0.44 + 0.66 * 0.34))
    assert all(r.power is not None and 0 < r.power < 1 for r in rows)


def test_the_smallest_detectable_difference_has_the_power():
    design = Design(0.56, 0.0, 3, 0.3, arm_correlation=0.8)
    rise = smallest_detectable(design, 60)
    assert rise is not None
    at = Design(0.56, rise, 3, 0.3, arm_correlation=0.8)
    assert paired_power(60, at.sd(), rise, 0.05) == pytest.approx(0.8, abs=1e-5)
    assert smallest_detectable(Design(0.9, 0.0, 1, 0.5, 0.0), 3) is None  # not even 100%
    shift = detectable_shift(12, 0.05, 0.8)
    assert t_power(shift, 11, 0.05) == pytest.approx(0.8, abs=1e-6)


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
