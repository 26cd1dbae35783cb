"""reflexion and best_of_n: an external check decides, not the model's own judgement."""

import asyncio

import pytest

from loopbench.harness.arms import parse_arm
from loopbench.harness.events import (
    AttemptUnfinishedEvent,
    LimitReachedEvent,
    ToolCallEvent,
    VerdictEvent,
)
from loopbench.harness.models.counting import CountingClient
from loopbench.harness.models.scripted import FunctionModel, ScriptedModel, tool_reply
from loopbench.harness.models.types import ModelResponse
from loopbench.harness.patterns.base import RunContext
from loopbench.harness.patterns.best_of_n import VERIFIER_SYSTEM
from loopbench.harness.patterns.evidence import check_evidence, entries_found
from loopbench.harness.runner import Job, Runner
from loopbench.harness.trace import Trace

from .helpers import TASKS, run_pattern

EVEREST = tool_reply(("lookup", {"title": "Mount Everest"}), ("lookup", {"title": "Kilimanjaro"}))
LOOKUP = tool_reply(("lookup", {"title": "Nile"}))


def calc(expression):
    return tool_reply(("calc", {"expression": expression}))


def verdict(accept):
    return tool_reply(("verdict", {"accept": accept, "reason": "because"}))


def answered(ctx):
    """The answers traced on the way: role, answer and the check's verdict."""
    return [(a.role, a.answer, a.accepted) for a in ctx.trace.answers()]


def trace_of(*calls):
    trace = Trace()
    for tool, args, result in calls:
        trace.emit(ToolCallEvent(step=1, tool=tool, arguments=args, ok=True, result=result))
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


# --- reflexion ---------------------------------------------------------------------------


def test_reflexion_retries_with_the_checks_failure_only_when_it_fails():
    replies = [EVEREST, calc("8848 - 5895"), "2953", calc("8849 - 5895"), "2954"]
    outcome, model, ctx = run_pattern(parse_arm("reflexion").build(), replies)
    assert (outcome.status, outcome.answer, len(model.requests)) == ("answered", "2954", 5)
    feedback = model.requests[3].messages[-1].content
    assert "8848" in feedback and "Mount Everest" in feedback
    assert answered(ctx) == [
        ("attempt", "2953", False),
        ("attempt", "2954", True),
    ]
    assert outcome.metrics == {"attempts": 2, "check_passed": 1.0}


def test_reflexion_stops_at_once_when_the_check_passes():
    replies = [EVEREST, calc("8849 - 5895"), "2954"]
    outcome, model, _ = run_pattern(parse_arm("reflexion:attempts=3").build(), replies)
    assert outcome.answer == "2954" and len(model.requests) == 3


def test_reflexion_tests_check_is_refused_without_test_suites():
    outcome, model, _ = run_pattern(parse_arm("reflexion:check=tests").build(), ["x"])
    assert outcome.status == "refused" and model.requests == []


def test_reflexion_max_steps_caps_every_attempt_together():
    # Every attempt answers an ungrounded 2953 at once, so the check always fails.
    outcome, model, ctx = run_pattern(
        parse_arm("reflexion:max_steps=3,attempts=5").build(), ["2953"] * 5
    )
    assert len(model.requests) == 3 and outcome.status == "answered"
    assert [a.accepted for a in ctx.trace.answers()] == [False, False, False]


def test_reflexion_attempt_steps_caps_each_attempt_on_its_own():
    replies = [LOOKUP, "2953", LOOKUP, LOOKUP, "2954"]
    outcome, model, ctx = run_pattern(
        parse_arm("reflexion:attempts=2,attempt_steps=2").build(), replies
    )
    # The retry gets its own two calls, not what the first attempt left of four, and when
    # it ends without an answer the first answer stands.
    assert (outcome.status, outcome.answer, len(model.requests)) == ("answered", "2953", 4)
    assert [a.answer for a in ctx.trace.answers()] == ["2953"]
    assert ctx.trace.count(AttemptUnfinishedEvent) == 1


def test_reflexion_last_answer_stands_when_max_steps_leaves_no_call_for_another_attempt():
    replies = [EVEREST, "2953"]  # the check fails, but both calls are spent
    outcome, model, _ = run_pattern(parse_arm("reflexion:max_steps=2,attempts=3").build(), replies)
    assert (outcome.status, outcome.answer, len(model.requests)) == ("answered", "2953", 2)
    assert outcome.metrics == {"attempts": 1, "check_passed": 0.0}


def test_reflexion_retry_gets_only_the_calls_left_and_the_first_answer_is_not_lost():
    replies = [EVEREST, "2953", LOOKUP, "2954"]
    outcome, model, ctx = run_pattern(
        parse_arm("reflexion:max_steps=3,attempts=3").build(), replies
    )
    assert len(model.requests) == 3
    assert answered(ctx) == [("attempt", "2953", False)]
    assert (outcome.status, outcome.answer) == ("answered", "2953")  # the answer stands


# --- best_of_n ---------------------------------------------------------------------------


def test_best_of_n_returns_the_first_candidate_the_evidence_accepts():
    replies = ["It is 2953.", EVEREST, calc("8849 - 5895"), "2954"]
    outcome, model, ctx = run_pattern(parse_arm("best_of_n:n=3").build(), replies)
    assert (outcome.status, outcome.answer) == ("answered", "2954")
    assert outcome.metrics == {"candidates": 2, "answered": 2, "accepted": 1.0}
    assert answered(ctx) == [
        ("candidate", "It is 2953.", False),
        ("candidate", "2954", True),
    ]
    assert all(r.temperature == 0.7 for r in model.requests)
    assert all(r.messages[0].content == ctx.question for r in model.requests)
    assert len(model.requests[1].messages) == 1  # a fresh conversation per candidate


def test_best_of_n_evidence_rejects_an_answer_resting_on_no_entry_found():
    # No number to ground, so only "the evidence entries exist" can tell these apart.
    missing = tool_reply(("lookup", {"title": "No such depot"}))
    replies = ["Hamburg", missing, "Hamburg", LOOKUP, "Hamburg"]
    outcome, model, ctx = run_pattern(parse_arm("best_of_n:n=3").build(), replies)
    assert (outcome.status, outcome.answer, len(model.requests)) == ("answered", "Hamburg", 5)
    verdicts = [(v.accepted, v.reason) for v in ctx.trace.of(VerdictEvent)]
    assert verdicts == [
        (False, "the answer rests on no entry: no look-up found one"),  # none made
        (False, "the answer rests on no entry: no look-up found one"),  # none found
        (True, "rests on Nile"),
    ]
    assert outcome.metrics == {"candidates": 3, "answered": 3, "accepted": 1.0}


def test_entries_found_are_the_successful_look_ups_and_never_the_calculator():
    trace = trace_of(("lookup", {"title": "Nile"}, "6,650 km"), ("calc", {"expression": "1"}, "1"))
    trace.emit(
        ToolCallEvent(step=1, tool="lookup", arguments={"title": "Nowhere"}, ok=False, result="")
    )
    assert entries_found(trace) == ["Nile"]


def test_best_of_n_with_nothing_accepted_returns_no_answer():
    outcome, model, ctx = run_pattern(parse_arm("best_of_n:n=2").build(), ["7", "9"])
    assert (outcome.status, outcome.answer) == ("none_accepted", None)
    assert outcome.metrics == {"candidates": 2, "answered": 2, "accepted": 0.0}
    assert [a.answer for a in ctx.trace.answers()] == ["7", "9"] and len(model.requests) == 2


def test_best_of_n_with_no_candidate_answered_keeps_the_last_status():
    outcome, model, _ = run_pattern(
        parse_arm("best_of_n:n=2,candidate_steps=2").build(), [LOOKUP] * 4
    )
    assert outcome.status == "step_budget" and len(model.requests) == 4
    assert outcome.metrics == {"candidates": 2, "answered": 0, "accepted": 0.0}


def test_best_of_n_max_steps_caps_all_candidates_together():
    outcome, model, _ = run_pattern(
        parse_arm("best_of_n:n=3,candidate_steps=3,max_steps=5").build(), [LOOKUP] * 9
    )
    assert len(model.requests) == 5 and outcome.metrics["candidates"] == 2


def test_best_of_n_model_verifier_is_offered_only_the_verdict():
    outcome, model, _ = run_pattern(
        parse_arm("best_of_n:verifier=model").build(), ["7", verdict(True)]
    )
    assert outcome.metrics == {"candidates": 1, "answered": 1, "accepted": 1.0}
    assert outcome.steps == 2
    assert [t.name for t in model.requests[1].tools] == ["verdict"]


def test_best_of_n_truncated_verdict_accepts_nothing():
    cut = ModelResponse(verdict(True).message, finish_reason="length")
    outcome, _, ctx = run_pattern(parse_arm("best_of_n:n=1,verifier=model").build(), ["7", cut])
    assert outcome.status == "none_accepted"
    assert answered(ctx) == [("candidate", "7", False)]


def run_on(model, pattern):
    trace = Trace()
    ctx = RunContext("q", CountingClient(model, trace), "m", TASKS.toolset(), trace)
    return asyncio.run(pattern.run(ctx)), ctx


def _looks_up_then_answers_and_rejects(request):
    if request.system == VERIFIER_SYSTEM:
        return verdict(False)
    return "2954" if request.messages[-1].role == "tool" else LOOKUP


@pytest.mark.parametrize("max_steps", range(3, 12))
def test_best_of_n_model_verifier_never_leaves_a_candidate_without_its_verdict(max_steps):
    model = FunctionModel(_looks_up_then_answers_and_rejects, keep_requests=True)
    arm = parse_arm(f"best_of_n:n=9,verifier=model,max_steps={max_steps}")
    outcome, ctx = run_on(model, arm.build())
    answered = [
        r for r in model.requests if r.system != VERIFIER_SYSTEM and r.messages[-1].role == "tool"
    ]
    verdicts = [r for r in model.requests if r.system == VERIFIER_SYSTEM]
    assert len(answered) == len(verdicts) == len(ctx.trace.answers()) >= 1
    assert len(model.requests) <= max_steps
    assert outcome.status == "none_accepted"


# --- the runner grades every answer on the way --------------------------------------------


def run_record(spec, replies, task_id="everest-kilimanjaro"):
    task = next(t for t in TASKS.tasks if t.id == task_id)
    runner = Runner(TASKS, ScriptedModel(replies), "m")
    record, _ = asyncio.run(runner.run_one(Job(parse_arm(spec), task, 0)))
    return record


def test_best_of_n_record_grades_every_candidate_and_the_verifiers_verdicts():
    replies = ["2953", verdict(False), "2954", verdict(False), "8849", verdict(True)]
    record = run_record("best_of_n:n=3,verifier=model", replies)
    # expected 2954: one right candidate rejected, then a wrong one accepted
    assert (record.status, record.answer, record.correct) == ("answered", "8849", False)
    assert record.first_correct is False
    assert {k: record.metrics[k] for k in ("judged", "judged_correct")} == {
        "judged": 3.0,
        "judged_correct": 1.0,
    }
    assert (record.metrics["accepted_correct"], record.metrics["accepted_wrong"]) == (0.0, 1.0)


def test_best_of_n_record_when_the_right_candidate_is_accepted():
    replies = ["2953", verdict(False), "2954 metres", verdict(True)]
    record = run_record("best_of_n:n=3,verifier=model", replies)
    assert (record.correct, record.first_correct) == (True, False)
    assert (record.metrics["accepted_correct"], record.metrics["accepted_wrong"]) == (1.0, 0.0)


def test_reflexion_record_says_the_answer_went_wrong_to_right():
    replies = [EVEREST, "2953", calc("8849 - 5895"), "2954"]
    record = run_record("reflexion", replies)
    assert (record.correct, record.first_correct) == (True, False)
    assert record.metrics["judged"] == 2.0 and record.metrics["accepted_wrong"] == 0.0


def test_best_of_n_a_candidate_is_traced_before_its_verdict_so_a_limit_keeps_it():
    # The candidate's call spends the token ceiling, so its verdict call is never made.
    outcome, model, ctx = run_pattern(
        parse_arm("best_of_n:verifier=model,max_tokens=20").build(), ["2954", "x"]
    )
    assert outcome.status == "token_budget" and len(model.requests) == 1
    assert answered(ctx) == [("candidate", "2954", None)]
    [limit] = ctx.trace.of(LimitReachedEvent)
    assert limit.last_answer == "2954"


def test_self_consistency_samples_are_traced_so_a_limit_keeps_the_last():
    outcome, _, ctx = run_pattern(
        parse_arm("self_consistency:samples=3,max_tokens=60").build(), ["Answer: 84"] * 3
    )
    assert outcome.status == "token_budget"
    [limit] = ctx.trace.of(LimitReachedEvent)
    assert limit.last_answer == "84" and ctx.trace.answers()[0].role == "sample"
