"""The cost arithmetic reproduces the chapter's published figures (seed 003), and prices
loopbench's tot arm, whose calls differ from the chapter's tree, in a row of its own."""

import json

import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.report.cost import (
    PRICE_TIERS,
    Planning,
    cost_per_correct,
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


#: The chapter's cost table (seed 003, section 3.10, from ch3_cost.py; planning numbers P
#: 1,500, T 150, A 30, O 300, C 350, L 250, EI 600, EO 80, E 20 tokens, 2 s a call, 0.02 s
#: an output token, 0.5 s a tool call; frontier prices $3/$15 per million): pattern,
#: calls, input tokens, output tokens, latency s, cost $. The seed's text gives 15,750
#: input tokens for the loop and 8,150 for the plan at five steps, and the tree's 36 calls,
#: 62,100 tokens and $0.2552 (b*d generation and b^2*d evaluation calls).
CHAPTER_TABLE = [
    ("direct", "1", "1,500", "30", "2.6", "0.00495"),
    ("chain of thought", "1", "1,500", "350", "9", "0.00975"),
    ("ReAct, 5 tool steps", "6", "15,750", "900", "32.5", "0.06075"),
    ("plan-and-execute, 5 steps", "7", "8,150", "800", "16.1", "0.03645"),
    ("tree of thoughts, b=3 d=3", "36", "62,100", "4,590", "40.2", "0.2552"),
    ("best-of-5, model verifier", "10", "16,750", "1,850", "11.4", "0.078"),
    ("best-of-5, free checker (tests)", "5", "7,500", "1,750", "9", "0.04875"),
]
#: Cost per correct answer in cents, as the seed's text gives them: chain of thought 4.4,
#: the plain loop 10.9, a plan assumed to reach 80% 4.6, a tree assumed to reach 90% 28.
CHAPTER_CENTS = {
    "chain of thought": "4.4",
    "ReAct, 5 tool steps": "10.9",
    "plan-and-execute, 5 steps": "4.6",
    "tree of thoughts, b=3 d=3": "28",
}


def markdown_rows(output: str) -> dict[str, dict[str, str]]:
    lines = [line for line in output.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]
    return {row[0]: dict(zip(header, row, strict=True)) for row in rows}


def test_by_default_every_row_of_the_chapters_table_is_printed_as_published():
    rows = markdown_rows(cli("patterns"))
    columns = ("pattern", "calls", "input_tokens", "output_tokens", "latency_s", "cost_usd")
    for published in CHAPTER_TABLE:
        assert tuple(rows[published[0]][c] for c in columns) == published
    assert list(rows)[: len(CHAPTER_TABLE)] == [row[0] for row in CHAPTER_TABLE]
    for name, cents in CHAPTER_CENTS.items():
        per_correct = float(rows[name]["cost_per_correct_usd"])
        assert f"{100 * per_correct:.{len(cents.partition('.')[2])}f}" == cents


def test_loopbenchs_own_tot_arm_is_priced_in_a_row_of_its_own():
    rows = {r["pattern"]: r for r in json.loads(cli("patterns", "--format", "json"))}
    assert set(rows["direct"]) == {
        "pattern",
        "calls",
        "input_tokens",
        "output_tokens",
        "latency_s",
        "cost_usd",
    }
    react = rows["ReAct, 5 tool steps"]
    assert (react["calls"], react["input_tokens"], react["output_tokens"]) == (6, 15_750, 900)
    assert react["latency_s"] == pytest.approx(32.5)
    # The tot arm: five nodes (1 + 2 + 2) of one proposal call writing 3 steps and 3
    # evaluations, then the answer. Input 1,500 + 3 * 1,650 at the root, twice
    # (1,650 + 3 * 1,800) and twice (1,800 + 3 * 1,950) below it, and 1,950 for the answer.
    tree = rows["tot (loopbench: b=3 k=2 d=3)"]
    assert (tree["calls"], tree["input_tokens"], tree["output_tokens"]) == (21, 37_800, 2_700)
    assert tree["latency_s"] == pytest.approx(5 * (11 + 3 * 2.4) + 5)
    assert tree["cost_usd"] == pytest.approx(0.1539)
    shown = markdown_rows(cli("patterns"))["tot (loopbench: b=3 k=2 d=3)"]
    assert (shown["cost_usd"], shown["accuracy"]) == ("0.1539", "90% (assumed)")
    # The chapter's tree follows --breadth and --depth, the arm's --beam too.
    wider = {
        r["pattern"]: r
        for r in json.loads(cli("patterns", "--breadth", "2", "--beam", "1", "--format", "json"))
    }
    assert wider["tree of thoughts, b=2 d=3"]["calls"] == 2 * 3 + 4 * 3
    assert wider["tot (loopbench: b=2 k=1 d=3)"]["calls"] == 3 * (1 + 2) + 1


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


def test_compaction_counts_each_older_step_as_its_line():
    def compaction(*flags):
        return json.loads(cli("growth", "--steps", "5", *flags, "--format", "json"))[0]

    # Calls 0..5 re-read 0, 1, 2, 2, 2, 2 steps in full (450 tokens each) and 0, 0, 0, 1, 2,
    # 3 older steps as a line each.
    assert compaction("--window", "2")["compaction"] == 6 * 1500 + 9 * 450
    assert compaction("--window", "2", "--step-line", "40")["compaction"] == 6 * 1500 + (
        9 * 450 + 6 * 40
    )
    assert compaction("--step-line", "40")["full_replay"] == 15_750  # nothing else moves
