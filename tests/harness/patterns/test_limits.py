import asyncio
from dataclasses import dataclass

from loopbench.harness.arms import parse_arm
from loopbench.harness.events import LimitReachedEvent
from loopbench.harness.models.counting import CountingClient
from loopbench.harness.models.estimate import (
    EstimateUnavailable,
    ceiling_counter,
    counter_or_characters,
)
from loopbench.harness.models.scripted import FunctionModel, ScriptedModel, text_reply, tool_reply
from loopbench.harness.models.types import (
    Message,
    ModelAPIError,
    ModelRequest,
    ModelResponse,
    Usage,
)
from loopbench.harness.patterns.base import CallFloor, Outcome, PatternOptions, RunContext
from loopbench.harness.patterns.limits import Limited
from loopbench.harness.runner import Job, Runner
from loopbench.harness.trace import Trace

from .helpers import TASKS, run_pattern


def costing(tokens, reply):
    """``reply`` reporting ``tokens`` input tokens, so a ceiling can be reached exactly."""
    response = text_reply(reply) if isinstance(reply, str) else reply
    return ModelResponse(response.message, response.finish_reason, Usage(tokens, 0))


@dataclass(frozen=True)
class Greedy:
    """A pattern that never stops calling the model by itself."""

    floor: int = 1
    name: str = "greedy"

    def call_floor(self):
        return CallFloor(self.floor, "as many as it says")

    async def run(self, ctx):
        while True:
            await ctx.model.complete(ModelRequest("m", (Message("user", ctx.question),)))


def run_limited(pattern, options, replies):
    model = ScriptedModel(replies)
    trace = Trace()
    ctx = RunContext("q", CountingClient(model, trace), "m", TASKS.toolset(), trace)
    outcome = asyncio.run(Limited(pattern, options).run(ctx))
    return outcome, model, ctx


def limit_events(ctx):
    return ctx.trace.of(LimitReachedEvent)


def test_max_steps_stops_a_pattern_that_never_stops_itself():
    outcome, model, ctx = run_limited(Greedy(), PatternOptions(max_steps=3), ["x"] * 9)
    assert (outcome.status, len(model.requests), outcome.steps) == ("step_budget", 3, 3)
    assert limit_events(ctx)[0].status == "step_budget"


def test_max_tokens_stops_calls_once_the_ceiling_is_reached():
    replies = [costing(40, "x")] * 9
    outcome, model, _ = run_limited(Greedy(), PatternOptions(max_tokens=100), replies)
    assert (outcome.status, len(model.requests)) == ("token_budget", 3)  # 40, 80, 120: stop


def test_a_floor_above_max_steps_is_refused_before_any_request():
    outcome, model, ctx = run_limited(Greedy(floor=4), PatternOptions(max_steps=3), ["x"] * 9)
    assert (outcome.status, model.requests) == ("refused", [])
    assert "at least 4" in outcome.error and limit_events(ctx) == []


def test_token_ceiling_holds_a_pattern_with_phases_of_its_own():
    planned = tool_reply(
        ("submit_plan", {"steps": [{"tool": "lookup", "args": {"title": "Nile"}}]})
    )
    outcome, model, _ = run_pattern(parse_arm("rewoo:max_tokens=10").build(), [planned, "x"])
    assert outcome.status == "token_budget" and len(model.requests) == 1


def critique(needs_refinement):
    return tool_reply(("critique", {"needs_refinement": needs_refinement, "critique": "redo"}))


def test_token_ceiling_between_reflection_cycles_keeps_the_revision():
    replies = [costing(10, r) for r in ["2953", critique(True), "2954", critique(False)]]
    outcome, model, ctx = run_pattern(
        parse_arm("reflection:cycles=2,max_tokens=30").build(), replies
    )
    # draft (10), critique (20), rewrite (30): the second critique is never sent
    assert (outcome.status, len(model.requests)) == ("token_budget", 3)
    (limit,) = limit_events(ctx)
    assert limit.last_answer == "2954"
    assert limit.conversation[-1] == {"role": "assistant", "content": "2954"}
    assert limit.conversation[0]["content"] == ctx.question


def test_limit_reached_keeps_the_conversation_so_far():
    lookup = tool_reply(("lookup", {"title": "Nile"}))
    outcome, _, ctx = run_pattern(parse_arm("react:max_steps=2").build(), [lookup] * 2)
    (limit,) = limit_events(ctx)
    assert outcome.status == limit.status == "step_budget"
    roles = ["user", "assistant", "tool", "assistant", "tool"]
    assert [m["role"] for m in limit.conversation] == roles
    assert limit.last_answer is None


def test_max_output_tokens_caps_every_request_and_unset_keeps_the_patterns_own():
    step = tool_reply(("approaches", {"approaches": ["step"]}))
    replies = [step, tool_reply(("evaluation", {"score": 0.5})), "Answer: 84"]
    _, capped, _ = run_pattern(
        parse_arm("tot:breadth=1,depth=1,max_output_tokens=7").build(), replies
    )
    assert [r.max_output_tokens for r in capped.requests] == [7, 7, 7]
    _, own, _ = run_pattern(parse_arm("tot:breadth=1,depth=1").build(), replies)
    assert [r.max_output_tokens for r in own.requests] == [120, 600, 200]


def test_api_error_ends_the_run_with_its_status_and_the_conversation():
    lookup = tool_reply(("lookup", {"title": "Nile"}))
    outcome, model, ctx = run_pattern(
        parse_arm("react").build(), [lookup, ModelAPIError("HTTP 503")]
    )
    assert (outcome.status, outcome.error, len(model.requests)) == ("api_error", "HTTP 503", 2)
    assert outcome.messages[-1].role == "tool" and limit_events(ctx) == []


def test_wrapped_pattern_keeps_its_name():
    assert parse_arm("react:step_timeout_s=5").build().name == "react"


class Slow(ScriptedModel):
    async def complete(self, request: ModelRequest):
        await asyncio.sleep(0.5)
        return await super().complete(request)


def test_step_timeout_ends_the_run_with_its_status():
    model = Slow([text_reply("x")])
    trace = Trace()
    ctx = RunContext("q", CountingClient(model, trace), "m", TASKS.toolset(), trace)
    pattern = parse_arm("react:step_timeout_s=0.05").build()
    outcome = asyncio.run(pattern.run(ctx))
    assert outcome.status == "step_timeout" and "0.05 s" in outcome.error
    assert limit_events(ctx)[0].status == "step_timeout"


def test_an_outcome_the_pattern_returns_itself_passes_through():
    @dataclass(frozen=True)
    class Done:
        name: str = "done"

        def call_floor(self):
            return CallFloor(0, "none")

        async def run(self, ctx):
            return Outcome("answered", answer="84")

    outcome, model, _ = run_limited(Done(), PatternOptions(max_steps=0), [])
    assert (outcome.status, outcome.answer, model.requests) == ("answered", "84", [])


# --- max_tokens when the endpoint reports no usage -----------------------------------------


def unreported(reply):
    """``reply`` with no usage reported, as some servers send it."""
    response = text_reply(reply) if isinstance(reply, str) else reply
    return ModelResponse(response.message, response.finish_reason, Usage(missing=1))


TEN_A_TEXT = (lambda text: 10 if text else 0, "tokenizer")


def run_estimated(options, replies, estimate=lambda: TEN_A_TEXT, count_tokens=None):
    model = ScriptedModel(replies)
    trace = Trace()
    ctx = RunContext("q", CountingClient(model, trace, count_tokens), "m", TASKS.toolset(), trace)
    outcome = asyncio.run(Limited(Greedy(), options, estimate).run(ctx))
    return outcome, model, ctx


def test_max_tokens_counts_an_estimate_for_calls_that_report_no_usage():
    # Each call: the question (10) in, the reply (10) out: 20, 40, 60, then no fourth call.
    replies = [unreported("x")] * 9
    outcome, model, ctx = run_estimated(PatternOptions(max_tokens=50), replies)
    assert (outcome.status, len(model.requests)) == ("token_budget", 3)
    assert "60 tokens used (60 estimated by tokenizer for 3 calls" in outcome.error
    assert outcome.metrics == {
        "ceiling_estimated_calls": 3.0,
        "ceiling_estimated_tokens": 60.0,
        "ceiling_tokenizer": 1.0,
    }
    assert ctx.model.usage.input_tokens == 0  # the counts stay unknown, not estimated


def test_reported_usage_is_not_estimated_again_nor_what_count_tokens_estimated():
    replies = [costing(30, "x"), unreported("x"), costing(30, "x"), unreported("x")] * 2
    outcome, model, _ = run_estimated(PatternOptions(max_tokens=100), replies)
    assert (outcome.status, len(model.requests)) == ("token_budget", 4)  # 30, 50, 80, 100
    assert outcome.metrics["ceiling_estimated_calls"] == 2.0
    counted = lambda text: 10 if text else 0  # noqa: E731  (--count-tokens' tokenizer)
    outcome, model, ctx = run_estimated(
        PatternOptions(max_tokens=50), [unreported("x")] * 9, count_tokens=counted
    )
    assert (outcome.status, len(model.requests)) == ("token_budget", 3)
    assert ctx.model.usage.estimated == 3 and outcome.metrics == {}


def test_without_the_tokenizer_the_ceiling_counts_four_characters_a_token_and_says_so():
    def not_installed():
        raise EstimateUnavailable("no tokenizer")

    count, how = counter_or_characters(not_installed)
    assert (how, count(""), count("abcd"), count("abcde")) == ("characters", 0, 1, 2)
    outcome, model, _ = run_estimated(
        PatternOptions(max_tokens=2), [unreported("reply")] * 9, estimate=lambda: (count, how)
    )
    # "q" in (1) and "reply" out (2): 3 tokens after the first call, so no second one.
    assert (outcome.status, len(model.requests)) == ("token_budget", 1)
    assert outcome.metrics["ceiling_tokenizer"] == 0.0
    assert "estimated by characters" in outcome.error


def test_the_ceiling_estimates_with_the_embedded_tokenizer_by_default():
    model = ScriptedModel([unreported("The Nile is 6,650 km long.")] * 9)
    trace = Trace()
    ctx = RunContext("q", CountingClient(model, trace), "m", TASKS.toolset(), trace)
    outcome = asyncio.run(Limited(Greedy(), PatternOptions(max_tokens=20)).run(ctx))
    assert outcome.status == "token_budget" and 1 < len(model.requests) < 9
    expected = 1.0 if ceiling_counter()[1] == "tokenizer" else 0.0
    assert outcome.metrics["ceiling_tokenizer"] == expected


def test_the_record_says_how_many_calls_and_tokens_the_ceiling_estimated():
    task = next(t for t in TASKS.tasks if t.id == "eiffel-opera-house")
    runner = Runner(TASKS, FunctionModel(lambda _: unreported("Answer: 84")), "m")
    record, _ = asyncio.run(runner.run_one(Job(parse_arm("self_consistency:samples=3"), task, 0)))
    assert (record.status, record.usage_missing, record.tokens_in) == ("answered", 3, 0)
    assert record.metrics["ceiling_estimated_calls"] == 3.0
    assert record.metrics["ceiling_estimated_tokens"] > 0
