import pytest

from loopbench.harness.arms import ArmError, parse_arm
from loopbench.harness.events import ParseFailureEvent, RepeatedActionEvent, ToolCallEvent
from loopbench.harness.models.scripted import tool_reply
from loopbench.harness.models.types import ModelAPIError
from loopbench.harness.patterns.acting import GUARD_OBSERVATION

from .helpers import below_floor, run_pattern


def react(options=""):
    return parse_arm(f"react{':' + options if options else ''}").build()


def test_runs_several_tool_calls_from_one_turn_and_ends_on_text():
    replies = [
        tool_reply(("lookup", {"title": "Hamburg depot"}), ("lookup", {"title": "Bilbao depot"})),
        tool_reply(("calc", {"expression": "2018 - 2012"})),
        "6 years",
    ]
    outcome, model, ctx = run_pattern(react(), replies)
    assert (outcome.status, outcome.answer, outcome.steps) == ("answered", "6 years", 3)
    second = model.requests[1].messages
    assert [m.role for m in second] == ["user", "assistant", "tool", "tool"]
    assert [m.tool_call_id for m in second[2:]] == ["call_0", "call_1"]
    assert "opened in 2018" in second[3].content
    assert ctx.trace.count(ToolCallEvent) == 3
    assert [t.name for t in model.requests[0].tools] == ["lookup", "calc"]


def test_prior_conversation_opens_every_request():
    replies = [
        tool_reply(("lookup", {"title": "Nile"})),
        tool_reply(("lookup", {"title": "Danube"})),
        "3800",
    ]
    _, model, _ = run_pattern(react(), replies)
    for earlier, later in zip(model.requests, model.requests[1:], strict=False):
        assert later.messages[: len(earlier.messages)] == earlier.messages


def test_bad_arguments_come_back_as_a_tool_result():
    replies = [tool_reply(("lookup", "{not json")), tool_reply(("lookup", {"name": "x"})), "done"]
    outcome, model, _ = run_pattern(react(), replies)
    assert outcome.status == "answered"
    assert "not valid JSON" in model.requests[1].messages[-1].content
    assert "title: Field required" in model.requests[2].messages[-1].content


def test_finish_tool_requires_evidence_and_ends_the_run():
    replies = [
        "It is 6.",
        tool_reply(("final_answer", {"answer": "6", "evidence": []})),
        tool_reply(("final_answer", {"answer": "6", "evidence": ["Hamburg depot"]})),
    ]
    outcome, model, ctx = run_pattern(react("finish=tool"), replies)
    assert (outcome.status, outcome.answer, outcome.steps) == ("answered", "6", 3)
    assert ctx.trace.count(ParseFailureEvent) == 1
    assert "evidence: List should have at least 1 item" in model.requests[2].messages[-1].content
    assert "final_answer" in [t.name for t in model.requests[0].tools]


def test_step_budget_and_refusal():
    looping = [tool_reply(("lookup", {"title": "Nile"}))] * 4
    outcome, model, _ = run_pattern(react("max_steps=2"), looping)
    assert outcome.status == "step_budget" and len(model.requests) == 2
    with pytest.raises(ArmError, match="needs max_steps of at least"):
        react("max_steps=0")  # refused before any run
    refused, model, _ = run_pattern(below_floor("react", 0), looping)
    assert refused.status == "refused" and model.requests == []


def test_guard_replaces_a_repeated_result():
    replies = [tool_reply(("lookup", {"title": "Nile"}))] * 2 + ["x"]
    _, model, ctx = run_pattern(react("guard=on"), replies)
    assert model.requests[2].messages[-1].content == GUARD_OBSERVATION
    assert ctx.trace.count(RepeatedActionEvent) == 1


def test_truncated_tool_call_is_never_dispatched():
    half = tool_reply(("lookup", '{"title": "Ni'))
    truncated = type(half)(half.message, finish_reason="length")
    outcome, _, ctx = run_pattern(react(), [truncated])
    assert outcome.status == "truncated" and ctx.trace.count(ToolCallEvent) == 0


def test_api_error_mid_run_returns_what_was_done():
    outcome, model, _ = run_pattern(
        react(), [tool_reply(("lookup", {"title": "Nile"})), ModelAPIError("x")]
    )
    assert (outcome.status, outcome.steps, outcome.error) == ("api_error", 2, "x")
    assert outcome.messages == list(model.requests[-1].messages)  # as of the last request
    assert outcome.messages[-1].role == "tool"


def test_each_request_keeps_the_conversation_as_it_was_when_sent():
    replies = [tool_reply(("lookup", {"title": "Nile"})), "6650"]
    _, model, _ = run_pattern(react(), replies)
    assert [len(r.messages) for r in model.requests] == [1, 3]
