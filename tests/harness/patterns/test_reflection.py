import pytest

from loopbench.harness.arms import ArmError, parse_arm
from loopbench.harness.events import CritiqueEvent, LimitReachedEvent
from loopbench.harness.models.scripted import text_reply, tool_reply
from loopbench.harness.models.types import ModelAPIError

from .helpers import below_floor, run_pattern


def critique(needs, text=""):
    return tool_reply(("critique", {"needs_refinement": needs, "critique": text}))


def reflection(options):
    return parse_arm(f"reflection:{options}").build()


def test_approval_stops_early_two_calls():
    outcome, model, _ = run_pattern(reflection("cycles=2"), ["84", critique(False)])
    assert (outcome.status, outcome.answer, len(model.requests)) == ("answered", "84", 2)


def test_two_refinements_make_five_calls_and_the_rewrite_replaces_the_draft():
    replies = [
        "74",
        critique(True, "1973 - 1889 is 84"),
        "84",
        critique(True, "say years"),
        "84 years",
    ]
    outcome, model, _ = run_pattern(reflection("cycles=2"), replies)
    assert (outcome.status, outcome.answer, len(model.requests)) == ("answered", "84 years", 5)
    assert [m.content for m in outcome.messages] == [outcome.messages[0].content, "84 years"]
    assert all("1973 - 1889" not in m.content for m in outcome.messages)  # critique never enters
    critic, rewrite = model.requests[1], model.requests[2]
    assert [t.name for t in critic.tools] == ["critique"] and critic.tool_choice == "critique"
    assert rewrite.tools == () and rewrite.messages[-1].content == "Critique: 1973 - 1889 is 84"
    assert model.requests[3].messages[-2].content == "84"  # the next critique sees the rewrite


def test_every_request_opens_with_the_question():
    replies = ["74", critique(True, "wrong"), "84", critique(False)]
    _, model, ctx = run_pattern(reflection("cycles=2"), replies)
    assert all(r.messages[0].content == ctx.question for r in model.requests)


def test_refinement_without_a_reason_is_refused():
    outcome, model, _ = run_pattern(reflection("cycles=1"), ["74", critique(True, "  ")])
    assert outcome.status == "refused" and "without saying which" in outcome.error
    assert len(model.requests) == 2


def test_the_cycles_budget_is_reserved_before_generating():
    looping = [tool_reply(("lookup", {"title": "Nile"}))] * 6
    outcome, model, _ = run_pattern(reflection("cycles=2,max_steps=5"), looping)
    assert outcome.status == "step_budget" and len(model.requests) == 1


def test_a_budget_too_small_for_the_cycles_is_refused_at_the_start():
    with pytest.raises(ArmError, match="needs max_steps of at least"):
        reflection("cycles=2,max_steps=4")  # refused before any run
    outcome, model, _ = run_pattern(below_floor("reflection:cycles=2", 4), ["x"])
    assert outcome.status == "refused" and model.requests == []


def test_zero_cycles_is_the_plain_tool_loop():
    replies = [tool_reply(("lookup", {"title": "Nile"})), "6650 km"]
    plain, plain_model, _ = run_pattern(parse_arm("react").build(), list(replies))
    zero, zero_model, _ = run_pattern(reflection("cycles=0"), list(replies))
    assert plain.answer == zero.answer and plain_model.requests == zero_model.requests


def test_the_draft_is_traced_before_the_critique_and_each_rewrite_after():
    replies = ["74", critique(True, "1973 - 1889 is 84"), "84", critique(False)]
    _, _, ctx = run_pattern(reflection("cycles=2"), replies)
    assert [(a.role, a.answer) for a in ctx.trace.answers()] == [
        ("draft", "74"),
        ("revision", "84"),
    ]
    kinds = [
        (e.kind, e.data().get("call")) for e in ctx.trace.events if e.kind in ("answer", "request")
    ]
    assert kinds.index(("answer", None)) < kinds.index(("request", 2))


def test_the_first_answer_is_kept_when_the_critique_fails():
    outcome, _, ctx = run_pattern(reflection("cycles=1"), ["74", ModelAPIError("HTTP 503")])
    assert (outcome.status, outcome.steps) == ("api_error", 2)
    assert [(a.role, a.answer) for a in ctx.trace.answers()] == [("draft", "74")]


def test_the_token_ceiling_stops_the_critique_and_keeps_the_draft():
    outcome, model, ctx = run_pattern(reflection("cycles=1,max_tokens=10"), ["74", "x"])
    assert outcome.status == "token_budget" and len(model.requests) == 1
    [limit] = ctx.trace.of(LimitReachedEvent)
    assert limit.last_answer == "74"


def test_a_truncated_critique_is_not_acted_on():
    full = critique(True, "1973 - 1889 is 84")
    cut = type(full)(full.message, finish_reason="length")
    outcome, model, ctx = run_pattern(reflection("cycles=1"), ["74", cut, "84"])
    assert (outcome.status, outcome.answer, len(model.requests)) == ("truncated", None, 2)
    assert ctx.trace.count(CritiqueEvent) == 0


def test_a_truncated_rewrite_is_not_an_answer():
    replies = ["74", critique(True, "1973 - 1889 is 84"), text_reply("8", "length")]
    outcome, _, ctx = run_pattern(reflection("cycles=1"), replies)
    assert (outcome.status, outcome.answer, outcome.steps) == ("truncated", None, 3)
    assert [a.role for a in ctx.trace.answers()] == ["draft"]
    assert outcome.messages[-1].content == "74"
