"""tot: B distinct approaches per node, each scored, the K best kept, then an answer."""

import asyncio
import itertools
import json

import pytest
from click.testing import CliRunner

from loopbench.harness.arms import parse_arm
from loopbench.harness.cli.main import main
from loopbench.harness.events import ProposalDroppedEvent, ProposalEvent
from loopbench.harness.models.counting import CountingClient
from loopbench.harness.models.scripted import FunctionModel, text_reply, tool_reply
from loopbench.harness.models.types import ModelResponse
from loopbench.harness.patterns.base import RunContext
from loopbench.harness.patterns.tot import ANSWER_SYSTEM, EVALUATE_SYSTEM
from loopbench.harness.patterns.tot_proposals import SAMPLE_SYSTEM
from loopbench.harness.report.cost import tree_calls
from loopbench.harness.trace import Trace

from .helpers import TASKS, run_pattern


def listed(*approaches):
    return tool_reply(("approaches", {"approaches": list(approaches)}))


def score(value):
    return tool_reply(("evaluation", {"score": value, "reason": ""}))


def kinds(model):
    """L for a proposal list, P for a sampled proposal, E an evaluation, A the answer."""
    names = {SAMPLE_SYSTEM: "P", EVALUATE_SYSTEM: "E", ANSWER_SYSTEM: "A"}
    return "".join(
        "L" if r.tool_choice == "approaches" else names[r.system] for r in model.requests
    )


def tot(options):
    return parse_arm(f"tot:{options}").build()


def test_one_structured_call_proposes_the_breadth_and_the_best_scored_is_expanded():
    replies = [
        listed("step A", "step B"),
        score(0.2),
        score(0.9),  # level 1: B wins
        listed("step C", "step D"),
        score(0.5),
        score(0.5),  # level 2: a tie, C (the earlier) wins
        "Answer: 84",
    ]
    outcome, model, _ = run_pattern(tot("breadth=2,beam=1,depth=2"), replies)
    assert (outcome.status, outcome.answer, kinds(model)) == ("answered", "84", "LEELEEA")
    first = model.requests[0]
    assert "Propose 2 distinct next steps" in first.system and first.temperature == 0.8
    assert "Proposed next step: step B" in model.requests[2].messages[0].content
    assert "1. step B" in model.requests[3].messages[0].content
    assert "1. step B\n2. step C" in model.requests[-1].messages[0].content
    assert outcome.metrics == {
        "nodes_expanded": 2.0,
        "proposals": 4.0,
        "duplicate_proposals": 0.0,
        "truncated_proposals": 0.0,
        "unparsed_proposals": 0.0,
        "unscored": 0.0,
        "levels": 2.0,
    }


def test_the_beam_keeps_the_beam_best_children_and_expands_each():
    level1 = [listed("step A", "step B", "step C"), score(0.1), score(0.9), score(0.5)]
    from_b = [listed("step D", "step E", "step F"), score(0.3), score(0.2), score(0.1)]
    from_c = [listed("step G", "step H", "step I"), score(0.4), score(0.95), score(0.6)]
    replies = [*level1, *from_b, *from_c, "Answer: 84"]
    outcome, model, _ = run_pattern(tot("breadth=3,beam=2,depth=2"), replies)
    assert outcome.status == "answered" and len(model.requests) == tree_calls(3, 2, 2) == 13
    states = [r.messages[0].content for r in model.requests if r.tool_choice == "approaches"]
    assert ["1. step B" in s for s in states] == [False, True, False]
    assert "1. step C" in states[2] and not any("step A" in s for s in states)
    assert "1. step C\n2. step H" in model.requests[-1].messages[0].content
    assert outcome.metrics["nodes_expanded"] == 3.0


def test_a_repeated_approach_is_dropped_and_counted_and_a_long_list_cut_to_the_breadth():
    replies = [
        listed("Look up Hamburg", "look up hamburg.", "Look up Bilbao", "Look up Lyon"),
        score(0.4),
        score(0.6),
        "Answer: 84",
    ]
    outcome, model, ctx = run_pattern(tot("breadth=2,depth=1"), replies)
    assert kinds(model) == "LEEA"  # the repeat is not scored; Lyon is past the breadth
    judged = [r.messages[0].content.rsplit(": ", 1)[1] for r in model.requests[1:3]]
    assert judged == ["Look up Hamburg", "Look up Bilbao"]
    assert (outcome.metrics["duplicate_proposals"], outcome.metrics["proposals"]) == (1.0, 3.0)
    dropped = ctx.trace.of(ProposalDroppedEvent)
    assert [(d.reason, d.text) for d in dropped] == [("duplicate", "look up hamburg.")]


def test_a_list_that_does_not_parse_or_is_cut_off_gives_the_node_no_children():
    cut = ModelResponse(listed("step A", "step B").message, finish_reason="length")
    outcome, model, _ = run_pattern(tot("breadth=2,depth=2"), [cut, "Answer: 84"])
    assert (kinds(model), outcome.metrics["truncated_proposals"]) == ("LA", 1.0)
    assert "(none yet)" in model.requests[-1].messages[0].content
    outcome, model, _ = run_pattern(tot("breadth=2,depth=2"), ["step A", "Answer: 84"])
    assert (kinds(model), outcome.metrics["unparsed_proposals"]) == ("LA", 1.0)


def test_sampled_proposals_are_one_call_each_and_a_repeat_is_not_scored():
    replies = ["step A", score(0.2), "Step A.", "step B", score(0.9), "Answer: 84"]
    outcome, model, _ = run_pattern(tot("breadth=3,depth=1,propose=sample"), replies)
    assert (outcome.answer, kinds(model)) == ("84", "PEPPEA")
    assert all(r.temperature == 0.8 for r in model.requests if r.system == SAMPLE_SYSTEM)
    assert "1. step B" in model.requests[-1].messages[0].content
    assert outcome.metrics["duplicate_proposals"] == 1.0


def test_a_truncated_sampled_proposal_is_dropped_and_counted_without_an_evaluation_call():
    replies = [text_reply("step A, and then", finish_reason="length"), "step B", score(0.1)]
    outcome, model, ctx = run_pattern(
        tot("breadth=2,depth=1,propose=sample"), [*replies, "Answer: 84"]
    )
    assert kinds(model) == "PPEA"
    assert "step A" not in model.requests[-1].messages[0].content
    assert (outcome.metrics["truncated_proposals"], outcome.metrics["proposals"]) == (1.0, 2.0)
    assert ctx.trace.count(ProposalDroppedEvent) == 1


def test_an_unparseable_evaluation_is_counted_and_the_child_never_kept():
    replies = [listed("step A", "step B"), "I like it", score(0.1)]  # A's evaluation: no score
    level2 = [listed("step C", "step D"), score(0.5), score(0.5)]
    outcome, model, ctx = run_pattern(
        tot("breadth=2,beam=2,depth=2"), [*replies, *level2, "Answer: 84"]
    )
    # Only B is kept and expanded: 3 + 3 + 1 calls, not the 10 two kept nodes would take.
    assert (outcome.status, len(model.requests)) == ("answered", 7)
    assert not any("1. step A" in r.messages[0].content for r in model.requests)
    assert (outcome.metrics["unscored"], outcome.metrics["nodes_expanded"]) == (1.0, 2.0)
    scores = [p.score for p in ctx.trace.of(ProposalEvent)]
    assert scores[:2] == [None, 0.1]


def test_with_every_evaluation_unparseable_it_answers_from_the_root():
    replies = [listed("step A", "step B"), "no", "no", "Answer: 84"]
    outcome, model, _ = run_pattern(tot("breadth=2,depth=3"), replies)
    assert (outcome.status, len(model.requests)) == ("answered", 4)
    assert "(none yet)" in model.requests[-1].messages[0].content
    assert (outcome.metrics["unscored"], outcome.metrics["levels"]) == (2.0, 0.0)


def test_a_truncated_evaluation_gives_no_score():
    cut = ModelResponse(score(0.9).message, finish_reason="length")
    replies = [listed("step A", "step B"), cut, score(0.1), "Answer: 84"]
    outcome, model, _ = run_pattern(tot("breadth=2,depth=1"), replies)
    assert "1. step B" in model.requests[-1].messages[0].content
    assert outcome.metrics["unscored"] == 1.0


def test_a_truncated_final_answer_is_not_graded():
    cut = text_reply("Working: 1973 - 1889 = 84\nAnswer: 84", finish_reason="length")
    replies = [listed("step A"), score(0.5), cut]
    outcome, model, _ = run_pattern(tot("breadth=1,depth=1"), replies)
    assert (outcome.status, outcome.answer, kinds(model)) == ("truncated", None, "LEA")


SAMPLED = itertools.count()


def always_valid(request):
    if request.tool_choice == "approaches":
        breadth = int(request.system.split("Propose ")[1].split()[0])
        return listed(*(f"approach {i}" for i in range(breadth)))
    if request.system == EVALUATE_SYSTEM:
        return score(0.5)
    if request.system == SAMPLE_SYSTEM:
        return f"step {next(SAMPLED)}"
    return "Answer: 84"


def run_on(model, spec):
    trace = Trace()
    ctx = RunContext("q", CountingClient(model, trace), "m", TASKS.toolset(), trace)
    return asyncio.run(parse_arm(spec).build().run(ctx))


SHAPES = [(1, 1, 1), (2, 2, 2), (3, 2, 3), (2, 1, 4), (1, 3, 3), (2, 3, 4), (3, 5, 2), (4, 2, 1)]


@pytest.mark.parametrize(("breadth", "beam", "depth"), SHAPES)
def test_cost_prices_tot_at_exactly_the_most_calls_the_arm_makes(breadth, beam, depth):
    model = FunctionModel(always_valid, keep_requests=True)
    outcome = run_on(model, f"tot:breadth={breadth},beam={beam},depth={depth},max_steps=500")
    assert outcome.status == "answered"
    flags = ["--breadth", str(breadth), "--beam", str(beam), "--depth", str(depth)]
    result = CliRunner().invoke(main, ["cost", "patterns", "--format", "json", *flags])
    (tree,) = [r for r in json.loads(result.output) if r["pattern"].startswith("tot (loopbench")]
    assert len(model.requests) == tree_calls(breadth, beam, depth) == tree["calls"]
    nodes = outcome.metrics["nodes_expanded"]
    assert len(model.requests) == nodes * (1 + breadth) + 1
    sampled = FunctionModel(always_valid, keep_requests=True)
    spec = f"tot:breadth={breadth},beam={beam},depth={depth},max_steps=500,propose=sample"
    run_on(sampled, spec)
    assert len(sampled.requests) == nodes * 2 * breadth + 1


def test_a_tight_max_steps_stops_the_search_and_counts_only_nodes_expanded():
    model = FunctionModel(always_valid, keep_requests=True)
    outcome = run_on(model, "tot:breadth=2,beam=2,depth=2,max_steps=7")
    # root: a list and 2 scores (3 calls); the first kept node: a list and 2 scores; answer.
    assert (outcome.status, kinds(model)) == ("answered", "LEELEEA")
    assert outcome.metrics["nodes_expanded"] == 2.0


@pytest.mark.parametrize("propose", ["list", "sample"])
@pytest.mark.parametrize("max_steps", range(3, 16))
def test_tot_reserves_the_answer_call_under_any_max_steps(max_steps, propose):
    model = FunctionModel(always_valid, keep_requests=True)
    spec = f"tot:breadth=3,beam=2,depth=3,max_steps={max_steps},propose={propose}"
    outcome = run_on(model, spec)
    assert (outcome.status, outcome.answer) == ("answered", "84")
    assert len(model.requests) <= max_steps and kinds(model).endswith("EA")
    assert max_steps - len(model.requests) <= 1  # it stops only when no child fits
