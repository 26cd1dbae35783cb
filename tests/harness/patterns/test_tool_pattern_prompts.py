"""The tool-using patterns' prompt slots (react, react_text, plan, rewoo): what an arm's
prompt file says is what the model is sent, in the place the slot names."""

import asyncio
import json

import pytest

from loopbench.harness.arms import parse_arm
from loopbench.harness.models.counting import CountingClient
from loopbench.harness.models.scripted import ScriptedModel, tool_reply
from loopbench.harness.patterns.base import RunContext
from loopbench.harness.trace import Trace

from .helpers import TASKS

NILE = ("lookup", {"title": "Nile"})


def run(tmp_path, spec, replies, **slots):
    """Run arm ``spec`` with ``slots`` overridden by a prompt file; returns (outcome, model)."""
    prompt_file = tmp_path / "mine.toml"
    prompt_file.write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in slots.items()))
    arm = parse_arm(f"{spec}{',' if ':' in spec else ':'}prompts={prompt_file}")
    model, trace = ScriptedModel(replies), Trace()
    tools = TASKS.toolset(arm.options.tool_options())
    ctx = RunContext(
        "How old?", CountingClient(model, trace), "m", tools, trace, prompts=arm.prompts
    )
    return asyncio.run(arm.build().run(ctx)), model


def submit_plan(*steps):
    return tool_reply(("submit_plan", {"steps": [{"tool": t, "args": a} for t, a in steps]}))


@pytest.mark.parametrize(
    ("spec", "replies", "request_index"),
    [
        ("react:guard=on", [tool_reply(NILE)] * 2 + ["x"], 2),
        ("plan:guard=on", ["1. look it up", tool_reply(NILE), tool_reply(NILE), "x"], 3),
        ("react_text:guard=on", ["Action: lookup[Nile]"] * 2 + ["Action: finish[x]"], 2),
        ("rewoo:guard=on", [submit_plan(NILE, NILE), "x"], 1),
    ],
)
def test_a_repeat_shows_the_arms_guard_text(tmp_path, spec, replies, request_index):
    _, model = run(tmp_path, spec, replies, guard="Stop going round.")
    assert "Stop going round." in model.requests[request_index].messages[-1].content


@pytest.mark.parametrize("finish", ["text", "tool"])
def test_react_system_prompt_takes_the_finish_sentence_of_its_finish_mode(tmp_path, finish):
    slots = {"system": "Be brief. {{ finish }}", f"finish_{finish}": f"End by {finish}."}
    _, model = run(tmp_path, f"react:finish={finish}", ["x"], **slots)
    assert model.requests[0].system == f"Be brief. End by {finish}."


def test_react_nudge_answers_a_reply_that_does_not_call_final_answer(tmp_path):
    _, model = run(tmp_path, "react:finish=tool", ["x", "y"], nudge="Use final_answer.")
    assert model.requests[1].messages[-1].content == "Use final_answer."


def test_plan_acts_on_the_plan_under_the_arms_act_prompt(tmp_path):
    slots = {"plan": "Plan with: {{ tools }}", "act": "Plan: {{ plan }}"}
    _, model = run(tmp_path, "plan", ["1. look it up", "x"], **slots)
    planning, acting = model.requests
    assert planning.system.startswith("Plan with: - lookup:")
    assert acting.system == "Plan: 1. look it up"


def test_react_text_example_is_sent_as_alternating_turns(tmp_path):
    example = "Question: 1 + 1?\n\nAction: calc[1 + 1]\n\nObservation: 2\n\nAction: finish[2]"
    _, model = run(tmp_path, "react_text", ["Action: finish[x]"], example=example)
    sent = model.requests[0].messages
    assert [(m.role, m.content) for m in sent[:4]] == [
        ("user", "Question: 1 + 1?"),
        ("assistant", "Action: calc[1 + 1]"),
        ("user", "Observation: 2"),
        ("assistant", "Action: finish[2]"),
    ]
    assert len(sent) == 5


def test_react_text_with_an_empty_example_sends_the_question_alone(tmp_path):
    slots = {"example": "", "question": "Q: {{ question }}"}
    _, model = run(tmp_path, "react_text", ["Action: finish[x]"], **slots)
    assert [m.content for m in model.requests[0].messages] == ["Q: How old?"]


def test_react_text_reminder_lists_the_actions(tmp_path):
    replies = ["no action here", "Action: finish[x]"]
    _, model = run(tmp_path, "react_text", replies, no_action="Pick one of {{ actions }}")
    reminder = model.requests[1].messages[-1].content
    assert reminder.startswith("Observation: Pick one of lookup[...]")
    assert reminder.endswith("finish[...]")


def test_rewoo_planner_and_solver_prompts(tmp_path):
    slots = {
        "planner": "Tools: {{ tools }}",
        "solver": "Answer tersely.",
        "solver_request": "{{ evidence }}\n---\n{{ question }}",
    }
    _, model = run(tmp_path, "rewoo", [submit_plan(NILE), "x"], **slots)
    planning, answering = model.requests
    assert planning.system.startswith("Tools: - lookup:")
    assert answering.system == "Answer tersely."
    assert answering.messages[0].content.startswith("#E1 = lookup(")
    assert answering.messages[0].content.endswith("\n---\nHow old?")


def test_rewoo_json_mode_asks_for_json_in_the_arms_words(tmp_path):
    plan = json.dumps({"steps": [{"tool": "lookup", "args": {"title": "Nile"}}]})
    _, model = run(tmp_path, "rewoo:output=json", [plan, "x"], json_reply="JSON only, schema:")
    assert "\nJSON only, schema: {" in model.requests[0].system
