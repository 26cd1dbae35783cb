import pytest

from loopbench.harness.arms import ArmError, parse_arm
from loopbench.harness.events import ParseFailureEvent, RepeatedActionEvent, ToolCallEvent
from loopbench.harness.models.scripted import text_reply
from loopbench.harness.models.types import ModelAPIError
from loopbench.harness.patterns.acting import GUARD_OBSERVATION
from loopbench.harness.patterns.react_text import EXAMPLE, TextAction, parse_action

from .helpers import below_floor, run_pattern

KNOWN = ["lookup", "calc", "finish"]


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("Thought: x\nAction: lookup[Porto depot]", ("lookup", "Porto depot")),
        ("action: LOOKUP [Porto depot] and then more", ("lookup", "Porto depot")),
        ("Action 2: calc[(2020 - 2017) * 1]", ("calc", "(2020 - 2017) * 1")),
        ('**Action:** `lookup("Leeds depot")`', ("lookup", "Leeds depot")),
        ("Thought: ok\nlookup[Paris]", ("lookup", "Paris")),
        ("Action: finish[3 years]\nObservation: invented", ("finish", "3 years")),
        ("Action: lookup[Porto depot", ("lookup", "Porto depot")),
        ("Action: search[Porto]", ("search", "Porto")),
        ("Thought: done\nFinal Answer: 84", ("finish", "84")),
        ("Observation: invented\nAction: lookup[y]", ("lookup", "y")),
        ("I am not sure what to do.", None),
    ],
)
def test_parse_action_is_lenient_but_exact(text, action):
    expected = TextAction(*action) if action else None
    assert parse_action(text, KNOWN) == expected


def loop(options="", **kw):
    return parse_arm(f"react_text{':' + options if options else ''}").build()


def test_looks_up_then_finishes():
    replies = [
        "Thought: t\nAction: lookup[Hamburg depot]",
        "Action: calc[2018 - 2012]",
        "Action: finish[6]",
    ]
    outcome, model, ctx = run_pattern(loop(), replies)
    assert (outcome.status, outcome.answer, outcome.steps) == ("answered", "6", 3)
    assert (
        model.requests[1]
        .messages[-1]
        .content.startswith("Observation: Larkspur Freight depot, opened in 2012")
    )
    assert model.requests[2].messages[-1].content == "Observation: 6"
    assert ctx.trace.count(ToolCallEvent) == 2


def test_every_request_opens_with_the_whole_prior_conversation():
    replies = ["Action: lookup[Paris]", "Action: lookup[Nile]", "Action: finish[x]"]
    _, model, _ = run_pattern(loop(), replies)
    for earlier, later in zip(model.requests, model.requests[1:], strict=False):
        assert later.messages[: len(earlier.messages)] == earlier.messages
        assert len(later.messages) == len(earlier.messages) + 2


def test_requests_are_snapshots_not_the_live_conversation():
    _, model, _ = run_pattern(loop(), ["Action: lookup[Paris]", "Action: finish[x]"])
    first = model.requests[0].messages
    assert isinstance(first, tuple) and len(first) == len(EXAMPLE) + 1
    assert first[: len(EXAMPLE)] == EXAMPLE and first[-1].content.startswith("Question: ")


def test_outcome_holds_the_conversation_not_the_worked_example():
    outcome, _, _ = run_pattern(loop(), ["Action: finish[x]"])
    assert [m.role for m in outcome.messages] == ["user", "assistant"]


def test_step_budget_is_a_status_and_caps_requests():
    outcome, model, _ = run_pattern(loop("max_steps=3"), ["Action: lookup[Paris]"] * 5)
    assert outcome.status == "step_budget" and outcome.answer is None
    assert len(model.requests) == 3


def test_token_budget_stops_before_the_next_call():
    outcome, model, _ = run_pattern(loop("max_tokens=50"), ["Action: lookup[Paris]"] * 5)
    assert outcome.status == "token_budget" and 1 <= len(model.requests) < 5


def test_zero_steps_is_refused_with_no_request():
    with pytest.raises(ArmError, match="needs max_steps of at least"):
        loop("max_steps=0")  # refused before any run
    outcome, model, _ = run_pattern(below_floor("react_text", 0), ["Action: finish[x]"])
    assert outcome.status == "refused" and model.requests == []


def test_truncated_turn_is_not_acted_on():
    outcome, _, ctx = run_pattern(loop(), [text_reply("Action: lookup[Par", "length")])
    assert outcome.status == "truncated" and ctx.trace.count(ToolCallEvent) == 0


def test_unparsed_reply_is_counted_and_answered_with_the_format():
    outcome, model, ctx = run_pattern(loop(), ["Hmm.", "Action: finish[3]"])
    assert outcome.status == "answered" and ctx.trace.count(ParseFailureEvent) == 1
    assert "lookup[...], calc[...], finish[...]" in model.requests[1].messages[-1].content


def test_unknown_tool_is_an_observation_not_a_crash():
    _, model, _ = run_pattern(loop(), ["Action: search[Paris]", "Action: finish[x]"])
    assert "no tool named 'search'" in model.requests[1].messages[-1].content


@pytest.mark.parametrize("guard", ["on", "off"])
def test_repeated_action_is_counted_and_guarded_only_when_on(guard):
    replies = ["Action: lookup[Paris]", "Action: lookup[ Paris ]", "Action: finish[x]"]
    _, model, ctx = run_pattern(loop(f"guard={guard}"), replies)
    assert ctx.trace.count(RepeatedActionEvent) == 1
    last_observation = model.requests[2].messages[-1].content
    assert (GUARD_OBSERVATION in last_observation) is (guard == "on")


def test_api_error_keeps_the_partial_conversation():
    outcome, _, _ = run_pattern(loop(), ["Action: lookup[Paris]", ModelAPIError("HTTP 503")])
    assert outcome.status == "api_error" and outcome.steps == 2  # the failed call counts
    assert outcome.messages[-1].content.startswith("Observation: Capital")


def test_tool_variant_changes_what_lookup_returns():
    _, plain, _ = run_pattern(loop(), ["Action: lookup[Larkspur Freight]", "Action: finish[x]"])
    _, better, _ = run_pattern(
        loop("tool=improved"),
        ["Action: lookup[Larkspur Freight]", "Action: finish[x]"],
        tool="improved",
    )
    assert "Related entries" not in plain.requests[1].messages[-1].content
    assert "Related entries: Hamburg depot" in better.requests[1].messages[-1].content
