import itertools
import json
import random
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from loopbench.harness.cli.main import main
from loopbench.harness.report.compare_text import FLIPS_LISTED, FLIPS_NAMED, flipped
from loopbench.harness.stats.intervals import paired_difference, wilson_interval
from loopbench.harness.stats.sign_flip import EXACT_TASKS, sign_flip_p

from .test_table import record

TASKS = [f"t{i}" for i in range(12)]


def before_keys(folder, arm):
    rows = [json.loads(line) for line in Path(folder, "runs.jsonl").read_text().splitlines()]
    return [(r["task_id"], r["repeat"], r["correct"]) for r in rows if r["arm"] == arm]


def write(folder, arm_rates, seed, task_set="s", flip=None, flip_arm=None):
    """A results folder: per arm, each (task, repeat) correct with the given chance."""
    rng = random.Random(seed)
    folder.mkdir()
    lines = []
    for arm, rate in arm_rates.items():
        for task in TASKS:
            for repeat in range(3):
                correct = rng.random() < rate
                if flip and (task, repeat) in flip and flip_arm in (None, arm):
                    correct = not correct
                r = record(arm=arm, task=task, repeat=repeat, correct=correct)
                lines.append(r.model_copy(update={"task_set": task_set}).model_dump_json())
    (folder / "runs.jsonl").write_text("\n".join(lines) + "\n")
    return str(folder)


def run_compare(*args):
    return CliRunner().invoke(main, ["compare", *args])


def mcnemar_mid_p(b, c):
    """McNemar's mid-p from statsmodels' exact p: the exact p less half the probability of
    the tables as extreme as the observed one (counted whole in the exact p)."""
    if b + c == 0:
        return 1.0
    k, n = min(b, c), b + c
    own = stats.binom.pmf(k, n, 0.5) * (1 if b == c else 2)
    return mcnemar([[5, b], [c, 7]], exact=True).pvalue - own / 2


def test_with_one_repeat_the_paired_test_is_mcnemars_mid_p():
    for b, c in [(0, 0), (1, 0), (3, 9), (10, 10), (2, 14), (25, 11)]:
        # b tasks right before and wrong after, c the reverse, 9 tasks alike both times.
        after = [0] * b + [1] * c + [1] * 9
        before = [1] * b + [0] * c + [1] * 9
        assert sign_flip_p(after, before, [1] * len(after)) == pytest.approx(
            mcnemar_mid_p(b, c), rel=1e-12
        )


def test_wilson_matches_statsmodels():
    for k, n in [(0, 12), (7, 10), (36, 36), (20, 36)]:
        assert wilson_interval(k, n) == pytest.approx(
            proportion_confint(k, n, alpha=0.05, method="wilson"), abs=1e-9
        )


def test_a_loss_on_one_task_is_one_task_of_evidence_however_many_repeats():
    tasks = [t for t in TASKS for _ in range(3)]
    before = [True] * 36
    after = [t != "t0" for t in tasks]  # one task lost in all three repeats
    result = paired_difference(tasks, before, after, ([1.0] * 36, [1.0] * 36))
    assert result.difference == pytest.approx(-3 / 36) and result.tasks == 12
    # One task differs: its sign is a coin toss under no difference, so the mid-p is 1/2
    # (McNemar on the three runs as if independent said 0.25).
    assert result.p_value == pytest.approx(0.5) == result.p_value_by_task
    assert result.ci_low < result.difference < 0 < result.ci_high
    assert result.right_to_wrong == ["t0", "t0", "t0"]
    assert result.cost_per_correct_after == pytest.approx(36 / 33)


def test_a_thirty_point_loss_is_a_regression(tmp_path):
    before = write(tmp_path / "b", {"react": 0.8, "cot": 0.5}, seed=1)
    right = [key for key in before_keys(before, "react") if key[2]][:11]  # 11 of 36: 30 points
    after = write(
        tmp_path / "a",
        {"react": 0.8, "cot": 0.5},
        seed=1,
        flip={(t, r) for t, r, _ in right},
        flip_arm="react",
    )
    result = run_compare(before, after, "--format", "json")
    assert result.exit_code == 1, result.output
    arms = {a["arm"]: a for a in json.loads(result.stdout)["arms"]}
    assert arms["react"]["regressed"] and not arms["cot"]["regressed"]
    assert set(arms["react"]) >= {
        "arm",
        "n_pairs",
        "accuracy_before",
        "accuracy_after",
        "difference",
        "ci_low",
        "ci_high",
        "p_value",
        "cost_per_correct_before",
        "cost_per_correct_after",
        "regressed",
    }
    assert arms["react"]["n_pairs"] == 36
    assert arms["react"]["difference"] == pytest.approx(-11 / 36)
    assert "REGRESSED: react" in result.stderr


def test_noise_alone_is_not_a_regression(tmp_path):
    before = write(tmp_path / "b", {"react": 0.6}, seed=3)
    flips = {("t1", 0), ("t4", 2), ("t7", 1), ("t9", 0)}  # two each way, or near it
    after = write(tmp_path / "a", {"react": 0.6}, seed=3, flip=flips)
    result = run_compare(before, after, "--format", "md")
    assert result.exit_code == 0, result.output
    assert "| react | 36 |" in result.output and "ok |" in result.output


def test_mismatched_task_sets_and_missing_files_exit_2(tmp_path):
    before = write(tmp_path / "b", {"react": 0.6}, seed=3)
    other = write(tmp_path / "o", {"react": 0.6}, seed=3, task_set="other")
    assert run_compare(before, other).exit_code == 2
    assert run_compare(before, str(tmp_path / "nope")).exit_code == 2
    assert run_compare(before, before, "--arm", "rewoo").exit_code == 2


def sign_flip_by_enumeration(d):
    """The mid-p over every choice of signs, counted one by one."""
    signs = np.array(list(itertools.product([-1, 1], repeat=len(d))))
    sums = np.abs(signs @ d)
    observed = abs(d.sum())
    return (sums > observed + 1e-9).mean() + 0.5 * (np.abs(sums - observed) <= 1e-9).mean()


def test_the_paired_test_agrees_with_counting_every_choice_of_signs(tmp_path):
    before = write(tmp_path / "b", {"react": 0.7}, seed=5)
    after = write(tmp_path / "a", {"react": 0.4}, seed=6)
    [arm] = json.loads(run_compare(before, after, "--format", "json").stdout)["arms"]
    per_task = {task: [0.0, 0.0] for task in TASKS}
    for folder, side in ((before, 0), (after, 1)):
        for task, _, correct in before_keys(folder, "react"):
            per_task[task][side] += correct / 3
    d = np.array([a - b for b, a in per_task.values()])
    assert arm["p_value"] == pytest.approx(sign_flip_by_enumeration(d), abs=1e-12)
    assert arm["tasks"] == 12


@pytest.mark.parametrize("seed", range(6))
def test_unequal_repeats_are_tested_on_the_lattice_of_their_runs(seed):
    rng = np.random.default_rng(seed)
    runs = rng.integers(1, 5, 9)  # 1 to 4 paired runs a task: d_t in steps of 1/12
    after, before = rng.binomial(runs, 0.6), rng.binomial(runs, 0.4)
    expected = sign_flip_by_enumeration((after - before) / runs)
    assert sign_flip_p(after, before, runs) == pytest.approx(expected, abs=1e-12)


def test_past_the_exact_range_p_is_what_random_sign_flips_give():
    """600 tasks, three runs each: d_t in steps of a third, so sum d_t^2 is not the count.
    The flips are summed in thirds, whole numbers, so that ties are ties."""
    rng = np.random.default_rng(4)
    after, before = rng.binomial(3, 0.53, 600), rng.binomial(3, 0.5, 600)
    steps = after - before
    assert (steps != 0).sum() > EXACT_TASKS  # the normal approximation's range
    flips = np.concatenate(  # 100,000 choices of signs, drawn in parts (memory)
        [np.abs(rng.choice([-1, 1], size=(10_000, len(steps))) @ steps) for _ in range(10)]
    )
    observed = abs(steps.sum())
    by_chance = (flips > observed).mean() + 0.5 * (flips == observed).mean()
    assert sign_flip_p(after, before, [3] * 600) == pytest.approx(by_chance, abs=0.008)


def test_past_the_exact_range_the_test_is_the_normal_one_with_the_permutation_variance():
    """With one repeat that is McNemar's chi-square without continuity correction, which a
    folder of thousands of tasks reaches."""
    for b, c in [(520, 600), (5000, 5200), (40000, 40000)]:
        after, before = [0] * b + [1] * c, [1] * b + [0] * c
        expected = mcnemar([[5, b], [c, 7]], exact=False, correction=False).pvalue
        assert sign_flip_p(after, before, [1] * (b + c)) == pytest.approx(expected, rel=1e-9)


def bootstrap_over_runs(tasks, before, after, cost_before, cost_after, resamples=2000, seed=0):
    """The cluster bootstrap drawn task by task from the runs, each drawn task weighing the
    same (its runs' mean cost over its share correct): what the per-task means must equal."""
    b, a = np.asarray(before, float), np.asarray(after, float)
    cb, ca = np.asarray(cost_before, float), np.asarray(cost_after, float)
    labels = np.asarray(tasks)
    clusters = [np.flatnonzero(labels == t) for t in dict.fromkeys(tasks)]
    rng = np.random.default_rng(seed)

    def per_correct(cost, correct, drawn):
        right = sum(correct[c].mean() for c in drawn)
        return sum(cost[c].mean() for c in drawn) / right if right else np.nan

    costs = []
    for _ in range(resamples):
        drawn = [clusters[i] for i in rng.integers(0, len(clusters), len(clusters))]
        costs.append(per_correct(ca, a, drawn) - per_correct(cb, b, drawn))
    return [c for c in costs if not np.isnan(c)]


@pytest.mark.parametrize("seed", range(4))
def test_the_cost_bootstrap_by_task_means_draws_what_a_bootstrap_over_runs_draws(seed):
    rng = np.random.default_rng(seed)
    tasks = [f"t{rng.integers(0, 9)}" for _ in range(60)]  # unequal repeats, any order
    before, after = rng.random(60) < 0.5, rng.random(60) < 0.6
    cost_before, cost_after = rng.random(60), rng.random(60)
    cost_before[tasks.index(tasks[seed])] = np.nan  # one task has an unpriced run
    result = paired_difference(tasks, before, after, (cost_before, cost_after))
    costs = bootstrap_over_runs(tasks, before, after, cost_before, cost_after)
    # To rounding: the per-task sums add in another order.
    assert costs and (result.cost_ci_low, result.cost_ci_high) == pytest.approx(
        (np.percentile(costs, 2.5), np.percentile(costs, 97.5)), abs=1e-12
    )


def test_many_flipped_pairs_are_counted_per_task_in_the_markdown(tmp_path):
    before = write(tmp_path / "b", {"react": 1.0}, seed=1)
    after = write(tmp_path / "a", {"react": 0.0}, seed=1)
    [row] = [line for line in run_compare(before, after).stdout.splitlines() if "| react" in line]
    assert row.split(" | ")[8] == ", ".join(t for t in TASKS for _ in range(3))  # as always
    tasks = [f"t{i}" for i in range(FLIPS_NAMED + 10)]
    many = [t for t in tasks for _ in range(FLIPS_LISTED // len(tasks) + 1)]
    many += ["t3"] * 5
    cell = flipped(many)
    assert cell.startswith(f"{len(many)} pairs: t3 ({many.count('t3')}), t0 (")
    assert cell.count("(") == FLIPS_NAMED and cell.endswith(", and 10 more tasks")
    assert flipped(many[:FLIPS_LISTED]) == ", ".join(many[:FLIPS_LISTED])
    payload = json.loads(run_compare(before, after, "--format", "json").stdout)
    assert payload["arms"][0]["right_to_wrong"] == [t for t in TASKS for _ in range(3)]


def lopsided_folders(tmp_path, tokens_after=(1000, 100, 0), right_before=(0,)):
    """10 tasks of 10 repeats, 100 pairs; the candidate lost 81 to api_error, keeping all
    ten of t0 and one of each other task, and got t1 to t9 right. The baseline got the
    tasks ``right_before`` right: by default t0 alone, so that accuracy (each task weighing
    the same) rises from 10% to 90%."""
    before, after = [], []
    for t in range(10):
        for r in range(10):
            before.append(record(arm="react", task=f"t{t}", repeat=r, correct=t in right_before))
            kept = t == 0 or r == 0
            after.append(
                record(
                    arm="react",
                    task=f"t{t}",
                    repeat=r,
                    status="answered" if kept else "api_error",
                    correct=t > 0,
                    tokens=tokens_after,
                )
            )
    folders = []
    for name, runs in (("b", before), ("a", after)):
        (tmp_path / name).mkdir()
        lines = [r.model_dump_json() for r in runs]
        (tmp_path / name / "runs.jsonl").write_text("\n".join(lines) + "\n")
        folders.append(str(tmp_path / name))
    return folders


def test_pairs_lost_to_api_error_on_one_side_do_not_make_cost_per_correct_rise(tmp_path):
    """Cost per correct answer weighs tasks as accuracy does: pooled over the 19 pairs left,
    t0's ten would make it rise 11% (19 runs over 10 correct, then over 9)."""
    before, after = lopsided_folders(tmp_path)
    result = run_compare(before, after)
    assert result.exit_code == 0, result.output
    assert "REGRESSED" not in result.output
    row = next(line for line in result.stdout.splitlines() if line.startswith("| react"))
    assert "| 10% → 90% |" in row
    assert (
        "react: left out 81 of the baseline's 100 runs and 81 of the candidate's 100; "
        "accuracy and cost per correct answer are both on the 19 pairs left."
    ) in result.stdout
    [arm] = json.loads(run_compare(before, after, "--format", "json").stdout)["arms"]
    assert (arm["left_out"]["runs_before"], arm["left_out"]["runs_after"]) == (81, 81)
    assert arm["cost_per_correct_after"] == pytest.approx(arm["cost_per_correct_before"] / 9)
    assert not arm["regressed"]


def test_a_cost_rise_on_the_same_pairs_still_regresses(tmp_path):
    """The same 19 pairs, as accurate on both sides (t1 to t9 right), each candidate run
    taking twice the tokens: cost per correct answer doubles."""
    before, after = lopsided_folders(
        tmp_path, tokens_after=(2000, 200, 0), right_before=range(1, 10)
    )
    result = run_compare(before, after)
    assert result.exit_code == 1, result.output
    assert "REGRESSED: react: cost per correct rose 100% (more than 10%)" in result.stderr
    assert "left out 81 of the baseline's 100 runs and 81 of the candidate's 100" in (result.stdout)


def test_arms_compared_in_a_child_are_compared_as_here(tmp_path, monkeypatch):
    from loopbench.harness.report import compare as compare_module

    rates = {"react": 0.8, "cot": 0.5, "plan": 0.6}
    before = write(tmp_path / "b", rates, seed=3)
    after = write(tmp_path / "a", rates, seed=4)
    here = run_compare(before, after, "--format", "json")
    monkeypatch.setattr(compare_module, "FORK_FROM", 0)
    asked, original = [], compare_module.in_halves

    def in_halves(work, items, *, fork):
        asked.append(fork)
        return original(work, items, fork=fork)

    monkeypatch.setattr(compare_module, "in_halves", in_halves)
    forked = run_compare(before, after, "--format", "json")
    assert asked == [True]
    assert (forked.exit_code, forked.stdout, forked.stderr) == (
        here.exit_code,
        here.stdout,
        here.stderr,
    )
    assert len(json.loads(forked.stdout)["arms"]) == 3
