"""Trace events: one typed model a kind, written as traces.jsonl has always held them and
read back through the same models, older traces included."""

import asyncio
import json
import random
from pathlib import Path

import pytest

from loopbench.harness import events as ev
from loopbench.harness.arms import parse_arm
from loopbench.harness.event_models.base import rounded_t
from loopbench.harness.events import (
    KINDS,
    ApiErrorEvent,
    Event,
    OtherEvent,
    ProposalDroppedEvent,
    RequestEvent,
    ResponseEvent,
    ToolCallEvent,
    TraceError,
    parse_event,
    parse_events,
    question_at,
)
from loopbench.harness.fakes.fake_server import question_index
from loopbench.harness.models.counting import CountingClient
from loopbench.harness.models.scripted import ScriptedModel, tool_reply
from loopbench.harness.models.types import Message, ModelRequest, ToolCall
from loopbench.harness.patterns.evidence import check_evidence
from loopbench.harness.trace import MAX_TEXT, Trace
from tests.harness.patterns.helpers import run_pattern

REFERENCE = Path(__file__).parents[2] / "results" / "reference" / "local-smollm2" / "traces.jsonl"
WHOLE = {"model": "m", "system": "", "tools": [], "temperature": None}
WHOLE |= {"max_output_tokens": None, "stop": []}


def reread(trace, max_text=MAX_TEXT):
    """The trace as written to disk, read back, and written again."""
    written = json.loads(json.dumps([e.on_disk(max_text) for e in trace]))
    return written, [e.on_disk(max_text) for e in parse_events(written)]


def test_every_event_model_is_in_the_union_under_its_own_kind():
    models = {
        cls
        for cls in vars(ev).values()
        if isinstance(cls, type) and issubclass(cls, ev.TraceEvent) and cls is not ev.TraceEvent
    }
    assert models == set(KINDS.values()) | {OtherEvent}
    assert all(cls.model_fields["kind"].default == kind for kind, cls in KINDS.items())


def test_the_reference_traces_read_and_write_back_byte_for_byte():
    """Written by 0.1 (no top_p, seed or from_cache yet): every event reads as its own kind,
    and is written again exactly as it was."""
    lines = [json.loads(line) for line in REFERENCE.read_text().splitlines()]
    for line in lines:
        events = parse_events(line["events"])
        assert not any(isinstance(e, OtherEvent) for e in events)
        assert [e.on_disk(MAX_TEXT) for e in events] == line["events"]
    assert sum(len(line["events"]) for line in lines) > 100


def test_a_live_run_reads_back_as_the_same_events():
    replies = [tool_reply(("lookup", {"title": "Paris"})), "I cannot say.", "Answer: x"]
    _, _, ctx = run_pattern(parse_arm("react").build(), replies)
    written, again = reread(ctx.trace.events)
    assert again == written
    assert [type(e) for e in parse_events(written)] == [type(e) for e in ctx.trace.events]
    assert {e["kind"] for e in written} >= {"request", "response", "tool_call"}


def test_fields_added_later_have_defaults_and_fields_dropped_still_read():
    older = [
        {"t": 0.1, "kind": "api_error", "call": 1, "error": "HTTP 503", "status": 503},
        {"t": 0.2, "kind": "proposal_dropped", "path": ["a"], "truncated": True},
        {"t": 0.3, "kind": "request", "call": 1, "request": {**WHOLE, "messages": []}},
    ]
    error, dropped, request = parse_events(older)
    assert isinstance(error, ApiErrorEvent) and error.retries == 0
    assert isinstance(dropped, ProposalDroppedEvent) and (dropped.reason, dropped.truncated) == (
        "",
        True,
    )
    assert isinstance(request, RequestEvent) and "top_p" not in request.request
    assert [e.on_disk(MAX_TEXT) for e in (error, dropped, request)] == older  # nothing added


def test_a_kind_this_version_does_not_write_reads_as_a_generic_event():
    older = {"t": 1.5, "kind": "expand", "level": 1, "proposals": ["a"], "chosen": "a"}
    event = parse_event(older)
    assert isinstance(event, OtherEvent) and event.kind == "expand"
    assert event.data() == {"level": 1, "proposals": ["a"], "chosen": "a"}
    assert event.on_disk(MAX_TEXT) == older


def test_a_field_this_version_does_not_know_is_refused_naming_the_event():
    call = {"kind": "tool_call", "step": 1, "tool": "calc", "arguments": "{}", "ok": True}
    with pytest.raises(TraceError, match=r"event 2 \(tool_call\).*colour"):
        finish = {"kind": "finish", "step": 1, "answer": "x"}
        parse_events([finish, {**call, "result": "1", "colour": "red"}])
    with pytest.raises(TraceError, match=r"event 1 \(tool_call\).*result"):
        parse_events([call])
    with pytest.raises(TraceError, match="event 1 has no kind"):
        parse_events([{"step": 1}])


def test_long_texts_are_cut_on_disk_and_never_in_the_live_trace():
    entry = "The depot opened in 1889. " + "x" * 200 + " It has 59 trucks."
    trace = Trace(max_text=50)
    calls = ScriptedModel([tool_reply(("lookup", {"title": "T" * 80}))])
    client = CountingClient(calls, trace)
    request = ModelRequest(
        "m", (Message("user", "q" * 80), Message("tool", entry, tool_call_id="c"))
    )
    asyncio.run(client.complete(request))
    trace.emit(ToolCallEvent(step=1, tool="lookup", arguments="{}", ok=True, result=entry))
    written = trace.to_json()
    sent, got, looked = written
    assert sent["request"]["messages"][1]["content"].endswith("more characters cut on disk]")
    assert got["response"]["message"]["tool_calls"][0]["function"]["arguments"].endswith("disk]")
    assert looked["result"] == entry[:50] + f"[... {len(entry) - 50} more characters cut on disk]"
    # What the run itself reads stays whole, however often the trace is written.
    assert trace.to_json() == written
    assert trace.events[0].request["messages"][1]["content"] == entry
    assert check_evidence("How many trucks?", trace, "59") is None


def test_past_a_hundred_tool_calls_one_marker_says_how_many_were_cut():
    calls = tuple(ToolCall(f"c{i}", "calc", "{}") for i in range(103))
    trace = Trace()
    client = CountingClient(ScriptedModel(["x"]), trace)
    asyncio.run(client.complete(ModelRequest("m", (Message("assistant", "", calls),))))
    [message] = trace.to_json()[0]["request"]["messages"]
    assert len(message["tool_calls"]) == 101 and message["tool_calls"][-1] == {
        "cut": "3 more tool calls"
    }
    assert len(trace.events[0].request["messages"][0]["tool_calls"]) == 103


def test_each_message_is_built_once_a_run_and_shared_by_the_requests_that_repeat_it():
    trace = Trace()
    client = CountingClient(ScriptedModel(["a", "b"]), trace)
    asked = Message("user", "q")
    asyncio.run(client.complete(ModelRequest("m", (asked,))))
    asyncio.run(client.complete(ModelRequest("m", (asked, Message("assistant", "a")))))
    first, second = trace.of(RequestEvent)
    assert first.request["messages"][0] is second.request["messages"][0]


def test_a_trusted_event_is_what_model_construct_makes():
    request = {**WHOLE, "messages": [{"role": "user", "content": "q"}]}
    made = RequestEvent.unchecked(3, request)
    built = RequestEvent.model_construct({"call", "request"}, call=3, request=request)
    assert made == built and made.model_fields_set == built.model_fields_set == {"call", "request"}
    assert (made.model_extra, made.__pydantic_private__) == (None, None)
    response = ResponseEvent.unchecked(1, {"message": {"role": "assistant", "content": "x"}})
    assert response.data() == {
        "call": 1,
        "response": {"message": {"role": "assistant", "content": "x"}},
    }


def test_the_question_is_the_last_user_message_that_is_not_an_observation():
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "Question: an example"},
        {"role": "assistant", "content": "Action: finish[1]"},
        {"role": "user", "content": "Question: this run's"},
        {"role": "assistant", "content": None},
        {"role": "user", "content": "Observation: 5"},
    ]
    assert question_at(messages) == question_index(messages) == 3
    event = RequestEvent.unchecked(1, {**WHOLE, "messages": messages[1:]})
    assert event.question == "Question: this run's"
    assert question_at(messages[4:]) is None
    with pytest.raises(ValueError, match="no question"):
        question_index(messages[4:])


def test_the_runner_counts_events_by_their_type():
    trace = Trace()
    trace.emit(ToolCallEvent(step=1, tool="calc", arguments="{}", ok=True, result="1"))
    trace.emit(ev.RepeatedActionEvent(step=1, tool="calc", guarded=False))
    trace.emit(ToolCallEvent(step=2, tool="calc", arguments="{}", ok=True, result="1"))
    assert (trace.count(ToolCallEvent), trace.count(ev.ParseFailureEvent)) == (2, 0)
    assert [e.step for e in trace.of(ToolCallEvent)] == [1, 2]
    assert 0 <= trace.events[0].t <= trace.events[2].t


def test_an_event_is_typed_as_the_union():
    event: Event = parse_event({"kind": "pattern_error", "error": "boom"})
    assert isinstance(event, ev.PatternErrorEvent) and event.error == "boom"


def test_a_plugin_pattern_can_trace_an_event_of_its_own_kind():
    trace = Trace()
    trace.emit(OtherEvent(kind="coin_flip", side="heads", flips=3))
    [written] = json.loads(json.dumps(trace.to_json()))
    assert {k: v for k, v in written.items() if k != "t"} == {
        "kind": "coin_flip",
        "side": "heads",
        "flips": 3,
    }
    assert parse_event(written).data() == {"side": "heads", "flips": 3}


def test_a_plan_holds_either_shape_of_steps_and_nothing_else():
    rewoo = {"kind": "plan", "step": 1, "steps": [{"tool": "calc", "args": {}, "why": ""}]}
    executed = {"kind": "plan", "steps": [{"id": 1, "description": "a", "depends_on": []}]}
    assert [parse_event(p).on_disk(MAX_TEXT)["steps"] for p in (rewoo, executed)] == [
        rewoo["steps"],
        executed["steps"],
    ]
    with pytest.raises(TraceError, match="event 1 \\(plan\\)"):
        parse_events([{"kind": "plan", "steps": [{"id": 1, "description": "a", "extra": 1}]}])


def test_a_trace_writes_each_shared_message_once_as_each_event_alone_would():
    long = Message("tool", "x" * 80, tool_call_id="c")
    trace = Trace(max_text=50)
    client = CountingClient(ScriptedModel(["a", "b"]), trace)
    asked = Message("user", "q")
    asyncio.run(client.complete(ModelRequest("m", (asked, long))))
    asyncio.run(client.complete(ModelRequest("m", (asked, long, Message("assistant", "a")))))
    trace.emit(ToolCallEvent(step=1, tool="lookup", arguments="{}", ok=True, result="y" * 60))
    written = trace.to_json()
    assert written == [event.on_disk(50) for event in trace.events]  # each event on its own
    first, second = written[0]["request"]["messages"], written[2]["request"]["messages"]
    assert first[1] is second[1] and first[1]["content"].endswith("cut on disk]")
    assert trace.events[0].request["messages"][1]["content"] == "x" * 80  # the live one whole


@pytest.mark.parametrize(
    "t",
    [0.0, -0.0, 1e-7, -1e-7, 5e-7, 1.5e-6, 2.5e-6, 0.1234565, 999999.9999995, 1e6, 3e9, 0.000494],
)
def test_an_event_time_is_written_rounded_as_round_rounds_it(t):
    assert repr(rounded_t(t)) == repr(round(t, 6))


def test_event_times_round_as_round_does_across_their_range():
    rng = random.Random(7)
    times = [rng.uniform(0, 3600) for _ in range(20_000)]
    times += [(rng.randint(0, 10**10) + 0.5) / 1e6 for _ in range(20_000)]  # near halfway
    times += [rng.uniform(-1e6, 1e6) for _ in range(20_000)]
    assert [repr(rounded_t(t)) for t in times] == [repr(round(t, 6)) for t in times]
