"""self_consistency and tot: several samples, one answer."""

from harness.experiment import parse_arm
from harness.models import tool_reply

from .helpers import run_pattern


def test_self_consistency_votes_on_the_typed_reading_plurality_first_seen():
    replies = ["Answer: 74", "Answer: 84 years", "Answer: eighty-four", "no answer", "Answer: 74"]
    outcome, model, _ = run_pattern(parse_arm("self_consistency:samples=5").build(), replies)
    assert outcome.answer == "74"  # 74 and 84 tie at two; 74 came first
    assert outcome.metrics == {"agreement": 0.4, "parsed_samples": 4}
    assert len(model.requests) == 5 and all(r.temperature == 0.7 for r in model.requests)


def test_self_consistency_plurality_not_majority():
    replies = ["Answer: 84", "Answer: 74", "Answer: 84", "Answer: 64", "Answer: 54"]
    outcome, _, _ = run_pattern(parse_arm("self_consistency").build(), replies)
    assert outcome.answer == "84" and outcome.metrics["agreement"] == 0.4


def score(value):
    return tool_reply(("evaluation", {"score": value, "reason": ""}))


def test_tot_expands_the_best_scored_proposal_and_makes_2bd_plus_1_calls():
    replies = [
        "step A",
        "step B",
        score(0.2),
        score(0.9),  # level 1: B wins
        "step C",
        "step D",
        score(0.5),
        score(0.5),  # level 2: tie, C (first) wins
        "Answer: 84",
    ]
    outcome, model, _ = run_pattern(parse_arm("tot:breadth=2,depth=2").build(), replies)
    assert (outcome.status, outcome.answer, len(model.requests)) == ("answered", "84", 9)
    assert "1. step B" in model.requests[4].messages[0].content
    assert "1. step B\n2. step C" in model.requests[8].messages[0].content
    assert model.requests[2].tool_choice == "evaluation"
    assert outcome.metrics == {"nodes_expanded": 4.0}
