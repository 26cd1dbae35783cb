"""A pass@k or pass^k interval holds its estimate: low <= estimate <= high, always."""

import itertools

import numpy as np
import pandas as pd

from loopbench.harness.report.pass_k import PassK, task_counts


def test_every_pass_k_interval_holds_its_estimate_at_0_and_100_percent_and_between():
    rng = np.random.default_rng(0)
    checked = 0
    for tasks, runs, share in itertools.product(range(1, 40), (1, 2, 3, 5), (0, 0.3, 1)):
        ids = pd.Series(np.repeat([f"t{i}" for i in range(tasks)], runs))
        correct = pd.Series(rng.random(tasks * runs) < share)
        for kind, k in itertools.product("@^", (1, 2, 3)):
            measure = PassK(kind, k)
            found = measure.summary(ids, correct)
            estimate = found[measure.name]
            if np.isnan(estimate):
                continue
            checked += 1
            assert found[f"{measure.name}_low"] <= estimate <= found[f"{measure.name}_high"]
    assert checked > 1000


def test_three_tasks_never_right_have_a_low_of_exactly_zero():
    """The case that put 5.55e-17 above an estimate of 0: t on 2 degrees of freedom."""
    ids = pd.Series(np.repeat(["a", "b", "c"], 2))
    found = PassK("@", 1).summary(ids, pd.Series([False] * 6))
    assert found["pass@1"] == 0.0 and found["pass@1_low"] == 0.0
    assert found["pass@1_high"] > 0


def test_task_counts_are_the_runs_and_right_runs_each_task_groups_in_first_order():
    """What pass@k reads of each task is what grouping the runs by task gives, in the
    order the tasks first come, a null task in none; the same from categories."""
    tasks = pd.Series(["b", "a", None, "b", "c", "a", "b"], dtype="str")
    correct = pd.Series([True, None, True, False, True, True, True], dtype=object)
    table = pd.DataFrame({"task": tasks.to_numpy(), "right": correct.eq(True).to_numpy()})
    grouped = table.groupby("task", sort=False)["right"]
    for given in (tasks, tasks.astype("category")):
        runs, right = task_counts(given, correct)
        assert runs.tolist() == grouped.size().tolist() == [3, 2, 1]
        assert right.tolist() == grouped.sum().tolist() == [2, 1, 1]
