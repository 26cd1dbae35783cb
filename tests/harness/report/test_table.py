import json
import math

import pytest

from loopbench.harness.report.rendering import render
from loopbench.harness.report.table import summarize
from loopbench.harness.results.frames import Pricing, records_frame
from loopbench.harness.results.prices import Price, PriceError, PriceTable, load_prices
from loopbench.harness.results.records import RunRecord
from loopbench.harness.stats.intervals import wilson_interval


def record(
    arm="a",
    task="t1",
    repeat=0,
    status="answered",
    correct=True,
    tokens=(1000, 100, 0),
    model="gpt-5-mini",
    slice_="public",
):
    return RunRecord(
        run_id=f"{arm}{task}{repeat}",
        experiment_id="e",
        arm=arm,
        pattern=arm,
        options={},
        task_set="s",
        task_id=task,
        slice=slice_,
        repeat=repeat,
        model=model,
        status=status,
        answer="x" if status == "answered" else None,
        correct=correct if status == "answered" else None,
        grade_reason="",
        turns=2,
        tool_calls=1,
        parse_failures=0,
        repeated_actions=0,
        retries=0,
        tokens_in=tokens[0],
        tokens_out=tokens[1],
        tokens_cached=tokens[2],
        cost_usd=None,
        latency_s=1.0,
        error=None,
        started_at="2026-01-01T00:00:00Z",
    )


PRICES = PriceTable(
    {
        "gpt-5-mini": Price(input=0.25, cached_input=0.025, output=2.0),
        "big": Price(input=3.0, output=15.0),
    },
    as_of="test",
)


def test_wilson_matches_a_known_value_and_is_never_zero_width():
    low, high = wilson_interval(7, 10)
    assert low == pytest.approx(0.3968, abs=1e-4) and high == pytest.approx(0.8922, abs=1e-4)
    assert wilson_interval(0, 5)[1] > 0 and wilson_interval(5, 5)[0] < 1
    assert all(math.isnan(v) for v in wilson_interval(0, 0))


def test_cached_tokens_are_billed_at_the_cached_rate():
    price = PRICES.require("gpt-5-mini")
    assert price.cost(1000, 100, 400) == pytest.approx((600 * 0.25 + 400 * 0.025 + 100 * 2.0) / 1e6)


def test_cost_per_correct_counts_every_run_and_accuracy_skips_api_errors():
    runs = [
        record(task="t1"),
        record(task="t2", correct=False),
        record(task="t3", status="step_budget"),
        record(task="t4", status="api_error"),
    ]
    [row] = summarize(records_frame(runs, Pricing(PRICES))).to_dict("records")
    each = PRICES.require("gpt-5-mini").cost(1000, 100)
    assert (row["n"], row["correct"]) == (4, 1)
    assert row["accuracy"] == pytest.approx(1 / 3)  # the api_error run is not a wrong answer
    assert row["cost_usd"] == pytest.approx(4 * each)  # but its tokens are paid for
    assert row["cost_per_correct"] == pytest.approx(4 * each)
    assert (row["status_api_error"], row["status_step_budget"]) == (1, 1)


def test_price_as_reprices_recorded_tokens():
    runs = [record()]
    [row] = summarize(records_frame(runs, Pricing(PRICES, "big"))).to_dict("records")
    assert row["cost_usd"] == pytest.approx((1000 * 3.0 + 100 * 15.0) / 1e6)


def test_price_as_an_unknown_model_says_what_is_listed():
    with pytest.raises(PriceError, match="listed: big, gpt-5-mini"):
        records_frame([record()], Pricing(PRICES, "nope"))


def test_no_correct_answer_shows_a_dash_not_a_number():
    table = render(summarize(records_frame([record(correct=False)], Pricing(PRICES))), "md")
    row = next(line for line in table.splitlines() if line.startswith("| a "))
    assert "| —" in row and "0% [0%, 79%]" in row


def test_grouping_by_slice_and_machine_formats():
    runs = [record(task="t1"), record(task="t2", slice_="company", correct=False)]
    summary = summarize(records_frame(runs, Pricing(PRICES)), by="slice")
    rows = json.loads(render(summary, "json"))
    assert {(r["slice"], r["correct"]) for r in rows} == {("public", 1), ("company", 0)}
    assert render(summary, "csv").splitlines()[0].startswith("arm,slice,n,correct,accuracy")


def test_shipped_price_table_is_dated_and_prefix_matches():
    table = load_prices()
    assert table.as_of != "unknown"
    assert table.find("gpt-4o-mini-2024-07-18") is table.find("gpt-4o-mini")


def _answering(arm, task, first, final, status="answered", **metrics):
    runs = record(arm=arm, task=task, status=status, correct=final)
    return runs.model_copy(update={"first_correct": first, "metrics": metrics})


def test_wrong_to_right_and_right_to_wrong_for_arms_that_answer_on_the_way():
    runs = [
        _answering("reflection", "t1", False, True),
        _answering("reflection", "t2", True, False),
        _answering("reflection", "t3", True, True),
        _answering("reflection", "t4", True, None, status="truncated"),  # no final answer
        record(arm="react", task="t1"),
    ]
    rows = {r["arm"]: r for r in summarize(records_frame(runs)).to_dict("records")}
    assert (rows["reflection"]["wrong_to_right"], rows["reflection"]["right_to_wrong"]) == (1, 1)
    assert math.isnan(rows["react"]["wrong_to_right"])
    table = render(summarize(records_frame(runs)), "md")
    assert "| w→r" in table and "r→w" in table


def _candidate_run(task, final, status, judged, right, acc_right, acc_wrong, last):
    return _answering(
        "best_of_n",
        task,
        None,
        final,
        status=status,
        judged=judged,
        judged_correct=right,
        accepted_correct=acc_right,
        accepted_wrong=acc_wrong,
        last_accepted=last,
    )


def test_best_of_n_coverage_precision_and_the_verifiers_measured_rates():
    runs = [
        # accepted a right candidate after rejecting a wrong one
        _candidate_run("t1", True, "answered", 2, 1, 1, 0, 1.0),
        # accepted a wrong candidate at once
        _candidate_run("t2", False, "answered", 1, 0, 0, 1, 1.0),
        # rejected a right and two wrong ones: nothing returned, not graded
        _candidate_run("t3", None, "none_accepted", 3, 1, 0, 0, 0.0),
        _candidate_run("t4", True, "answered", 1, 1, 1, 0, 1.0),
    ]
    [row] = summarize(records_frame(runs)).to_dict("records")
    assert row["accuracy"] == pytest.approx(2 / 4)  # none_accepted counts as not correct
    assert row["coverage"] == pytest.approx(3 / 4)
    assert row["precision"] == pytest.approx(2 / 3)
    p, r, f = 3 / 7, 2 / 3, 1 / 4  # 3 of 7 judged were right; 2 of 3 right, 1 of 4 wrong accepted
    assert (row["check_r"], row["check_f"]) == (pytest.approx(r), pytest.approx(f))
    assert row["predicted_precision"] == pytest.approx(p * r / (p * r + (1 - p) * f))
    assert "coverage" in render(summarize(records_frame(runs)), "md")


def test_a_check_that_never_saw_a_right_candidate_is_still_shown():
    runs = [
        _candidate_run("t1", False, "answered", 2, 0, 0, 1, 1.0),
        _candidate_run("t2", None, "none_accepted", 2, 0, 0, 0, 0.0),
    ]
    [row] = summarize(records_frame(runs)).to_dict("records")
    assert (row["coverage"], row["precision"], row["check_f"]) == (0.5, 0.0, 0.25)
    assert math.isnan(row["check_r"]) and row["predicted_precision"] == 0.0
    table = render(summarize(records_frame(runs)), "md")
    assert "coverage" in table and "check f" in table and "25%" in table


def test_the_cost_of_runs_superseded_by_retry_errors_stays_in_cost():
    runs = [record(task="t1"), record(task="t2", correct=False)]
    retried = [record(task="t2", status="api_error", tokens=(500, 0, 0))]
    pricing = Pricing(PRICES)
    summary = summarize(records_frame(runs, pricing), retried=records_frame(retried, pricing))
    [row] = summary.to_dict("records")
    price = PRICES.require("gpt-5-mini")
    assert (row["n"], row["retried_runs"]) == (2, 1)
    assert row["cost_usd"] == pytest.approx(2 * price.cost(1000, 100) + price.cost(500, 0))
    assert "Cost includes 1 runs that ended in api_error" in render(summary, "md")
