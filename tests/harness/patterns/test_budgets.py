"""The run limits hold for every registered pattern, whatever the model answers."""

import asyncio

import pytest

from loopbench.harness.arms import ArmError, parse_arm
from loopbench.harness.fakes.fake_server import STRUCTURED_REPLIES
from loopbench.harness.models.counting import CountingClient
from loopbench.harness.models.scripted import FunctionModel, text_reply
from loopbench.harness.models.scripted import tool_reply as call
from loopbench.harness.models.types import ModelResponse, Usage
from loopbench.harness.patterns.base import RunContext
from loopbench.harness.patterns.catalog import registered
from loopbench.harness.report.table import summarize
from loopbench.harness.results.frames import records_frame
from loopbench.harness.runner import Job, Runner
from loopbench.harness.trace import Trace

from .helpers import TASKS, arm_with_max_steps

# Valid arguments for every structured request, chosen to make the patterns go on:
# verdicts reject, critiques ask for a rewrite, a phase comes without tasks.
STRUCTURED = STRUCTURED_REPLIES | {
    "verdict": {"accept": False, "reason": "not grounded"},
    "critique": {"needs_refinement": True, "critique": "Check the numbers."},
    "decomposition": {
        "goal": "answer",
        "phases": [{"name": "facts", "tasks": ["Look up Paris."]}, {"name": "sums"}],
    },
    "phase_tasks": {"tasks": ["Compute it.", "Check it."]},
}
FINAL = ("final_answer", {"answer": "84", "evidence": ["Paris"]})


def looping(request):
    """Never finishes by itself: always looks something up when it can."""
    if request.tool_choice:
        return call((request.tool_choice, STRUCTURED[request.tool_choice]))
    if request.tools:
        return call(("lookup", {"title": "Paris"}))
    if "Action:" in request.system:
        return "Thought: look it up.\nAction: lookup[Paris]"
    return "1973 - 1889 = 84.\nAnswer: 84"


def answering(request):
    """Looks one thing up, then answers."""
    observed = request.messages and request.messages[-1].role == "tool"
    if request.tools and not request.tool_choice and observed:
        names = [t.name for t in request.tools]
        return call(FINAL) if "final_answer" in names else "84"
    if "Action:" in request.system and request.messages[-1].content.startswith("Observation:"):
        return "Thought: done.\nAction: finish[84]"
    return looping(request)


def at_once(request):
    """Answers at the first step it can, and makes every check and critique go on: a run
    of the fewest calls that still takes every step the arm's options ask for."""
    if request.tools and not request.tool_choice:
        names = [t.name for t in request.tools]
        return call(FINAL) if "final_answer" in names else "84"
    if "Action:" in request.system:
        return "Thought: done.\nAction: finish[84]"
    return looping(request)


RESPONDERS = {"looping": looping, "answering": answering}

# Every registered pattern, and the options that change how many calls it needs.
SPECS = [
    *registered(),
    "best_of_n:verifier=model",
    "react:finish=tool",
    "reflection:cycles=0",
    "reflection:cycles=2",
    "self_consistency:samples=2",
    "tot:breadth=2,beam=2,depth=3",
    "plan_execute:replan=on",
]


def with_options(spec, **options):
    extra = ",".join(f"{k}={v}" for k, v in options.items())
    return f"{spec},{extra}" if ":" in spec else f"{spec}:{extra}"


def run(spec, responder, **options):
    model = FunctionModel(responder, keep_requests=True)
    trace = Trace()
    question = "How many years after the Eiffel Tower did the Sydney Opera House open?"
    ctx = RunContext(question, CountingClient(model, trace), "m", TASKS.toolset(), trace)
    outcome = asyncio.run(arm_with(spec, **options).build().run(ctx))
    return outcome, model, ctx


def arm_with(spec, **options):
    """The arm with ``options`` as given, a max_steps below its floor included: parse_arm
    refuses that arm, and the limits wrapper's own refusal is what is tested here."""
    given = with_options(spec, **{k: v for k, v in options.items() if k != "max_steps"})
    if "max_steps" not in options:
        return parse_arm(given)
    return arm_with_max_steps(given, options["max_steps"])


@pytest.mark.parametrize("responder", RESPONDERS)
@pytest.mark.parametrize("spec", SPECS)
def test_max_steps_is_never_exceeded(spec, responder):
    for max_steps in range(1, 13):
        outcome, model, ctx = run(spec, RESPONDERS[responder], max_steps=max_steps)
        assert len(model.requests) == ctx.model.calls <= max_steps, (max_steps, outcome)
        assert model.requests or outcome.status == "refused"


@pytest.mark.parametrize("spec", SPECS)
def test_a_call_floor_above_max_steps_is_refused_with_no_request(spec):
    """At its floor an arm runs as it runs without a limit and makes every call of the
    floor (so the floor is neither too low nor too high); one fewer is refused, before any
    run and by the run itself, with no request."""
    floor = parse_arm(spec).build().call_floor().calls
    free, _, _ = run(spec, at_once, max_steps=50)
    outcome, model, _ = run(spec, at_once, max_steps=floor)
    assert (outcome.status, len(model.requests)) == (free.status, floor)
    with pytest.raises(ArmError, match=f"needs max_steps of at least {floor} "):
        parse_arm(with_options(spec, max_steps=floor - 1))  # refused before any run
    outcome, model, _ = run(spec, answering, max_steps=floor - 1)
    assert (outcome.status, model.requests) == ("refused", [])
    assert f"max_steps of at least {floor}" in outcome.error


LIMITS = {"max_tokens": 50, "step_timeout_s": 2.5, "max_output_tokens": 64}


@pytest.mark.parametrize("option", LIMITS)
@pytest.mark.parametrize("name", registered())
def test_every_pattern_takes_the_run_limits(name, option):
    arm = parse_arm(f"{name}:{option}={LIMITS[option]}")
    assert getattr(arm.options, option) == LIMITS[option] and arm.build().name == name


def costly(responder, tokens=40):
    def reply(request):
        response = responder(request)
        response = text_reply(response) if isinstance(response, str) else response
        return ModelResponse(response.message, response.finish_reason, Usage(tokens - 10, 10))

    return reply


@pytest.mark.parametrize("responder", RESPONDERS)
@pytest.mark.parametrize("spec", SPECS)
def test_max_tokens_stops_requests_once_the_ceiling_is_reached(spec, responder):
    free, unlimited, _ = run(spec, costly(RESPONDERS[responder]), max_steps=12)
    outcome, model, _ = run(spec, costly(RESPONDERS[responder]), max_steps=12, max_tokens=50)
    # 40 tokens a call: the second call starts below 50, the third would start at 80.
    assert len(model.requests) == min(len(unlimited.requests), 2)
    if len(unlimited.requests) > 2:
        assert outcome.status == "token_budget"
    else:
        assert outcome.status == free.status


def unreported(responder):
    def reply(request):
        response = responder(request)
        response = text_reply(response) if isinstance(response, str) else response
        return ModelResponse(response.message, response.finish_reason, Usage(missing=1))

    return reply


@pytest.mark.parametrize("responder", RESPONDERS)
@pytest.mark.parametrize("spec", SPECS)
def test_max_tokens_holds_when_the_endpoint_reports_no_usage(spec, responder):
    free, unlimited, _ = run(spec, unreported(RESPONDERS[responder]), max_steps=12)
    outcome, model, _ = run(spec, unreported(RESPONDERS[responder]), max_tokens=1, max_steps=12)
    # The first call is made at 0 tokens; its estimate reaches the ceiling of 1.
    assert len(model.requests) == 1
    assert outcome.status == ("token_budget" if len(unlimited.requests) > 1 else free.status)
    assert outcome.metrics["ceiling_estimated_calls"] == 1.0


class SlowFirst(FunctionModel):
    """Takes half a second over its first reply."""

    async def complete(self, request):
        if not self.requests:
            await asyncio.sleep(0.5)
        return await super().complete(request)


@pytest.mark.parametrize("spec", SPECS)
def test_step_timeout_cancels_a_slow_call_in_every_pattern(spec):
    model = SlowFirst(answering)
    trace = Trace()
    ctx = RunContext("q", CountingClient(model, trace), "m", TASKS.toolset(), trace)
    pattern = parse_arm(with_options(spec, step_timeout_s=0.02)).build()
    outcome = asyncio.run(pattern.run(ctx))
    assert (outcome.status, ctx.model.calls, model.requests) == ("step_timeout", 1, [])


@pytest.mark.parametrize("spec", SPECS)
def test_max_output_tokens_caps_every_request_of_every_pattern(spec):
    _, model, _ = run(spec, answering, max_output_tokens=33)
    assert model.requests and {r.max_output_tokens for r in model.requests} == {33}


def test_best_of_n_with_nothing_accepted_is_not_graded_and_counts_as_not_correct():
    task = next(t for t in TASKS.tasks if t.id == "eiffel-opera-house")  # expected 84
    runner = Runner(TASKS, FunctionModel(lambda _: "84"), "m")
    arm = parse_arm("best_of_n:n=2")  # 84 is in no observation: the evidence check rejects
    record, _ = asyncio.run(runner.run_one(Job(arm, task, 0)))
    assert (record.status, record.answer, record.correct) == ("none_accepted", None, None)
    assert record.first_correct is True  # the candidates themselves were right
    assert record.metrics["judged_correct"] == 2.0 and record.metrics["accepted_correct"] == 0.0
    row = summarize(records_frame([record])).iloc[0]
    assert (row["n"], row["correct"], row["accuracy"]) == (1, 0, 0.0)
    assert row["status_none_accepted"] == 1
