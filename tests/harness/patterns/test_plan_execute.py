from harness.experiment import parse_arm
from harness.models import tool_reply
from harness.patterns.plan_execute import StepDef, dependency_order

from .helpers import run_pattern


def plan(*steps):
    return tool_reply(("plan", {"steps": list(steps)}))


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
    outcome, model, ctx = run_pattern(parse_arm("plan_execute").build(), replies)
    assert (outcome.status, outcome.answer, len(model.requests)) == ("answered", "84 years", 4)
    assert "Your step: find the year" in model.requests[1].messages[0].content
    assert "Result of step 1: 1889" in model.requests[2].messages[0].content
    assert model.requests[3].tools == () and "Step 2: 84" in model.requests[3].messages[0].content
    statuses = [(d["id"], d["status"]) for _, k, d in ctx.trace.events if k == "step_status"]
    assert statuses == [(1, "running"), (1, "done"), (2, "running"), (2, "done")]


def test_a_failed_step_skips_its_dependents_without_replan():
    looping = tool_reply(("lookup", {"title": "Nile"}))
    two = plan({"id": 1, "description": "a"}, {"id": 2, "description": "b", "depends_on": [1]})
    replies = [two, looping, looping, looping, "no idea"]
    outcome, model, ctx = run_pattern(parse_arm("plan_execute").build(), replies)
    statuses = [(d["id"], d["status"]) for _, k, d in ctx.trace.events if k == "step_status"]
    assert statuses == [(1, "running"), (1, "failed"), (2, "skipped")]
    assert outcome.metrics["replanned"] == 0.0 and len(model.requests) == 5


def test_replan_revises_the_rest_of_the_plan_once():
    looping = tool_reply(("lookup", {"title": "Nile"}))
    replies = [
        plan({"id": 1, "description": "a"}),
        looping,
        looping,
        looping,  # step 1 fails after its 3 calls
        plan({"id": 2, "description": "try another way"}),
        "6650",
        "6650 km",
    ]
    outcome, model, _ = run_pattern(parse_arm("plan_execute:replan=on").build(), replies)
    assert outcome.answer == "6650 km" and outcome.metrics["replanned"] == 1.0
    assert "Step 1 failed: a" in model.requests[4].messages[0].content


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
