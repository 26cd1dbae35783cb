"""compare on ragged folder pairs: unequal repeats, tasks and repeats one side lacks, pairs
removed by api_error. The verdict, the difference, its interval and the test come from the
same per-task differences; what is left out is said; figures show the digits that decide.
Checked against scipy's sign-flip permutation test and statsmodels' Wilson interval."""

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

import loopbench
from loopbench.harness.cli.main import main
from loopbench.harness.report.deciding_digits import below, dollars, money, percent_beyond
from loopbench.harness.stats.intervals import (
    PairedTasks,
    clustered_interval,
    newcombe_interval,
    wilson_interval,
)

Z = 1.959963984540054


def write(folder: Path, runs, cost=None):
    """runs: (task, repeat, status, correct); cost: each run's cost_usd."""
    folder.mkdir(parents=True)
    lines = [
        json.dumps(
            {"arm": "react", "task_set": "sim", "task_id": task, "repeat": repeat, "model": "m",
             "status": status, "correct": correct, **({} if cost is None else {"cost_usd": cost})}
        )
        for task, repeat, status, correct in runs
    ]  # fmt: skip
    (folder / "runs.jsonl").write_text("\n".join(lines) + "\n")
    return str(folder)


def run_compare(*args):
    return CliRunner().invoke(main, ["compare", *map(str, args)])


def ragged_pair(rng):
    """Two sides' runs of one arm: most tasks go from wrong to right, a few (fewer) from
    right to wrong on many repeats, some mixed; each side ran its own number of repeats,
    tasks only one side ran, and api_error runs on either side."""
    before, after = [], []
    tasks = int(rng.integers(4, 13))
    for t in range(tasks):
        kind = rng.choice(["up", "down", "mixed"], p=[0.6, 0.2, 0.2])
        # A loss on many pairs: it outweighs the gains over all pairs.
        shared = int(rng.integers(6, 12)) if kind == "down" else int(rng.integers(1, 4))
        for r in range(shared + int(rng.integers(0, 3))):
            if kind == "up":
                b, a = False, True
            elif kind == "down":
                b, a = True, False
            else:
                b, a = bool(rng.random() < 0.5), bool(rng.random() < 0.5)
            b_status = "api_error" if rng.random() < 0.15 else "answered"
            a_status = "api_error" if rng.random() < 0.15 else "answered"
            before.append((f"t{t}", r, b_status, None if b_status == "api_error" else b))
            if r < shared:  # the candidate ran fewer repeats of some tasks: r past them
                after.append((f"t{t}", r, a_status, None if a_status == "api_error" else a))
    for t in range(tasks, tasks + int(rng.integers(0, 3))):  # tasks only the candidate ran
        after += [(f"t{t}", r, "answered", True) for r in range(2)]
    return before, after


def per_task_differences(before, after):
    """The oracle: per task, right pairs after less right pairs before over its pairs, the
    pairs being (task, repeat) answered on both sides; and what was left out."""
    b = {(t, r): (s, c) for t, r, s, c in before}
    a = {(t, r): (s, c) for t, r, s, c in after}
    sums: dict[str, list[Fraction]] = {}
    failed = 0
    for key in b.keys() & a.keys():
        if b[key][0] != "answered" or a[key][0] != "answered":
            failed += 1
            continue
        entry = sums.setdefault(key[0], [Fraction(0), Fraction(0)])
        entry[0] += int(a[key][1]) - int(b[key][1])
        entry[1] += 1
    d = {task: diff / n for task, (diff, n) in sums.items()}
    left = {"before": len(b.keys() - a.keys()), "after": len(a.keys() - b.keys()), "failed": failed}
    return d, left


def sign_flip_mid_p(d):
    """scipy's exact sign-flip permutation distribution of sum d_t, two-sided mid-p."""
    d = np.array([float(x) for x in d if x != 0])
    if not len(d):
        return 1.0
    result = stats.permutation_test(
        (d,), np.sum, permutation_type="samples", n_resamples=10**6, alternative="two-sided"
    )
    null, observed = np.abs(result.null_distribution), abs(d.sum())
    return float((null > observed + 1e-9).mean() + 0.5 * (np.abs(null - observed) <= 1e-9).mean())


def test_tasks_that_improved_are_never_a_regression_and_every_interval_holds_its_estimate(
    tmp_path,
):
    rng = np.random.default_rng(28)
    improved = backwards_over_all_pairs = 0
    for case in range(60):
        before, after = ragged_pair(rng)
        folders = write(tmp_path / f"b{case}", before), write(tmp_path / f"a{case}", after)
        result = run_compare(*folders, "--format", "json")
        [arm] = json.loads(result.stdout)["arms"]
        d, left = per_task_differences(before, after)
        mean = sum(d.values(), Fraction(0)) / len(d)
        improved += mean > 0
        over_pairs = _over_all_pairs(before, after)
        backwards_over_all_pairs += mean > 0 and over_pairs < 0
        assert arm["difference"] == pytest.approx(float(mean), abs=1e-12)
        assert arm["accuracy_after"] - arm["accuracy_before"] == pytest.approx(float(mean))
        assert arm["tasks"] == len(d)
        assert arm["p_value"] == pytest.approx(sign_flip_mid_p(d.values()), abs=1e-9)
        if mean >= 0:
            assert not arm["regressed"] and result.exit_code == 0, (case, result.stderr)
        else:
            expected = -mean > Fraction(1, 20) and arm["p_value"] < 0.05
            assert arm["regressed"] == expected and result.exit_code == int(expected)
        low, high = arm["ci_low"], arm["ci_high"]
        assert -1 <= low <= arm["difference"] <= high <= 1 and low < high
        assert arm["left_out"]["before"]["runs"] == left["before"]
        assert arm["left_out"]["after"]["runs"] == left["after"]
        assert arm["left_out"]["failed_pairs"] == left["failed"]
        assert arm["n_pairs"] == sum(1 for _ in _pairs(before, after))
    # Not vacuous: most cases improved, and in many the pairs over all said the opposite.
    assert improved >= 40 and backwards_over_all_pairs >= 10


def _pairs(before, after):
    b = {(t, r): (s, c) for t, r, s, c in before}
    a = {(t, r): (s, c) for t, r, s, c in after}
    for key in b.keys() & a.keys():
        if b[key][0] == a[key][0] == "answered":
            yield b[key][1], a[key][1]


def _over_all_pairs(before, after):
    return sum(int(a) - int(b) for b, a in _pairs(before, after))


def issue_folders(tmp_path):
    """9 of 10 tasks go from wrong to right on one pair each; one goes from right to wrong
    on ten; the candidate ran two more repeats of the nine, one task only the baseline ran,
    and an api_error pair."""
    before = [("t0", r, "answered", True) for r in range(10)]
    before += [(f"t{i}", 0, "answered", False) for i in range(1, 10)]
    before += [("t20", 0, "answered", True), ("t1", 5, "answered", True)]
    after = [("t0", r, "answered", False) for r in range(10)]
    after += [(f"t{i}", 0, "answered", True) for i in range(1, 10)]
    after += [(f"t{i}", r, "answered", True) for i in range(1, 10) for r in (1, 2)]
    after += [("t1", 5, "api_error", None)]
    b = write(tmp_path / "b", before, cost=0.000034)
    a = write(tmp_path / "a", after, cost=0.000041)
    return b, a


def test_nine_tasks_of_ten_improving_on_fewer_pairs_is_an_improvement(tmp_path):
    b, a = issue_folders(tmp_path)
    [arm] = loopbench.load(a).compare(loopbench.load(b)).arms
    p = arm.paired
    assert p.difference == pytest.approx(0.8) and p.accuracy_before == pytest.approx(0.1)
    assert p.p_value == pytest.approx(sign_flip_mid_p([-1] + [1] * 9))
    assert 0 < p.ci_low < 0.8 < p.ci_high <= 1
    assert not arm.criteria[0].regressed
    [back] = loopbench.load(b).compare(loopbench.load(a)).arms
    assert back.criteria[0].regressed and back.paired.difference == pytest.approx(-0.8)


def test_what_is_left_out_of_the_pairs_is_said_in_markdown_text_and_json(tmp_path):
    b, a = issue_folders(tmp_path)
    for fmt in ("md", "text"):
        shown = run_compare(b, a, "--format", fmt).stdout
        assert (
            "Left out of react's pairs, and so not compared: in the baseline only, 1 run on "
            "1 task the candidate did not run (t20); in the candidate only, 18 runs at "
            "repeats 1, 2 (9 tasks) the baseline has no run for; 1 pair where a side failed "
            "on infrastructure."
        ) in shown
    [arm] = json.loads(run_compare(b, a, "--format", "json").stdout)["arms"]
    assert arm["left_out"] == {
        "before": {"runs": 1, "tasks": ["t20"], "task_runs": 1, "repeats": [], "repeat_tasks": 0},
        "after": {"runs": 18, "tasks": [], "task_runs": 0, "repeats": [1, 2], "repeat_tasks": 9},
        "failed_pairs": 1,
        "tasks_all_failed": [],
        "runs_before": 2,
        "runs_after": 19,
    }
    same = run_compare(b, b).stdout
    assert "Left out" not in same


def test_costs_per_correct_that_differ_are_shown_differing(tmp_path):
    b, a = issue_folders(tmp_path)
    [row] = [line for line in run_compare(b, a).stdout.splitlines() if "| react" in line]
    [arm] = json.loads(run_compare(b, a, "--format", "json").stdout)["arms"]
    before, after = arm["cost_per_correct_before"], arm["cost_per_correct_after"]
    assert f"${before:.6f} → ${after:.6f}" in row and f"{before:.6f}" != f"{after:.6f}"
    assert money([0.000034, 0.000041]) == 6 and dollars(0.000034, 6) == "$0.000034"
    assert money([0.0123, 0.01231]) == 5 and money([12.5, 12.5]) == 4
    assert money([math.nan, 0.0]) == 4 and dollars(math.nan, 4) == "—"


def test_a_fall_is_printed_with_the_digits_that_put_it_beyond_the_threshold(tmp_path):
    """6 of 114 tasks lost, none gained: a fall of 5.26%, beyond 5% and below 5.3%."""
    before = [(f"t{t}", 0, "answered", True) for t in range(114)]
    after = [(f"t{t}", 0, "answered", t >= 6) for t in range(114)]
    b, a = write(tmp_path / "b", before), write(tmp_path / "a", after)
    result = run_compare(b, a)
    assert result.exit_code == 1
    assert "accuracy fell 5.3% (more than 5%) on 114 tasks, paired p = 0.0156" in result.stderr
    finer = run_compare(b, a, "--max-drop", "0.0525")
    assert "accuracy fell 5.26% (more than 5.25%)" in finer.stderr
    assert percent_beyond(0.05001, 0.05) == ("5.001%", "5%")
    assert percent_beyond(0.3, 0.1) == ("30%", "10%")
    assert below(0.04996, 0.05) == "0.04996" and below(0.0117, 0.05) == "0.0117"


def test_a_fall_of_exactly_max_drop_to_rounding_is_not_more_than_it(tmp_path):
    """27 of 30 tasks lose one of three pairs: a fall of 3/10 exactly, which the mean of the
    thirds makes 0.30000000000000004."""
    before = [(f"t{t}", r, "answered", r == 0) for t in range(30) for r in range(3)]
    after = [(f"t{t}", r, "answered", r == 0 and t >= 27) for t in range(30) for r in range(3)]
    b, a = write(tmp_path / "b", before), write(tmp_path / "a", after)
    [arm] = json.loads(run_compare(b, a, "--format", "json", "--max-drop", "0.3").stdout)["arms"]
    assert arm["difference"] < -0.3 and arm["p_value"] < 0.05  # beyond, but only by rounding
    assert not arm["regressed"]
    assert run_compare(b, a, "--max-drop", "0.29").exit_code == 1


@pytest.mark.parametrize("share", [0.0, 0.3, 0.5, 0.8, 1.0])
def test_with_no_pair_disagreeing_the_difference_interval_is_the_wilson_bound_on_disagreeing(
    share,
):
    for n in (3, 10, 57.5, 400):
        bound = proportion_confint(0, n, alpha=0.05, method="wilson")[1]
        low, high = newcombe_interval(n * share, 0, 0, n * (1 - share), Z)
        assert (low, high) == pytest.approx((-bound, bound), rel=1e-9)


def test_two_identical_arms_at_50_percent_differ_by_an_interval_with_a_width(tmp_path):
    tmp_path.mkdir(exist_ok=True)
    lines = [
        json.dumps({"arm": arm, "task_set": "s", "task_id": f"t{t}", "repeat": r, "model": "m",
                    "status": "answered", "correct": t % 2 == 0})
        for arm in ("a", "b") for t in range(10) for r in range(3)
    ]  # fmt: skip
    (tmp_path / "runs.jsonl").write_text("\n".join(lines) + "\n")
    [row] = loopbench.load(tmp_path).table(vs="a").query("arm == 'b'").to_dict("records")
    assert row["vs_difference"] == 0 and row["vs_ci_low"] < 0 < row["vs_ci_high"]
    half = np.r_[np.full(5, 3.0), np.zeros(5)]
    paired = PairedTasks(np.full(10, 3.0), half, half, half)
    assert paired.interval() == (row["vs_ci_low"], row["vs_ci_high"])


def test_every_interval_holds_its_estimate_at_0_and_100_percent():
    """Wilson's centre less its half-width is 0 at 0% only to rounding: never above it."""
    for n in range(1, 400):
        for z in (Z, 2.262157162740992, 1.6448536269514722, 2.7764451051977987):
            for right in (0, n):
                low, high = wilson_interval(right, n, z)
                assert low <= right / n <= high and low < high
    for tasks in range(2, 60):
        for value in (0.0, 1.0):
            values = np.full(tasks, value)
            low, high = clustered_interval(values, np.ones(tasks), most=3.0 * tasks)
            assert low <= value <= high and low < high


def test_a_wilson_lower_bound_at_zero_is_zero():
    lows = [wilson_interval(0, n, z)[0] for n in range(1, 400) for z in (Z, 2.2621571627409915)]
    assert max(lows) == 0.0
