"""``history=window:N``: the last N steps of a tool loop sent in full, each older one as
one line; ``history=full`` sends what it always sent."""

import itertools

import pytest

from loopbench.harness.arms import ArmError, parse_arm
from loopbench.harness.models.scripted import tool_reply
from loopbench.harness.models.types import Message, ToolCall
from loopbench.harness.patterns.history import LINE_CHARS, compacted, split_steps, step_line

from .helpers import run_pattern

TITLES = ["Nile", "Danube", "Paris", "Kilimanjaro", "Mount Everest"]
#: Five look-ups, a calculation, then the answer: seven calls, six steps re-sent.
NATIVE = [*(tool_reply(("lookup", {"title": t})) for t in TITLES)]
NATIVE += [tool_reply(("calc", {"expression": "8849 - 5895"})), "2954 metres"]
TEXT = [f"Thought: I need {t}.\nAction: lookup[{t}]" for t in TITLES]
TEXT += ["Thought: subtract.\nAction: calc[8849 - 5895]", "Thought: done.\nAction: finish[2954]"]


def pattern(spec):
    return parse_arm(spec).build()


def summary_lines(message):
    return [line for line in message.content.splitlines() if line.startswith("Step ")]


def test_react_window_sends_the_last_two_steps_in_full_and_older_ones_a_line_each():
    outcome, model, _ = run_pattern(pattern("react:history=window:2"), NATIVE)
    assert (outcome.status, outcome.answer, len(model.requests)) == ("answered", "2954 metres", 7)
    for number, request in enumerate(model.requests):
        sent = request.messages
        in_full = [m for m in sent if m.role == "assistant"]
        assert len(in_full) == min(number, 2)  # one assistant turn per step sent in full
        assert len([m for m in sent if m.role == "tool"]) == min(number, 2)
        older = summary_lines(sent[0])
        assert len(older) == max(0, number - 2)
        assert all(len(line) <= LINE_CHARS for line in older)
        assert accepted_by_chat_apis(sent)
    last = model.requests[-1].messages
    assert summary_lines(last[0])[0] == (
        "Step 1: lookup(title=Nile) -> River in north-east Africa flowing into the "
        "Mediterranean Sea. Length: about 6,650 kilometres."
    )
    assert last[0].content.startswith("How many years after Porto?\n\nEarlier steps, in short")
    # The conversation kept (trace, outcome) is whole: only what was sent is compacted.
    assert len([m for m in outcome.messages if m.role == "tool"]) == 6


def accepted_by_chat_apis(messages):
    """Whether a conversation keeps the rules OpenAI's and Anthropic's APIs both hold it
    to: each turn's tool results come right after it, one for each of its calls and none
    for another's; the user opens, and user and assistant turns alternate (a turn's tool
    results are one user turn, as Anthropic sends them)."""
    waiting, turns = set(), []
    for at, message in enumerate(messages):
        if message.role == "tool":
            if message.tool_call_id not in waiting:
                return False
            waiting.remove(message.tool_call_id)
            if messages[at - 1].role != "tool":
                turns.append("user")
            continue
        if waiting:
            return False
        waiting = {call.id for call in message.tool_calls}
        turns.append("assistant" if message.role == "assistant" else "user")
    alternate = all(a != b for a, b in itertools.pairwise(turns))
    return not waiting and turns[0] == "user" and alternate


def test_react_text_window_keeps_two_observation_blocks_in_full():
    outcome, model, _ = run_pattern(pattern("react_text:history=window:2"), TEXT)
    assert (outcome.status, outcome.answer, len(model.requests)) == ("answered", "2954", 7)
    for number, request in enumerate(model.requests):
        own = request.messages[request.messages.index(question(request)) :]
        observations = [m for m in own if m.content.startswith("Observation:")]
        assert len(observations) == min(number, 2)
        assert len(summary_lines(own[0])) == max(0, number - 2)
    older = summary_lines(question(model.requests[-1]))
    assert older[0] == "Step 1: lookup[Nile] -> River in north-east Africa flowing into the " + (
        "Mediterranean Sea. Length: about 6,650 kilometres."
    )
    assert older[-1].startswith("Step 4: lookup[Kilimanjaro] -> Dormant volcano")


def question(request):
    """The run's own question: the worked example before it opens with one too."""
    return [m for m in request.messages if m.content.startswith("Question:")][-1]


@pytest.mark.parametrize(("spec", "replies"), [("react", NATIVE), ("react_text", TEXT)])
def test_full_history_sends_what_it_always_sent(spec, replies):
    _, default, _ = run_pattern(pattern(spec), replies)
    _, full, _ = run_pattern(pattern(f"{spec}:history=full"), replies)
    _, wide, _ = run_pattern(pattern(f"{spec}:history=window:9"), replies)
    assert default.requests == full.requests == wide.requests
    for earlier, later in zip(default.requests, default.requests[1:], strict=False):
        assert later.messages[: len(earlier.messages)] == earlier.messages


def test_a_reflexion_retry_compacts_across_attempts():
    replies = [*NATIVE[:4], "1 km", *NATIVE[:3], "6650 km"]
    outcome, model, _ = run_pattern(pattern("reflexion:history=window:1"), replies)
    assert (outcome.status, outcome.metrics["attempts"], len(model.requests)) == ("answered", 2, 9)
    assert all(len([m for m in r.messages if m.role == "assistant"]) <= 1 for r in model.requests)
    assert all(accepted_by_chat_apis(r.messages) for r in model.requests)
    # The failed attempt's answer and the check's failure stay, as one line.
    assert "Step 5: 1 km -> A check of your answer failed" in model.requests[-1].messages[0].content


def test_an_older_step_is_one_bounded_line():
    long = "x" * 5000
    calls = tuple(ToolCall(i, "lookup", '{"title": "' + long + '"}') for i in "abc")
    results = [Message("tool", long + "\nmore", tool_call_id=i) for i in "abc"]
    one = step_line(3, [Message("assistant", "", calls[:1]), *results[:1]])
    assert one.startswith("Step 3: lookup(title=xxx") and "\n" not in one
    assert len(one) < LINE_CHARS and one.count("…") == 2  # the action and result, each cut
    three = step_line(3, [Message("assistant", "", calls), *results])
    assert len(three) == LINE_CHARS and three.endswith("…")
    nudged = [Message("assistant", "It is 6.\nI think."), Message("user", "Call final_answer.")]
    assert step_line(1, nudged) == "Step 1: It is 6. -> Call final_answer."
    missing = [Message("assistant", "", (ToolCall("b", "calc", "not json"),))]
    assert step_line(2, missing) == "Step 2: calc(not json) -> (no result)"


def test_steps_are_assistant_turns_with_what_answers_them():
    messages = [Message("user", "q"), Message("assistant", "a"), Message("user", "o1")]
    messages += [Message("assistant", "b"), Message("user", "o2")]
    head, steps = split_steps(messages)
    assert head == messages[:1] and steps == [messages[1:3], messages[3:]]
    assert compacted(messages, "full") == tuple(messages)
    sent = compacted(messages, "window:1")
    assert [m.content for m in sent[1:]] == ["b", "o2"]
    assert sent[0].content == "q\n\nEarlier steps, in short (the last 1 follow in full):\n" + (
        "Step 1: a -> o1"
    )
    # With no message before the first step, the lines open the request as a user turn.
    assert compacted(messages[1:], "window:1")[0].role == "user"
    # What the check of a conversation refuses: a result with no call, a call with none.
    call = Message("assistant", "", (ToolCall("x", "calc", "{}"),))
    assert not accepted_by_chat_apis([Message("user", "q"), Message("tool", "r", tool_call_id="x")])
    assert not accepted_by_chat_apis([Message("user", "q"), call, Message("user", "o")])
    assert not accepted_by_chat_apis([Message("user", "q"), Message("user", "o")])


@pytest.mark.parametrize("value", ["window:0", "window:x", "partial", "window:", "window:-1"])
def test_a_bad_history_is_refused_naming_the_arm(value):
    with pytest.raises(ArmError, match=rf"arm 'react:history={value}': history='{value}': write"):
        parse_arm(f"react:history={value}")


def test_history_joins_the_arm_identity_only_when_set():
    assert parse_arm("react").spec == "react"
    assert parse_arm("react:history=window:02").spec == "react:history=window:2"
    assert parse_arm("react:history=full").spec == "react:history=full"
    assert parse_arm("react").resolved["history"] == "full"


def test_rewoo_has_no_history_to_compact():
    assert parse_arm("rewoo:history=full").options.history == "full"
    with pytest.raises(ArmError, match="rewoo re-sends no steps"):
        parse_arm("rewoo:history=window:2")


def test_reflections_critique_and_rewrite_see_the_draft_through_the_window():
    critique = tool_reply(("critique", {"needs_refinement": True, "critique": "Say metres."}))
    replies = [*NATIVE, critique, "2954 m"]
    outcome, model, _ = run_pattern(pattern("reflection:history=window:2,max_steps=9"), replies)
    assert (outcome.status, outcome.answer) == ("answered", "2954 m")
    judged, rewrite = model.requests[-2:]
    for request in (judged, rewrite):
        assert len([m for m in request.messages if m.role == "assistant"]) == 2
        assert accepted_by_chat_apis(request.messages)
        assert len(summary_lines(request.messages[0])) == 5  # of seven steps, the answer last
    _, whole, _ = run_pattern(pattern("reflection:max_steps=9"), replies)
    assert len([m for m in whole.requests[-1].messages if m.role == "assistant"]) == 7
