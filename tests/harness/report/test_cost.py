"""The cost arithmetic reproduces the chapter's published figures (seed 003), and prices the
tree as loopbench's tot arm spends."""

import json

import pytest
from click.testing import CliRunner

from harness.cli.main import main
from harness.report.cost import (
    PRICE_TIERS,
    Planning,
    cost_per_correct,
    default_accuracy,
    expected_attempts,
    nothing_accepted,
    pattern_costs,
    success_within,
    verifier_precision,
)


def cli(*args):
    result = CliRunner().invoke(main, ["cost", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_growth_matches_the_chapter():
    rows = {
        r["steps"]: r for r in json.loads(cli("growth", "--steps", "2,5,10,20", "--format", "json"))
    }
    assert (rows[5]["full_replay"], rows[5]["plan_execute"]) == (15_750, 8_150)
    assert (rows[20]["full_replay"], rows[20]["plan_execute"]) == (126_000, 22_850)
    assert rows[20]["caching"] == pytest.approx(22_050)
    assert rows[20]["compaction"] == 57_150
    assert set(rows[2]) == {"steps", "full_replay", "caching", "compaction", "plan_execute"}


def test_pattern_table_and_cost_per_correct_match_the_chapter():
    rows = json.loads(cli("patterns", "--price", "frontier", "--format", "json"))
    by = {r["pattern"]: r for r in rows}
    assert len(rows) == 7 and set(rows[0]) == {
        "pattern",
        "calls",
        "input_tokens",
        "output_tokens",
        "latency_s",
        "cost_usd",
    }
    react = by["ReAct, 5 tool steps"]
    assert (react["calls"], react["input_tokens"], react["output_tokens"]) == (6, 15_750, 900)
    assert react["latency_s"] == pytest.approx(32.5)
    cents = {
        name: 100 * cost_per_correct(by[name]["cost_usd"], default_accuracy(name)[0]) for name in by
    }
    assert round(cents["chain of thought"], 1) == 4.4
    assert round(cents["ReAct, 5 tool steps"], 1) == 10.9
    assert round(cents["plan-and-execute, 5 steps"], 1) == 4.6
    # The tree is loopbench's tot arm, not the chapter's b*d + b*b*d count (28 cents): five
    # nodes (1 + 2 + 2) of one proposal call writing 3 steps and 3 evaluations, then the
    # answer. Input 1,500 + 3 * 1,650 at the root, twice (1,650 + 3 * 1,800) and twice
    # (1,800 + 3 * 1,950) below it, and 1,950 for the answer.
    tree = by["tree of thoughts, b=3 k=2 d=3"]
    assert (tree["calls"], tree["input_tokens"], tree["output_tokens"]) == (21, 37_800, 2_700)
    assert tree["latency_s"] == pytest.approx(5 * (11 + 3 * 2.4) + 5)
    assert round(cents["tree of thoughts, b=3 k=2 d=3"], 1) == 17.1


def test_retry_and_verifier_formulas():
    assert success_within(0.5, 3) == pytest.approx(0.875)
    assert expected_attempts(0.5, 3) == pytest.approx(1.75)
    assert verifier_precision(0.9, 1, 0.2) == pytest.approx(0.978, abs=5e-4)
    assert verifier_precision(0.3, 1, 0.2) == pytest.approx(0.682, abs=5e-4)
    assert nothing_accepted(0.3, 1, 0.2, 5) == pytest.approx((1 - 0.3 - 0.14) ** 5)
    assert cost_per_correct(1.0, 0) is None


def test_small_prices_and_flags_change_the_figures():
    small = pattern_costs(Planning(prompt=1000), PRICE_TIERS["small"])[0]
    assert small.input_tokens == 1000 and small.cost_usd == pytest.approx(
        (1000 * 0.25 + 30 * 2) / 1e6
    )
    rows = json.loads(cli("growth", "--steps", "1", "--prompt", "100", "--format", "json"))
    assert rows[0]["full_replay"] == 100 + 100 + 450
