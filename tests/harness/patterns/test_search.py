"""self_consistency and tot: several samples, one answer."""

import asyncio

import pytest

from harness.experiment import parse_arm
from harness.models import CountingClient, FunctionModel, ModelResponse, text_reply, tool_reply
from harness.patterns import RunContext
from harness.patterns.self_consistency import plurality, same_answer, typed_reading
from harness.patterns.tot import ANSWER_SYSTEM, EVALUATE_SYSTEM, PROPOSE_SYSTEM
from harness.trace import Trace

from .helpers import DEPOT, run_pattern

# --- self_consistency --------------------------------------------------------------------


def answers(*texts):
    return [f"Answer: {t}" for t in texts]


def test_self_consistency_votes_on_the_typed_reading_plurality_first_seen():
    replies = ["Answer: 74", "Answer: 84 years", "Answer: eighty-four", "no answer", "Answer: 74"]
    outcome, model, _ = run_pattern(parse_arm("self_consistency:samples=5").build(), replies)
    assert outcome.answer == "74"  # 74 and 84 tie at two; 74 came first
    assert outcome.metrics == {"agreement": 0.4, "parsed_samples": 4}
    assert len(model.requests) == 5 and all(r.temperature == 0.7 for r in model.requests)


def test_self_consistency_never_votes_on_raw_text():
    replies = answers("74", "84 years", "eighty-four")
    outcome, _, _ = run_pattern(parse_arm("self_consistency:samples=3").build(), replies)
    assert outcome.answer == "84 years"  # the first answer of the winning reading
    assert outcome.metrics["agreement"] == pytest.approx(2 / 3)


def test_self_consistency_votes_on_entities_as_well_as_numbers():
    replies = answers("Lyon, 59 more", "Hamburg, 59 more", "Hamburg has 59 more")
    outcome, _, ctx = run_pattern(parse_arm("self_consistency:samples=3").build(), replies)
    assert outcome.answer == "Hamburg, 59 more"
    (vote,) = [d for _, k, d in ctx.trace.events if k == "vote"]
    assert vote["winner"] == "Hamburg, 59 more" and vote["agreement"] == pytest.approx(2 / 3)


def test_self_consistency_ties_go_to_the_reading_seen_first_not_to_the_first_answer():
    assert plurality(["64", "84", "74", "74", "84"]) == ("84", 2)
    assert plurality(["Lyon, 59 more", "Hamburg, 59 more", "Hamburg, 59 more"]) == (
        "Hamburg, 59 more",
        2,
    )


def test_self_consistency_plurality_not_majority():
    replies = ["Answer: 84", "Answer: 74", "Answer: 84", "Answer: 64", "Answer: 54"]
    outcome, _, _ = run_pattern(parse_arm("self_consistency").build(), replies)
    assert outcome.answer == "84" and outcome.metrics["agreement"] == 0.4


def test_self_consistency_does_not_just_take_the_first_answer():
    outcome, _, _ = run_pattern(
        parse_arm("self_consistency:samples=3").build(), answers("64", "84", "84")
    )
    assert outcome.answer == "84"


def test_self_consistency_with_no_parsed_sample_is_unparsed():
    outcome, model, _ = run_pattern(parse_arm("self_consistency:samples=2").build(), ["a", "b"])
    assert outcome.status == "unparsed" and len(model.requests) == 2


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


HAMBURG = [
    "The Hamburg depot, with 59 more trucks",
    "Hamburg, 59 more",
    "hamburg: 59",
    "the hamburg depot has 59 more",
    "It's Hamburg's, by 59",
    "Probably Hamburg (59 more)",
]


def test_self_consistency_groups_one_entity_however_the_answer_is_worded():
    first = typed_reading(HAMBURG[0])
    assert all(same_answer(first, typed_reading(a)) for a in HAMBURG)
    assert all(same_answer(typed_reading(a), first) for a in HAMBURG)
    assert not same_answer(typed_reading("Lyon, 59 more"), typed_reading("Hamburg, 59 more"))
    assert not same_answer(typed_reading("Hamburg, 59 more"), typed_reading("Hamburg, 60 more"))
    assert not same_answer(typed_reading("59"), typed_reading("Hamburg, 59 more"))


def test_self_consistency_picks_the_entity_the_plurality_named_whatever_its_wording():
    answers = ["Lyon, 59 more", HAMBURG[3], "Lyon has 59 more", HAMBURG[1], HAMBURG[4]]
    assert plurality(answers) == (HAMBURG[3], 3)
    winner, votes = plurality(["Lyon, 59 more", "Lyon has 59 more", *HAMBURG[:2]])
    assert (winner, votes) == ("Lyon, 59 more", 2)  # a tie goes to the group formed first
