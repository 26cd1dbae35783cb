import asyncio

import pytest

from loopbench.harness.arms import parse_arm
from loopbench.harness.events import RepeatedActionEvent
from loopbench.harness.models.counting import CountingClient
from loopbench.harness.models.scripted import ScriptedModel, tool_reply
from loopbench.harness.patterns.acting import GUARD_OBSERVATION, Actions
from loopbench.harness.patterns.base import RunContext
from loopbench.harness.trace import Trace

from .helpers import TASKS, run_pattern


def actions(guard):
    trace = Trace()
    ctx = RunContext("q", CountingClient(ScriptedModel([]), trace), "m", TASKS.toolset(), trace)
    return Actions(ctx, ctx.tools, guard), ctx


def act_twice(guard, name, arguments):
    acting, ctx = actions(guard)
    first = asyncio.run(acting.run(1, name, arguments))
    second = asyncio.run(acting.run(2, name, arguments))
    return first, second, ctx


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("lookup", {"title": "Atlantis"}),  # an unknown title
        ("lookup", {"name": "Nile"}),  # arguments that do not validate
        ("lookup", "{not json"),  # arguments that are not JSON
        ("search", {"title": "Nile"}),  # a tool that does not exist
    ],
)
def test_a_repeated_failed_call_is_a_repeated_action_and_stays_failed(name, arguments):
    first, second, ctx = act_twice(True, name, arguments)
    assert not first.ok and first.content != GUARD_OBSERVATION
    assert (second.ok, second.content) == (False, GUARD_OBSERVATION)
    assert [r.guarded for r in ctx.trace.of(RepeatedActionEvent)] == [True]


def test_without_the_guard_a_failed_repeat_is_counted_and_shown_as_it_is():
    first, second, ctx = act_twice(False, "lookup", {"name": "Nile"})
    assert second == first and not second.ok
    assert ctx.trace.count(RepeatedActionEvent) == 1


def test_a_guarded_successful_repeat_stays_ok():
    _, second, _ = act_twice(True, "lookup", {"title": "Nile"})
    assert (second.ok, second.content) == (True, GUARD_OBSERVATION)


def test_different_failed_calls_are_not_repeats():
    acting, ctx = actions(True)
    for title in ({"name": "Nile"}, {"name": "Danube"}, {"title": "Atlantis"}):
        result = asyncio.run(acting.run(1, "lookup", title))
        assert result.content != GUARD_OBSERVATION
    assert ctx.trace.count(RepeatedActionEvent) == 0


@pytest.mark.parametrize("guard", ["on", "off"])
def test_react_guards_repeated_invalid_arguments_only_when_on(guard):
    bad = tool_reply(("lookup", {"name": "Nile"}))
    _, model, ctx = run_pattern(parse_arm(f"react:guard={guard}").build(), [bad, bad, "x"])
    assert ctx.trace.count(RepeatedActionEvent) == 1
    assert (model.requests[2].messages[-1].content == GUARD_OBSERVATION) is (guard == "on")


def test_react_text_guards_a_repeated_unknown_title():
    replies = ["Action: lookup[Atlantis]", "Action: lookup[Atlantis]", "Action: finish[x]"]
    _, model, ctx = run_pattern(parse_arm("react_text:guard=on").build(), replies)
    assert ctx.trace.count(RepeatedActionEvent) == 1
    assert model.requests[1].messages[-1].content.startswith("Observation: Not found")
    assert model.requests[2].messages[-1].content == f"Observation: {GUARD_OBSERVATION}"


def test_react_text_counts_a_repeated_unknown_action():
    replies = ["Action: search[Nile]", "Action: search[Nile]", "Action: finish[x]"]
    _, _, ctx = run_pattern(parse_arm("react_text:guard=on").build(), replies)
    assert ctx.trace.count(RepeatedActionEvent) == 1


def test_react_text_unknown_actions_with_different_arguments_are_not_repeats():
    replies = ["Action: search[Nile]", "Action: search[Danube]", "Action: finish[x]"]
    _, model, ctx = run_pattern(parse_arm("react_text:guard=on").build(), replies)
    assert ctx.trace.count(RepeatedActionEvent) == 0
    assert "no tool named 'search'" in model.requests[2].messages[-1].content
