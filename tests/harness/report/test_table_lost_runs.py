"""The table says how many tasks lost runs to failures, and warns when the failures fell on
harder tasks than the rest (their runs left out, accuracy is then too high)."""

import json

import numpy as np

from loopbench.harness.report.lost_runs import UNEVEN_P, lost_runs, permutation_p
from loopbench.harness.report.rendering import render
from loopbench.harness.report.table import summarize
from loopbench.harness.results.frames import records_frame
from tests.harness.report.test_table import record


def folder(failures_on, tasks=40, hard=20):
    """Arms a and b on ``tasks`` tasks, 3 repeats; b is right on none of the first ``hard``
    tasks and every other; arm a's runs fail on the tasks ``failures_on`` picks."""
    runs = []
    for t in range(tasks):
        easy = t >= hard
        for repeat in range(3):
            runs.append(record("b", f"t{t}", repeat, correct=easy))
            failed = failures_on(t) and repeat == 0
            status = "api_error" if failed else "answered"
            runs.append(record("a", f"t{t}", repeat, status=status, correct=easy))
    return records_frame(runs)


def test_failures_on_the_hard_tasks_are_counted_and_warned_about():
    summary = summarize(folder(lambda t: t < 12))
    row = summary.set_index("arm").loc["a"]
    assert (row["runs_lost"], row["tasks_lost"], row["tasks"]) == (12, 12, 40)
    assert row["lost_tasks_reference_accuracy"] == 0.0
    assert row["other_tasks_reference_accuracy"] == 20 / 28
    assert row["lost_tasks_p"] < UNEVEN_P and row["failures_uneven"] == 1
    table = render(summary, "md")
    lost = "Runs lost to failures (api_error, pattern_error, tool_error: left out of accuracy): "
    assert lost in table
    assert "a 12 run(s) on 12 of 40 tasks." in table
    assert "Failures not spread evenly: the 12 tasks where a lost runs are harder" in table
    assert "the other arms were right 0% of the time on them, 71% on the others" in table
    assert "a's is likely too high" in table
    assert json.loads(render(summary, "json"))[0]["failures_uneven"] == 1


def test_failures_spread_over_easy_and_hard_tasks_are_counted_without_a_warning():
    summary = summarize(folder(lambda t: t % 4 == 0))  # 5 hard and 5 easy tasks
    row = summary.set_index("arm").loc["a"]
    assert row["tasks_lost"] == 10 and row["failures_uneven"] == 0
    table = render(summary, "md")
    assert "a 10 run(s) on 10 of 40 tasks." in table
    assert "not spread evenly" not in table


def test_a_table_without_failures_says_nothing_of_them():
    summary = summarize(folder(lambda t: False))
    assert summary["tasks_lost"].sum() == 0
    assert "Runs lost" not in render(summary, "md")


def test_with_one_arm_its_own_runs_that_survived_judge_the_tasks():
    frame = folder(lambda t: t < 12)
    summary = summarize(frame[frame["arm"] == "a"])
    row = summary.iloc[0]
    assert row["lost_compared_with"] == "own runs" and row["failures_uneven"] == 1
    assert "a's own runs that did not fail were right 0%" in render(summary, "md")


def test_a_single_lost_task_is_not_called_uneven_however_hard():
    """One task of 40 that lost runs is at most 1 in 40 by chance: never below UNEVEN_P."""
    row = summarize(folder(lambda t: t == 0)).set_index("arm").loc["a"]
    assert row["tasks_lost"] == 1 and row["failures_uneven"] == 0


def test_the_permutation_p_is_what_reassigning_the_lost_tasks_gives():
    scores = np.array([0.0] * 5 + [1.0] * 15)
    chosen = np.arange(20) < 3  # the three lost tasks all scored 0
    # By hand: of C(20, 3) choices, C(5, 3) all-zero ones are as extreme, and none beyond
    # the other way (3 tasks all 1 is a smaller difference); p = 10 / 1140.
    assert abs(permutation_p(scores, chosen) - 10 / 1140) < 0.006
    assert permutation_p(np.ones(20), chosen) == 1.0  # no spread: nothing to tell


def test_many_tasks_use_the_normal_form_and_agree_with_random_reassignments():
    rng = np.random.default_rng(3)
    scores = rng.random(400)
    chosen = rng.random(400) < 0.3
    scores[chosen] -= 0.05

    def gap(mask):
        return abs(scores[mask].mean() - scores[~mask].mean())

    shuffled = [gap(rng.permutation(chosen)) for _ in range(2000)]
    by_hand = np.mean(np.array(shuffled) >= gap(chosen))
    assert abs(permutation_p(scores, chosen) - by_hand) < 0.02


def test_each_arm_is_compared_with_the_other_arms_runs_of_its_own_tasks():
    """The table counts every arm's graded runs once and reads the other arms' by
    subtraction: the same figures as ``lost_runs`` given the other arms' runs themselves,
    with several models, a ``by`` column, and arms that ran different tasks."""
    rng = np.random.default_rng(7)
    runs = []
    for model in ("m1", "m2"):
        for arm in ("a", "b", "c"):
            for t in range(30 if arm != "c" else 12):
                for repeat in range(3):
                    status = "api_error" if rng.random() < 0.15 else "answered"
                    right = bool(rng.random() < (0.2 if t < 10 else 0.8))
                    slice_ = "public" if t % 3 else "company"
                    runs.append(
                        record(arm, f"t{t}", repeat, status, right, model=model, slice_=slice_)
                    )
    frame = records_frame(runs)
    for by in (None, "slice"):
        summary = summarize(frame, by)
        for _, row in summary.iterrows():
            same = (frame["model"] == row["model"]) & (frame["arm"] == row["arm"])
            own = frame[same & (frame["slice"] == row["slice"] if by else same)]
            others = frame[~same & frame["task_id"].isin(own["task_id"].unique())]
            expected = lost_runs(own, others).columns()
            got = {name: row[name] for name in expected}
            for name, value in expected.items():
                assert got[name] == value or (value != value and got[name] != got[name]), name
