"""reflexion and best_of_n: an external check decides, not the model's own judgement."""

from harness.experiment import parse_arm
from harness.models import tool_reply
from harness.patterns.evidence import check_evidence
from harness.trace import Trace

from .helpers import run_pattern

EVEREST = tool_reply(("lookup", {"title": "Mount Everest"}), ("lookup", {"title": "Kilimanjaro"}))


def calc(expression):
    return tool_reply(("calc", {"expression": expression}))


def trace_of(*calls):
    trace = Trace()
    for tool, args, result in calls:
        trace.emit("tool_call", tool=tool, arguments=args, ok=True, result=result)
    return trace


def test_evidence_check_names_the_number_and_the_entry_that_holds_the_right_one():
    trace = trace_of(
        ("lookup", {"title": "Mount Everest"}, "Height: 8,849 metres."),
        ("calc", {"expression": "8848 - 5895"}, "2953"),
    )
    failure = check_evidence("How much higher?", trace, "2953")
    assert failure == (
        "calc was given 8848, which is not in any looked-up entry; "
        "the entry 'Mount Everest' says 8849"
    )


def test_evidence_check_accepts_numbers_from_observations_and_results():
    trace = trace_of(
        ("lookup", {"title": "A"}, "8,849"),
        ("lookup", {"title": "B"}, "5,895"),
        ("calc", {"expression": "8849 - 5895"}, "2954"),
    )
    assert check_evidence("q", trace, "2,954 metres") is None
    assert "the answer states 2953" in check_evidence("q", trace, "2953")


def test_reflexion_retries_with_the_checks_failure_only_when_it_fails():
    replies = [EVEREST, calc("8848 - 5895"), "2953", calc("8849 - 5895"), "2954"]
    outcome, model, ctx = run_pattern(parse_arm("reflexion").build(), replies)
    assert (outcome.status, outcome.answer, len(model.requests)) == ("answered", "2954", 5)
    feedback = model.requests[3].messages[-1].content
    assert "8848" in feedback and "Mount Everest" in feedback
    attempts = [d for _, kind, d in ctx.trace.events if kind == "attempt"]
    assert [a["answer"] for a in attempts] == ["2953", "2954"]
    assert outcome.metrics == {"attempts": 2, "check_passed": 1.0}


def test_reflexion_stops_at_once_when_the_check_passes():
    replies = [EVEREST, calc("8849 - 5895"), "2954"]
    outcome, model, _ = run_pattern(parse_arm("reflexion:attempts=3").build(), replies)
    assert outcome.answer == "2954" and len(model.requests) == 3


def test_reflexion_tests_check_is_refused_without_test_suites():
    outcome, model, _ = run_pattern(parse_arm("reflexion:check=tests").build(), ["x"])
    assert outcome.status == "refused" and model.requests == []


def test_best_of_n_returns_the_first_candidate_the_evidence_accepts():
    replies = ["It is 2953.", EVEREST, calc("8849 - 5895"), "2954"]
    outcome, model, ctx = run_pattern(parse_arm("best_of_n:n=3").build(), replies)
    assert outcome.answer == "2954" and outcome.metrics == {"candidates": 2, "accepted": 1.0}
    assert all(r.temperature == 0.7 for r in model.requests)
    assert all(r.messages[0].content == ctx.question for r in model.requests)
    assert len(model.requests[1].messages) == 1  # a fresh conversation per candidate


def test_best_of_n_with_nothing_accepted_says_so():
    outcome, _, _ = run_pattern(parse_arm("best_of_n:n=2").build(), ["7", "9"])
    assert outcome.answer == "7" and outcome.metrics == {"candidates": 2, "accepted": 0.0}


def test_best_of_n_model_verifier_is_offered_only_the_verdict():
    verdict = tool_reply(("verdict", {"accept": True, "reason": "fine"}))
    outcome, model, _ = run_pattern(parse_arm("best_of_n:verifier=model").build(), ["7", verdict])
    assert outcome.metrics == {"candidates": 1, "accepted": 1.0} and outcome.steps == 2
    assert [t.name for t in model.requests[1].tools] == ["verdict"]
