import asyncio

import pytest

from loopbench.harness.arms import parse_arm
from loopbench.harness.events import PlanEvent, StepFailedEvent, ToolCallEvent
from loopbench.harness.models.counting import CountingClient
from loopbench.harness.models.scripted import ScriptedModel, text_reply, tool_reply
from loopbench.harness.patterns.base import RunContext
from loopbench.harness.patterns.rewoo import UnresolvedReference, substitute
from loopbench.harness.trace import Trace
from loopbench.tasks.loading import load_taskset

from .helpers import below_floor, run_pattern


def plan_reply(*steps):
    return tool_reply(("submit_plan", {"steps": [dict(s) for s in steps]}))


def step(tool, args, why=""):
    return {"tool": tool, "args": args, "why": why}


def rewoo(options=""):
    return parse_arm("rewoo" + (f":{options}" if options else "")).build()


def tool_args(ctx):
    return [call.arguments for call in ctx.trace.of(ToolCallEvent)]


def test_two_calls_for_a_three_step_plan():
    planned = plan_reply(
        step("lookup", {"title": "Hamburg depot"}),
        step("lookup", {"title": "Bilbao depot"}),
        step("calc", {"expression": "2018 - 2012"}),
    )
    outcome, model, ctx = run_pattern(rewoo(), [planned, "6 years"])
    assert (outcome.status, outcome.answer, outcome.steps) == ("answered", "6 years", 2)
    assert len(model.requests) == 2 and ctx.trace.count(ToolCallEvent) == 3
    planning, answering = model.requests
    assert [t.name for t in planning.tools] == ["submit_plan"]
    assert planning.tool_choice == "submit_plan" and "lookup:" in planning.system
    assert answering.tools == ()
    assert (
        "#E3 = calc" in answering.messages[0].content
        and "\n6\n" not in answering.messages[0].content
    )


def test_references_are_substituted_at_any_depth():
    planned = plan_reply(
        step("lookup", {"title": "Hamburg depot"}),
        step("calc", {"expression": "2020 - 2012"}),
        step("lookup", {"title": "#E2 #E1"}),
    )
    _, _, ctx = run_pattern(rewoo(), [planned, "x"])
    assert tool_args(ctx)[2]["title"].startswith("8 Larkspur Freight depot, opened in 2012")


def test_substitute_handles_nesting_and_never_eats_e12_as_e1():
    outputs = {1: "one", 12: "twelve"}
    value = {"a": ["#E1", {"b": "#E12 and #E1"}], "n": 3}
    assert substitute(value, outputs, set(), 13) == {"a": ["one", {"b": "twelve and one"}], "n": 3}


def test_forward_reference_fails_that_step_by_name_and_the_plan_goes_on():
    planned = plan_reply(
        step("lookup", {"title": "#E2"}),
        step("lookup", {"title": "Nile"}),
        step("calc", {"expression": "oops"}),
    )
    outcome, model, ctx = run_pattern(rewoo(), [planned, "x"])
    assert outcome.status == "answered"
    assert all("#E" not in str(a) for a in tool_args(ctx))  # the literal never reaches a tool
    evidence = model.requests[1].messages[0].content
    assert "step 1 needs #E2, which has not run" in evidence
    assert "Length: about 6,650 kilometres" in evidence  # step 2 still ran
    assert "Error: calc failed" in evidence  # a failed step is evidence too
    with pytest.raises(UnresolvedReference):
        substitute("#E4", {1: "x"}, set(), 2)


def test_a_plan_longer_than_allowed_is_refused():
    planned = plan_reply(*[step("lookup", {"title": "Nile"})] * 3)
    outcome, model, ctx = run_pattern(rewoo("plan_steps=2"), [planned, "x"])
    assert outcome.status == "refused" and len(model.requests) == 1
    assert ctx.trace.count(ToolCallEvent) == 0


def test_too_small_a_budget_is_refused_before_any_request():
    outcome, model, _ = run_pattern(below_floor("rewoo", 1), ["x"])
    assert outcome.status == "refused" and model.requests == []


def test_prompted_json_mode_reads_the_plan_from_text():
    planned = '{"steps": [{"tool": "lookup", "args": {"title": "Nile"}}]}'
    outcome, model, ctx = run_pattern(rewoo("output=json"), [planned, "6650"])
    assert outcome.status == "answered" and ctx.trace.count(ToolCallEvent) == 1
    assert model.requests[0].tools == () and "JSON schema" in model.requests[0].system


def test_a_step_referring_to_a_failed_tool_step_fails_by_name():
    planned = plan_reply(
        step("calc", {"expression": "oops"}),  # fails with an "Error: ..." text
        step("calc", {"expression": "#E1 + 1"}),
        step("lookup", {"title": "Atlantis"}),  # fails with a "Not found: ..." text
        step("lookup", {"title": "#E3"}),
    )
    outcome, model, ctx = run_pattern(rewoo(), [planned, "x"])
    evidence = model.requests[1].messages[0].content
    assert outcome.status == "answered"
    assert "step 2 needs #E1, which failed" in evidence
    assert "step 4 needs #E3, which failed" in evidence
    assert tool_args(ctx) == [{"expression": "oops"}, {"title": "Atlantis"}]
    failures = [f.step for f in ctx.trace.of(StepFailedEvent)]
    assert failures == [1, 2, 3, 4]


def test_a_step_referring_to_an_unresolved_step_fails_by_name_too():
    planned = plan_reply(
        step("lookup", {"title": "#E3"}),
        step("calc", {"expression": "#E1 - 1"}),
        step("calc", {"expression": "1 + 1"}),
    )
    _, model, ctx = run_pattern(rewoo(), [planned, "x"])
    evidence = model.requests[1].messages[0].content
    assert "step 2 needs #E1, which failed" in evidence
    assert tool_args(ctx) == [{"expression": "1 + 1"}]


def test_no_reference_or_error_text_ever_reaches_a_tool():
    planned = plan_reply(
        step("calc", {"expression": "oops"}),
        step("calc", {"expression": "#E1 * 2"}),
        step("lookup", {"title": "Nile"}),
        step("lookup", {"title": ["#E2", {"deep": "#E1"}]}),
    )
    _, _, ctx = run_pattern(rewoo(), [planned, "x"])
    sent = [str(a) for a in tool_args(ctx)]
    assert len(sent) == 2
    assert not any("#E" in a or "Error" in a for a in sent)


def test_substitute_refuses_a_failed_step_by_name():
    with pytest.raises(UnresolvedReference, match="step 3 needs #E2, which failed"):
        substitute({"x": ["#E2"]}, {1: "a", 2: "b"}, {2}, 3)


def test_a_truncated_plan_is_never_run():
    planned = plan_reply(step("lookup", {"title": "Nile"}))
    cut = type(planned)(planned.message, finish_reason="length")
    outcome, model, ctx = run_pattern(rewoo(), [cut, "x"])
    assert (outcome.status, outcome.answer, len(model.requests)) == ("truncated", None, 1)
    assert ctx.trace.count(ToolCallEvent) == 0 and ctx.trace.count(PlanEvent) == 0


def test_a_truncated_answer_is_not_an_answer():
    planned = plan_reply(step("lookup", {"title": "Nile"}))
    outcome, model, _ = run_pattern(rewoo(), [planned, text_reply("6,6", "length")])
    assert (outcome.status, outcome.answer, len(model.requests)) == ("truncated", None, 2)


def test_the_guards_warning_is_never_substituted_as_an_output():
    planned = plan_reply(
        step("calc", {"expression": "2 + 2"}),
        step("calc", {"expression": "2 + 2"}),  # a repeat: the guard withholds its result
        step("calc", {"expression": "#E2 * 10"}),
        step("calc", {"expression": "#e1 * 10"}),  # references are read in any case
    )
    _, model, ctx = run_pattern(rewoo("guard=on"), [planned, "x"])
    evidence = model.requests[1].messages[0].content
    assert "step 3 needs #E2, which failed" in evidence
    assert tool_args(ctx) == [{"expression": "2 + 2"}] * 2 + [{"expression": "4 * 10"}]


def test_a_task_set_without_tools_is_refused_before_any_request():
    model = ScriptedModel([plan_reply(step("lookup", {"title": "Nile"})), "6650 km"])
    trace = Trace()
    coding = load_taskset("coding")
    ctx = RunContext(
        "q",
        CountingClient(model, trace),
        "m",
        coding.toolset({"lookup": {"variant": "plain"}}),
        trace,
    )
    outcome = asyncio.run(rewoo().run(ctx))
    assert (outcome.status, model.requests) == ("refused", [])
    assert "offers no tools" in outcome.error
