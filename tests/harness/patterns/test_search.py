"""tot: several samples, one answer."""

import asyncio

import pytest

from harness.experiment import parse_arm
from harness.models import CountingClient, FunctionModel, ModelResponse, text_reply, tool_reply
from harness.patterns import RunContext
from harness.patterns.tot import ANSWER_SYSTEM, EVALUATE_SYSTEM, PROPOSE_SYSTEM
from harness.trace import Trace

from .helpers import DEPOT, run_pattern

# --- tot -----------------------------------------------------------------------------------


def score(value):
    return tool_reply(("evaluation", {"score": value, "reason": ""}))


def kinds(model):
    """P for a proposal, E for an evaluation, A for the answer, per request."""
    names = {PROPOSE_SYSTEM: "P", EVALUATE_SYSTEM: "E", ANSWER_SYSTEM: "A"}
    return "".join(names[r.system] for r in model.requests)


def test_tot_with_beam_1_expands_the_best_scored_proposal_and_makes_2bd_plus_1_calls():
    replies = [
        "step A",
        score(0.2),
        "step B",
        score(0.9),  # level 1: B wins
        "step C",
        score(0.5),
        "step D",
        score(0.5),  # level 2: tie, C (first) wins
        "Answer: 84",
    ]
    outcome, model, _ = run_pattern(parse_arm("tot:breadth=2,beam=1,depth=2").build(), replies)
    assert (outcome.status, outcome.answer, len(model.requests)) == ("answered", "84", 9)
    assert kinds(model) == "PEPEPEPEA"
    assert "1. step B" in model.requests[4].messages[0].content
    assert "1. step B\n2. step C" in model.requests[8].messages[0].content
    assert model.requests[1].tool_choice == "evaluation"
    assert outcome.metrics == {
        "nodes_expanded": 2.0,
        "proposals": 4.0,
        "truncated_proposals": 0.0,
        "unscored": 0.0,
        "levels": 2.0,
    }


def test_tot_beam_keeps_the_beam_best_children_and_expands_each():
    level1 = ["step A", score(0.1), "step B", score(0.9), "step C", score(0.5)]
    from_b = ["step D", score(0.3), "step E", score(0.2), "step F", score(0.1)]
    from_c = ["step G", score(0.4), "step H", score(0.95), "step I", score(0.6)]
    replies = [*level1, *from_b, *from_c, "Answer: 84"]
    outcome, model, _ = run_pattern(parse_arm("tot:breadth=3,beam=2,depth=2").build(), replies)
    assert outcome.status == "answered" and len(model.requests) == 19  # 2*3*(1+2*1)+1
    states = [r.messages[0].content for r in model.requests if r.system == PROPOSE_SYSTEM]
    assert ["1. step B" in s for s in states[3:6]] == [True] * 3
    assert ["1. step C" in s for s in states[6:9]] == [True] * 3
    assert not any("step A" in r.messages[0].content for r in model.requests[6:])
    assert "1. step C\n2. step H" in model.requests[-1].messages[0].content
    assert outcome.metrics["nodes_expanded"] == 3.0


def test_tot_truncated_proposal_is_dropped_and_counted_without_an_evaluation_call():
    replies = [text_reply("step A, and then", finish_reason="length"), "step B", score(0.1)]
    outcome, model, ctx = run_pattern(
        parse_arm("tot:breadth=2,depth=1").build(), [*replies, "Answer: 84"]
    )
    assert kinds(model) == "PPEA"
    assert "step A" not in model.requests[-1].messages[0].content
    assert "1. step B" in model.requests[-1].messages[0].content
    assert (outcome.metrics["truncated_proposals"], outcome.metrics["proposals"]) == (1.0, 2.0)
    assert ctx.trace.count("proposal_dropped") == 1


def test_tot_unparseable_evaluation_is_counted_and_the_child_never_kept():
    replies = ["step A", "I like it", "step B", score(0.1)]  # A's evaluation has no score
    level2 = ["step C", score(0.5), "step D", score(0.5)]
    outcome, model, ctx = run_pattern(
        parse_arm("tot:breadth=2,beam=2,depth=2").build(), [*replies, *level2, "Answer: 84"]
    )
    # Only B is kept and expanded: 4 + 4 + 1 calls, not the 13 two kept nodes would take.
    assert (outcome.status, len(model.requests)) == ("answered", 9)
    assert not any("1. step A" in r.messages[0].content for r in model.requests)
    assert (outcome.metrics["unscored"], outcome.metrics["nodes_expanded"]) == (1.0, 2.0)
    scores = [d["score"] for _, k, d in ctx.trace.events if k == "proposal"]
    assert scores[:2] == [None, 0.1]


def test_tot_with_every_evaluation_unparseable_answers_from_the_root():
    replies = ["step A", "no", "step B", "no", "Answer: 84"]
    outcome, model, _ = run_pattern(parse_arm("tot:breadth=2,depth=3").build(), replies)
    assert (outcome.status, len(model.requests)) == ("answered", 5)
    assert "(none yet)" in model.requests[-1].messages[0].content
    assert (outcome.metrics["unscored"], outcome.metrics["levels"]) == (2.0, 0.0)


def test_tot_truncated_evaluation_gives_no_score():
    cut = ModelResponse(score(0.9).message, finish_reason="length")
    replies = ["step A", cut, "step B", score(0.1), "Answer: 84"]
    outcome, model, _ = run_pattern(parse_arm("tot:breadth=2,depth=1").build(), replies)
    assert "1. step B" in model.requests[-1].messages[0].content
    assert outcome.metrics["unscored"] == 1.0


def always_valid(request):
    if request.system == EVALUATE_SYSTEM:
        return score(0.5)
    return "Answer: 84" if request.system == ANSWER_SYSTEM else "a step"


def run_on(model, spec):
    trace = Trace()
    ctx = RunContext("q", CountingClient(model, trace), "m", DEPOT.toolset(), trace)
    return asyncio.run(parse_arm(spec).build().run(ctx))


@pytest.mark.parametrize(("breadth", "beam", "depth"), [(1, 1, 1), (2, 2, 2), (3, 2, 3), (2, 1, 4)])
def test_tot_makes_at_most_2bk_calls_formula_and_measures_nodes_expanded(breadth, beam, depth):
    model = FunctionModel(always_valid)
    spec = f"tot:breadth={breadth},beam={beam},depth={depth},max_steps=200"
    outcome = run_on(model, spec)
    assert outcome.status == "answered"
    assert len(model.requests) == 2 * breadth * (1 + beam * (depth - 1)) + 1
    assert outcome.metrics["nodes_expanded"] == 1 + beam * (depth - 1)


def test_tot_tight_max_steps_stops_the_search_and_counts_only_nodes_expanded():
    model = FunctionModel(always_valid)
    outcome = run_on(model, "tot:breadth=2,beam=2,depth=2,max_steps=7")
    # root: 2 children (4 calls); the first kept node gets one child (2); the answer (1).
    assert (outcome.status, kinds(model)) == ("answered", "PEPEPEA")
    assert outcome.metrics["nodes_expanded"] == 2.0
    assert outcome.metrics["proposals"] == 3.0


@pytest.mark.parametrize("max_steps", range(3, 16))
def test_tot_reserves_the_answer_call_under_any_max_steps(max_steps):
    model = FunctionModel(always_valid)
    outcome = run_on(model, f"tot:breadth=3,beam=2,depth=3,max_steps={max_steps}")
    assert (outcome.status, outcome.answer) == ("answered", "84")
    assert len(model.requests) <= max_steps and kinds(model).endswith("EA")
    assert max_steps - len(model.requests) <= 1  # it stops only when no child fits
