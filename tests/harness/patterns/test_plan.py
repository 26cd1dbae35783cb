from loopbench.harness.arms import parse_arm
from loopbench.harness.events import PlanEvent, ToolCallEvent
from loopbench.harness.models.scripted import text_reply, tool_reply

from .helpers import below_floor, run_pattern

LOOKUP = tool_reply(("lookup", {"title": "Nile"}))


def plan(options=""):
    return parse_arm("plan" + (f":{options}" if options else "")).build()


def test_plans_without_tools_then_acts_with_the_plan_in_the_system_prompt():
    replies = ["1. Look up the Nile.\n2. Answer.", LOOKUP, "6,650 km"]
    outcome, model, ctx = run_pattern(plan(), replies)
    assert (outcome.status, outcome.answer, outcome.steps) == ("answered", "6,650 km", 3)
    first, second = model.requests[0], model.requests[1]
    assert first.tools == () and "lookup" in first.system  # tools described, not offered
    assert [t.name for t in second.tools] == ["lookup", "calc"]
    assert second.system.endswith("Follow this plan:\n1. Look up the Nile.\n2. Answer.")
    assert all(r.messages[0].content == ctx.question for r in model.requests)


def test_step_numbers_continue_after_the_planning_call():
    _, _, ctx = run_pattern(plan(), ["plan", LOOKUP, "x"])
    [call] = ctx.trace.of(ToolCallEvent)
    assert call.step == 2


def test_fewer_than_two_steps_is_refused_before_any_request():
    outcome, model, _ = run_pattern(below_floor("plan", 1), ["plan", "x"])
    assert outcome.status == "refused" and model.requests == []


def test_a_planning_turn_that_calls_a_tool_is_refused():
    outcome, model, ctx = run_pattern(plan(), [LOOKUP, "x"])
    assert outcome.status == "refused" and "tried to invoke a tool" in outcome.error
    assert len(model.requests) == 1 and ctx.trace.count(ToolCallEvent) == 0


def test_the_planning_call_counts_against_the_budget():
    outcome, model, _ = run_pattern(plan("max_steps=3"), ["plan"] + [LOOKUP] * 5)
    assert outcome.status == "step_budget" and len(model.requests) == 3 and outcome.steps == 3


def test_a_truncated_plan_is_not_acted_on():
    cut = text_reply("1. Look up the", "length")
    outcome, model, ctx = run_pattern(plan(), [cut, LOOKUP, "x"])
    assert (outcome.status, outcome.answer, len(model.requests)) == ("truncated", None, 1)
    assert ctx.trace.count(PlanEvent) == 0 and ctx.trace.count(ToolCallEvent) == 0


def test_a_truncated_planning_turn_calling_a_tool_is_truncated_not_dispatched():
    cut = type(LOOKUP)(LOOKUP.message, finish_reason="length")
    outcome, model, ctx = run_pattern(plan(), [cut, "x"])
    assert outcome.status == "truncated" and len(model.requests) == 1
    assert ctx.trace.count(ToolCallEvent) == 0


def test_a_truncated_turn_while_acting_is_not_dispatched():
    half = tool_reply(("lookup", '{"title": "Ni'))
    cut = type(half)(half.message, finish_reason="length")
    outcome, model, ctx = run_pattern(plan(), ["plan", cut, "x"])
    assert (outcome.status, outcome.steps, len(model.requests)) == ("truncated", 2, 2)
    assert ctx.trace.count(ToolCallEvent) == 0
