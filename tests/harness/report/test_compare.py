import json
import random
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from harness.cli import main
from harness.report.compare import FLIPS_LISTED, FLIPS_NAMED, _flipped
from harness.report.stats import mcnemar_exact, paired_difference, wilson_interval

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


def test_mcnemar_matches_statsmodels():
    for b, c in [(0, 0), (1, 0), (3, 9), (10, 10), (2, 14), (25, 11)]:
        expected = mcnemar([[5, b], [c, 7]], exact=True).pvalue
        assert mcnemar_exact(b, c) == pytest.approx(expected, rel=1e-12)


def test_wilson_matches_statsmodels():
    for k, n in [(0, 12), (7, 10), (36, 36), (20, 36)]:
        assert wilson_interval(k, n) == pytest.approx(
            proportion_confint(k, n, alpha=0.05, method="wilson"), abs=1e-9
        )


def test_paired_bootstrap_resamples_whole_tasks():
    tasks = [t for t in TASKS for _ in range(3)]
    before = [True] * 36
    after = [t != "t0" for t in tasks]  # one task lost in all three repeats
    result = paired_difference(tasks, before, after, [1.0] * 36, [1.0] * 36)
    assert result.difference == pytest.approx(-3 / 36)
    # Resampling tasks, the loss comes in multiples of one task's three runs.
    assert result.ci_low < result.difference < 0 and result.ci_high == 0
    assert result.right_to_wrong == ["t0", "t0", "t0"] and result.p_value == pytest.approx(0.25)
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


def test_the_exact_test_agrees_with_a_direct_count(tmp_path):
    before = write(tmp_path / "b", {"react": 0.7}, seed=5)
    after = write(tmp_path / "a", {"react": 0.4}, seed=6)
    [arm] = json.loads(run_compare(before, after, "--format", "json").stdout)["arms"]
    b, c = len(arm["right_to_wrong"]), len(arm["wrong_to_right"])
    assert arm["p_value"] == pytest.approx(mcnemar(np.array([[0, b], [c, 0]]), exact=True).pvalue)


def test_mcnemar_holds_past_a_thousand_discordant_pairs():
    """2**n overflows a float past 1,023 pairs; a large results folder has more."""
    for b, c in [(520, 600), (5000, 5200), (40000, 40000)]:
        expected = mcnemar([[5, b], [c, 7]], exact=True).pvalue
        assert mcnemar_exact(b, c) == pytest.approx(expected, rel=1e-9, abs=1e-300)


def bootstrap_over_runs(tasks, before, after, cost_before, cost_after, resamples=2000, seed=0):
    """The cluster bootstrap drawn run by run (what the per-task sums must equal)."""
    b, a = np.asarray(before, float), np.asarray(after, float)
    cb, ca = np.asarray(cost_before, float), np.asarray(cost_after, float)
    labels = np.asarray(tasks)
    clusters = [np.flatnonzero(labels == t) for t in dict.fromkeys(tasks)]
    rng = np.random.default_rng(seed)

    def per_correct(cost, correct):
        return cost.sum() / correct.sum() if correct.sum() else np.nan

    diffs, costs = [], []
    for _ in range(resamples):
        pick = np.concatenate([clusters[i] for i in rng.integers(0, len(clusters), len(clusters))])
        diffs.append(a[pick].mean() - b[pick].mean())
        costs.append(per_correct(ca[pick], a[pick]) - per_correct(cb[pick], b[pick]))
    finite = [c for c in costs if not np.isnan(c)]
    return diffs, finite


@pytest.mark.parametrize("seed", range(4))
def test_the_bootstrap_by_task_sums_draws_what_a_bootstrap_over_runs_draws(seed):
    rng = np.random.default_rng(seed)
    tasks = [f"t{rng.integers(0, 9)}" for _ in range(60)]  # unequal repeats, any order
    before, after = rng.random(60) < 0.5, rng.random(60) < 0.6
    cost_before, cost_after = rng.random(60), rng.random(60)
    cost_before[tasks.index(tasks[seed])] = np.nan  # one task has an unpriced run
    result = paired_difference(tasks, before, after, cost_before, cost_after)
    diffs, costs = bootstrap_over_runs(tasks, before, after, cost_before, cost_after)
    # Accuracy to the bit (counts sum exactly); cost to rounding (sums in another order).
    assert (result.ci_low, result.ci_high) == (
        np.percentile(diffs, 2.5),
        np.percentile(diffs, 97.5),
    )
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
    cell = _flipped(many)
    assert cell.startswith(f"{len(many)} pairs: t3 ({many.count('t3')}), t0 (")
    assert cell.count("(") == FLIPS_NAMED and cell.endswith(", and 10 more tasks")
    assert _flipped(many[:FLIPS_LISTED]) == ", ".join(many[:FLIPS_LISTED])
    payload = json.loads(run_compare(before, after, "--format", "json").stdout)
    assert payload["arms"][0]["right_to_wrong"] == [t for t in TASKS for _ in range(3)]
