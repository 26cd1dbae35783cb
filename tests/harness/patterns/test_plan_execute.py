import pytest

from loopbench.harness.arms import ArmError, parse_arm
from loopbench.harness.events import ReplanFailedEvent, StepStatusEvent, ToolCallEvent
from loopbench.harness.models.scripted import tool_reply
from loopbench.harness.models.types import ModelResponse
from loopbench.harness.patterns.plan_execute import StepDef, dependency_order
from loopbench.harness.patterns.steps import SYNTHESIS_SYSTEM

from .helpers import below_floor, run_pattern

LOOPING = tool_reply(("lookup", {"title": "Nile"}))
FAILS = ""  # a step that replies with no answer at all fails in one call


def plan(*steps):
    return tool_reply(("plan", {"steps": list(steps)}))


def plan_execute(options=""):
    return parse_arm("plan_execute" + (f":{options}" if options else "")).build()


def statuses(ctx):
    return [(s.id, s.status) for s in ctx.trace.of(StepStatusEvent)]


def test_dependency_order_and_cycles():
    steps = [StepDef(id=2, description="b", depends_on=[1]), StepDef(id=1, description="a")]
    assert [s.id for s in dependency_order(steps, set())] == [1, 2]
    looped = [
        StepDef(id=1, description="a", depends_on=[2]),
        StepDef(id=2, description="b", depends_on=[1]),
    ]
    assert "cycle" in dependency_order(looped, set())


def test_steps_run_in_dependency_order_and_see_their_inputs():
    replies = [
        plan(
            {"id": 2, "description": "subtract", "depends_on": [1]},
            {"id": 1, "description": "find the year"},
        ),
        "1889",  # step 1 answers without tools
        "84",  # step 2
        "84 years",  # synthesis
    ]
    outcome, model, ctx = run_pattern(plan_execute(), replies)
    assert (outcome.status, outcome.answer, len(model.requests)) == ("answered", "84 years", 4)
    assert "Your step: find the year" in model.requests[1].messages[0].content
    assert "Result of step 1: 1889" in model.requests[2].messages[0].content
    assert model.requests[3].tools == () and "Step 2: 84" in model.requests[3].messages[0].content
    assert statuses(ctx) == [
        (1, "pending"),
        (2, "pending"),
        (1, "running"),
        (1, "done"),
        (2, "running"),
        (2, "done"),
    ]


def test_a_failed_step_skips_its_dependents_without_replan():
    two = plan({"id": 1, "description": "a"}, {"id": 2, "description": "b", "depends_on": [1]})
    replies = [two, LOOPING, LOOPING, LOOPING, "no idea"]
    outcome, model, ctx = run_pattern(plan_execute(), replies)
    assert statuses(ctx) == [
        (1, "pending"),
        (2, "pending"),
        (1, "running"),
        (1, "failed"),
        (2, "skipped"),
    ]
    assert outcome.metrics["replanned"] == 0.0 and len(model.requests) == 5


def test_replan_revises_the_rest_of_the_plan_once():
    replies = [
        plan({"id": 1, "description": "a"}),
        LOOPING,
        LOOPING,
        LOOPING,  # step 1 fails after its 3 calls
        plan({"id": 2, "description": "try another way"}),
        "6650",
        "6650 km",
    ]
    outcome, model, _ = run_pattern(plan_execute("replan=on"), replies)
    assert outcome.answer == "6650 km" and outcome.metrics["replanned"] == 1.0
    assert "Step 1 failed: a" in model.requests[4].messages[0].content


def test_a_replan_reusing_a_failed_id_is_a_new_step_and_its_dependents_run():
    first = plan({"id": 1, "description": "a"}, {"id": 2, "description": "b", "depends_on": [1]})
    again = plan(
        {"id": 1, "description": "a, another way"},
        {"id": 2, "description": "b", "depends_on": [1]},
    )
    replies = [first, FAILS, again, "1889", "84", "84 years"]
    outcome, model, ctx = run_pattern(plan_execute("replan=on"), replies)
    assert (outcome.status, outcome.answer, len(model.requests)) == ("answered", "84 years", 6)
    assert "Result of step 1: 1889" in model.requests[4].messages[0].content
    assert statuses(ctx)[-2:] == [(2, "running"), (2, "done")]
    assert outcome.metrics["steps_failed"] == 0.0


def by_step(ctx):
    lifecycle = {}
    for step, status in statuses(ctx):
        lifecycle.setdefault(step, []).append(status)
    return lifecycle


def test_every_step_status_is_traced_in_order_through_a_replan():
    first = plan({"id": 1, "description": "a"}, {"id": 2, "description": "b", "depends_on": [1]})
    again = plan({"id": 3, "description": "c"}, {"id": 4, "description": "d", "depends_on": [3]})
    replies = [first, FAILS, again, "x", "y", "z"]
    _, _, ctx = run_pattern(plan_execute("replan=on"), replies)
    assert by_step(ctx) == {
        1: ["pending", "running", "failed"],
        2: ["pending", "skipped"],  # replaced by the replan
        3: ["pending", "running", "done"],
        4: ["pending", "running", "done"],
    }
    assert statuses(ctx).index((1, "failed")) < statuses(ctx).index((3, "pending"))
    skipped = [s for s in ctx.trace.of(StepStatusEvent) if s.status == "skipped"]
    assert skipped[0].reason == "replaced by the replan"


def test_a_replaced_step_is_skipped_before_the_replan_reusing_its_id_is_pending():
    first = plan({"id": 1, "description": "a"}, {"id": 2, "description": "b", "depends_on": [1]})
    again = plan(
        {"id": 1, "description": "a, another way"},
        {"id": 2, "description": "b", "depends_on": [1]},
    )
    _, _, ctx = run_pattern(plan_execute("replan=on"), [first, FAILS, again, "x", "y", "z"])
    assert by_step(ctx)[2] == ["pending", "skipped", "pending", "running", "done"]


def test_below_three_calls_is_refused_before_any_request():
    with pytest.raises(ArmError, match="needs max_steps of at least"):
        plan_execute("max_steps=2")  # refused before any run
    outcome, model, _ = run_pattern(below_floor("plan_execute", 2), ["x"])
    assert outcome.status == "refused" and model.requests == []


def test_no_replan_without_room_for_a_step_and_the_answer():
    # max_steps=3: plan, one failed step, then only the answer's call is left.
    replies = [plan({"id": 1, "description": "a"}), FAILS, "no idea"]
    outcome, model, _ = run_pattern(plan_execute("replan=on,max_steps=3"), replies)
    assert (outcome.status, outcome.answer, len(model.requests)) == ("answered", "no idea", 3)
    assert outcome.metrics["replanned"] == 0.0
    assert model.requests[2].system == SYNTHESIS_SYSTEM


def test_a_failing_step_at_max_steps_4_leaves_the_answer_its_call():
    replies = [plan({"id": 1, "description": "a"}), LOOPING, LOOPING, "no idea", "spare"]
    outcome, model, ctx = run_pattern(plan_execute("replan=on,max_steps=4"), replies)
    assert (outcome.status, outcome.answer, len(model.requests)) == ("answered", "no idea", 4)
    assert model.requests[3].system == SYNTHESIS_SYSTEM and outcome.metrics["replanned"] == 0.0
    assert ctx.trace.count(ToolCallEvent) == 2  # the step had two calls, not its three


def test_replan_is_made_when_exactly_a_step_and_the_answer_can_follow():
    replies = [plan({"id": 1, "description": "a"}), FAILS, plan({"id": 2, "description": "b"})]
    replies += ["6650", "6650 km"]
    outcome, model, _ = run_pattern(plan_execute("replan=on,max_steps=5"), replies)
    assert (outcome.status, outcome.answer, len(model.requests)) == ("answered", "6650 km", 5)
    assert outcome.metrics["replanned"] == 1.0


def test_a_step_never_takes_the_final_call():
    two = plan({"id": 1, "description": "a"}, {"id": 2, "description": "b"})
    replies = [two, LOOPING, LOOPING, "no idea"]
    outcome, model, ctx = run_pattern(plan_execute("max_steps=4"), replies)
    assert (outcome.status, outcome.answer, len(model.requests)) == ("answered", "no idea", 4)
    assert model.requests[-1].system == SYNTHESIS_SYSTEM
    failed = [s for s in ctx.trace.of(StepStatusEvent) if s.status == "failed"]
    assert [(s.id, s.reason) for s in failed] == [(1, "step_budget"), (2, "step_budget")]


def test_each_step_sees_the_results_of_every_step_finished_before_it():
    three = plan(
        {"id": 1, "description": "find the Eiffel Tower's year"},
        {"id": 2, "description": "find the Opera House's year"},
        {"id": 3, "description": "find the Nile's length"},
        {"id": 4, "description": "subtract", "depends_on": [2]},
    )
    replies = [three, "1889", FAILS, "6650", "84 years"]
    outcome, model, ctx = run_pattern(plan_execute(), replies)
    assert (outcome.status, outcome.answer, len(model.requests)) == ("answered", "84 years", 5)
    prompts = [r.messages[0].content for r in model.requests[1:4]]
    assert "Result of step" not in prompts[0]
    assert "Result of step 1: 1889" in prompts[1]
    # Step 3 depends on nothing and still sees step 1; step 2 failed, so it has no result.
    assert "Result of step 1: 1889" in prompts[2] and "step 2" not in prompts[2]
    assert by_step(ctx)[4] == ["pending", "skipped"]


def test_a_step_after_a_replan_sees_what_finished_before_it():
    first = plan({"id": 1, "description": "a"}, {"id": 2, "description": "b"})
    again = plan({"id": 3, "description": "c"})
    replies = [first, "1889", FAILS, again, "1973", "84"]
    outcome, model, _ = run_pattern(plan_execute("replan=on"), replies)
    assert (outcome.answer, outcome.metrics["replanned"]) == ("84", 1.0)
    assert "Result of step 1: 1889" in model.requests[4].messages[0].content


UNUSABLE = {
    "unparsed": "I would rather not plan again.",
    "truncated": ModelResponse(plan({"id": 3, "description": "c"}).message, "length"),
    "refused": plan({"id": 1, "description": "reuses a finished step's id"}),
}


@pytest.mark.parametrize("reply", UNUSABLE)
def test_an_unusable_replan_keeps_what_finished_and_the_plan_goes_on(reply):
    first = plan(
        {"id": 1, "description": "a"},
        {"id": 2, "description": "b"},
        {"id": 3, "description": "c", "depends_on": [2]},
        {"id": 4, "description": "d"},
    )
    replies = [first, "1889", FAILS, UNUSABLE[reply], "1973", "84 years"]
    outcome, model, ctx = run_pattern(plan_execute("replan=on"), replies)
    assert (outcome.status, outcome.answer, len(model.requests)) == ("answered", "84 years", 6)
    assert by_step(ctx) == {
        1: ["pending", "running", "done"],
        2: ["pending", "running", "failed"],
        3: ["pending", "skipped"],  # it needs the failed step
        4: ["pending", "running", "done"],
    }
    assert "Result of step 1: 1889" in model.requests[4].messages[0].content
    answered_from = model.requests[5].messages[0].content
    assert "Step 1: 1889" in answered_from and "Step 4: 1973" in answered_from
    (failed,) = ctx.trace.of(ReplanFailedEvent)
    assert failed.status == reply
    assert (outcome.metrics["replanned"], outcome.metrics["replan_unusable"]) == (0.0, 1.0)


def test_goal_decomposition_runs_every_task_then_answers():
    decomposition = tool_reply(
        (
            "decomposition",
            {"goal": "g", "phases": [{"name": "facts", "tasks": ["find A", "find B"]}]},
        )
    )
    replies = [decomposition, "1889", "1973", "84"]
    outcome, model, _ = run_pattern(parse_arm("goal_decomposition").build(), replies)
    assert (outcome.answer, len(model.requests)) == ("84", 4)
    assert "facts / find A: 1889" in model.requests[2].messages[0].content
