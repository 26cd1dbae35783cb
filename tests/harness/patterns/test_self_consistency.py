"""self_consistency: a plurality of canonical typed answers, whatever the samples' order."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopbench.graders.exact import grade
from loopbench.harness.arms import parse_arm
from loopbench.harness.events import VoteEvent
from loopbench.harness.patterns.self_consistency import plurality, typed_reading

from .helpers import run_pattern


def answers(*texts):
    return [f"Answer: {t}" for t in texts]


def vote(samples):
    outcome, _, ctx = run_pattern(
        parse_arm(f"self_consistency:samples={len(samples)}").build(), samples
    )
    return outcome, ctx


def test_self_consistency_votes_on_the_typed_reading_and_counts_every_sample():
    replies = ["Answer: 74", "Answer: 84 years", "Answer: eighty-four", "", "Answer: 74"]
    outcome, model, _ = run_pattern(parse_arm("self_consistency:samples=5").build(), replies)
    assert outcome.answer == "74"  # 74 and 84 tie at two: the fixed order puts 74 first
    assert outcome.metrics == {"agreement": 0.4, "parsed_samples": 4, "distinct_readings": 2}
    assert len(model.requests) == 5 and all(r.temperature == 0.7 for r in model.requests)


def test_self_consistency_never_votes_on_raw_text():
    outcome, _ = vote(answers("74", "84 years", "eighty-four"))
    assert outcome.answer == "84 years"  # of the winning reading's texts, the shortest
    assert outcome.metrics["agreement"] == pytest.approx(2 / 3)


def test_self_consistency_votes_on_entities_as_well_as_numbers():
    outcome, ctx = vote(answers("Lyon, 59 more", "Hamburg, 59 more", "Hamburg has 59 more"))
    assert outcome.answer == "Hamburg, 59 more"
    (voted,) = ctx.trace.of(VoteEvent)
    assert voted.winner == "Hamburg, 59 more" and voted.agreement == pytest.approx(2 / 3)


def test_self_consistency_plurality_not_majority_and_not_the_first_answer():
    outcome, _ = vote(answers("54", "84", "74", "84", "64"))
    assert outcome.answer == "84" and outcome.metrics["agreement"] == 0.4
    assert vote(answers("64", "84", "84"))[0].answer == "84"


def test_self_consistency_with_no_parsed_sample_is_unparsed():
    outcome, model, _ = run_pattern(parse_arm("self_consistency:samples=2").build(), ["", " "])
    assert outcome.status == "unparsed" and len(model.requests) == 2


# The case: a subset answer (Bilbao, the depot compared with) joined the group of
# the answers naming Hamburg, and whichever came first won.
BILBAO = [
    "Bilbao, 59",
    "Hamburg has 59 more trucks than Bilbao",
    "Hamburg has 59 more trucks than Bilbao",
]
MOST_TRUCKS = {"numbers": [59], "entities": ["Hamburg"]}


def test_a_subset_answer_votes_for_itself_and_agreement_is_the_winners_share():
    for order in itertools.permutations(BILBAO):
        outcome, _ = vote(answers(*order))
        assert outcome.answer == BILBAO[1]
        assert grade(outcome.answer, **MOST_TRUCKS).correct
        assert outcome.metrics["agreement"] == pytest.approx(2 / 3)
        assert outcome.metrics["distinct_readings"] == 2


def test_a_tie_goes_to_the_reading_its_subset_answers_support_then_to_the_fixed_order():
    assert plurality(["Bilbao, 59", "Hamburg has 59 more than Bilbao"]).winner == (
        "Hamburg has 59 more than Bilbao"
    )
    # Support needs the same numbers: "Bilbao, 60" supports neither.
    tied = ["Lyon, 59", "Hamburg, 59", "Bilbao, 60"]
    assert plurality(tied).winner == "Hamburg, 59"  # (59, hamburg) before (59, lyon) and 60


def test_an_answer_naming_more_entities_does_not_take_the_votes_of_those_naming_some():
    vote = plurality(["Lyon, 59", "Lyon, 59", "Hamburg or Lyon, 59"])
    assert (vote.winner, vote.votes, vote.readings) == ("Lyon, 59", 2, 2)


def test_words_that_name_no_entity_do_not_split_a_reading():
    same = [
        "Hamburg, 59 more",
        "hamburg: 59",
        "It's Hamburg's, by 59",
        "Probably Hamburg (59 more)",
    ]
    assert len({typed_reading(a) for a in same}) == 1
    assert typed_reading("Lyon, 59 more") != typed_reading("Hamburg, 59 more")
    assert typed_reading("Hamburg, 59 more") != typed_reading("Hamburg, 60 more")
    assert typed_reading("84 years") == typed_reading("eighty-four")


SETS = [
    BILBAO,
    ["84 years", "eighty-four", "74", "74", "It is 84."],
    ["Lyon, 59", "Hamburg, 59", "Hamburg depot, 59", "Lyon depot, 59", "Bilbao, 59"],
    ["The Hamburg depot, with 59 more trucks", "Hamburg, 59 more", "Lyon, 59 more", "Lyon: 59"],
    ["6", "six years", "6 years", "9", "5"],
]


@pytest.mark.parametrize("samples", SETS, ids=range(len(SETS)))
def test_every_order_of_the_samples_gives_the_same_answer_agreement_and_grade(samples):
    seen = set()
    for order in itertools.permutations(samples):
        outcome, _ = vote(answers(*order))
        verdict = grade(outcome.answer, **MOST_TRUCKS).correct
        seen.add((outcome.answer, outcome.metrics["agreement"], verdict))
    assert len(seen) == 1, seen


POOL = [
    "59", "fifty-nine", "59 trucks", "Hamburg, 59", "hamburg: 59",
    "Hamburg has 59 more than Bilbao", "Bilbao, 59", "Lyon, 59", "Lyon has 59 more than Bilbao",
    "Hamburg, 60", "Hamburg and Lyon, 59", "84 years", "eighty-four", "84", "Rotterdam depot",
    "the Rotterdam depot", "",
]  # fmt: skip


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(st.lists(st.sampled_from(POOL), min_size=1, max_size=7).flatmap(
    lambda a: st.tuples(st.just(a), st.permutations(a))
))  # fmt: skip
def test_the_vote_does_not_depend_on_the_order_of_the_samples(pair):
    samples, shuffled = pair
    assert plurality(list(shuffled)) == plurality(samples)
