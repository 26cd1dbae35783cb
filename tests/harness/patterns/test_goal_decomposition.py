import pytest

from loopbench.harness.arms import ArmError, parse_arm
from loopbench.harness.models.scripted import tool_reply
from loopbench.harness.patterns.steps import SYNTHESIS_SYSTEM

from .helpers import below_floor, run_pattern


def decomposition(goal, *phases):
    return tool_reply(("decomposition", {"goal": goal, "phases": list(phases)}))


def phase_tasks(*tasks):
    return tool_reply(("phase_tasks", {"tasks": list(tasks)}))


def goal_decomposition(options=""):
    return parse_arm("goal_decomposition" + (f":{options}" if options else "")).build()


def events(ctx, kind):
    return [event.data() for event in ctx.trace.events if event.kind == kind]


def test_a_phase_without_tasks_gets_a_planning_call_and_its_tasks_run():
    replies = [
        decomposition("g", {"name": "facts", "description": "find the years"}),
        phase_tasks("find A", "find B"),
        "1889",
        "1973",
        "84",
    ]
    outcome, model, _ = run_pattern(goal_decomposition(), replies)
    assert (outcome.status, outcome.answer, len(model.requests)) == ("answered", "84", 5)
    planning = model.requests[1]
    assert [t.name for t in planning.tools] == ["phase_tasks"]
    assert planning.tool_choice == "phase_tasks"
    assert "Phase: facts. find the years" in planning.messages[0].content
    assert "Your step: find A" in model.requests[2].messages[0].content
    assert "Your step: find B" in model.requests[3].messages[0].content
    assert "facts / find B: 1973" in model.requests[4].messages[0].content
    assert outcome.metrics["phases_planned"] == 1.0 and outcome.metrics["tasks_done"] == 2.0


def test_a_phase_with_tasks_gets_no_planning_call():
    replies = [decomposition("g", {"name": "facts", "tasks": ["find A"]}), "1889", "1889"]
    outcome, model, _ = run_pattern(goal_decomposition(), replies)
    assert (outcome.answer, len(model.requests)) == ("1889", 3)
    assert all(r.tool_choice != "phase_tasks" for r in model.requests)


def test_a_decomposition_without_phases_is_planned_as_one_phase_the_goal():
    replies = [decomposition("find the gap"), phase_tasks("find A"), "1889", "1889 it is"]
    outcome, model, ctx = run_pattern(goal_decomposition(), replies)
    assert (outcome.status, outcome.answer, len(model.requests)) == ("answered", "1889 it is", 4)
    assert "Phase: find the gap." in model.requests[1].messages[0].content
    assert [d["phase"] for d in events(ctx, "task_status")] == ["find the gap"]


def test_an_empty_phase_plan_runs_no_task_and_still_answers():
    replies = [decomposition("g", {"name": "facts"}), "no tasks here", "don't know"]
    outcome, model, ctx = run_pattern(goal_decomposition(), replies)
    assert (outcome.status, outcome.answer, len(model.requests)) == ("answered", "don't know", 3)
    assert events(ctx, "phase_plan")[0]["failure"] == "unparsed"
    assert model.requests[2].system == SYNTHESIS_SYSTEM


def test_phase_planning_only_while_a_task_and_the_answer_can_follow():
    replies = [
        decomposition("g", {"name": "one"}, {"name": "two"}),
        phase_tasks("find A"),
        "1889",
        "1889",
        "spare",
    ]
    outcome, model, ctx = run_pattern(goal_decomposition("max_steps=4"), replies)
    assert (outcome.status, outcome.answer, len(model.requests)) == ("answered", "1889", 4)
    assert model.requests[3].system == SYNTHESIS_SYSTEM
    assert events(ctx, "phase_status") == [{"phase": "two", "status": "skipped"}]
    assert outcome.metrics["phases_planned"] == 1.0


def test_no_phase_planning_at_max_steps_3():
    replies = [decomposition("g", {"name": "one"}), "don't know", "spare"]
    outcome, model, ctx = run_pattern(goal_decomposition("max_steps=3"), replies)
    assert (outcome.status, outcome.answer, len(model.requests)) == ("answered", "don't know", 2)
    assert events(ctx, "phase_status") == [{"phase": "one", "status": "skipped"}]


def test_a_task_never_takes_the_final_call():
    looping = tool_reply(("lookup", {"title": "Nile"}))
    replies = [decomposition("g", {"name": "p", "tasks": ["a", "b"]}), looping, looping, "x"]
    outcome, model, ctx = run_pattern(goal_decomposition("max_steps=4"), replies)
    assert (outcome.status, outcome.answer, len(model.requests)) == ("answered", "x", 4)
    assert [d["status"] for d in events(ctx, "task_status")] == ["failed", "failed"]


def test_below_three_calls_is_refused_before_any_request():
    with pytest.raises(ArmError, match="needs max_steps of at least"):
        goal_decomposition("max_steps=2")  # refused before any run
    outcome, model, _ = run_pattern(below_floor("goal_decomposition", 2), ["x"])
    assert outcome.status == "refused" and model.requests == []
