"""The example MCP server (examples/mcp) serves the depot's lookup and calc as the built-in
tools do: one grid, on a scripted model, gives the same tool calls and observations on
either."""

import json
import re
from pathlib import Path

import loopbench
from loopbench.tasks.loading import load_taskset

from .mcp_helpers import TOOL_ARMS, runs, scripted, tool_events

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "examples" / "mcp"
QUESTIONS = [t.question for t in load_taskset("depot").tasks[:4]]


def _question(text):
    return next(q for q in QUESTIONS if q in text)


def _tool(question):
    """A hit, a miss, a calculation and a calculation that fails, by question."""
    number = QUESTIONS.index(question)
    return [
        ("lookup", {"title": "Larkspur Freight"}),
        ("lookup", {"title": question.split()[-1].strip("?")}),
        ("calc", {"expression": "2020 - 2017"}),
        ("calc", {"expression": "2020 -"}),
    ][number]


def _seen(said):
    after = said.split(_question(said))[-1]
    return "Observation:" in after or re.search(r"#E\d", after) is not None


def _calls(tasks, out):
    loopbench.Experiment(
        tasks=tasks,
        arms=TOOL_ARMS,
        model=scripted(_tool, _seen, find=_question),
        out=out,
        limit=4,
        runs_in_flight=4,
    ).run()
    where = {r["run_id"]: (r["arm"], r["task_id"]) for r in runs(out)}
    made = {}
    for event in tool_events(out):
        arguments = event["arguments"]
        if isinstance(arguments, str):
            arguments = json.loads(arguments)
        made.setdefault(where[event["run_id"]], []).append(
            (event["tool"], arguments, event["ok"], event["result"])
        )
    return made, {r["status"] for r in runs(out)}


def test_the_example_server_gives_the_built_in_tools_calls_and_observations(tmp_path):
    built_in, statuses = _calls("depot", tmp_path / "built-in")
    served, served_statuses = _calls(EXAMPLE, tmp_path / "served")
    assert statuses == served_statuses == {"answered"}
    assert {arm for arm, _ in built_in} == set(TOOL_ARMS)
    assert served == built_in
    results = [call[3] for calls in built_in.values() for call in calls]
    assert any(r.startswith("Larkspur Freight is") for r in results)
    assert any(r.startswith("Not found") for r in results) and "3" in results
    assert any(r.startswith("Error: calc failed") for r in results)
