"""The analysis notebook runs clean and quietly (no error, nothing on stderr) on a small
results folder made with the scripted model, and on folders at the edges: every run
correct, a single arm, every run failed."""

import asyncio
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from loopbench.harness.arms import parse_arms
from loopbench.harness.fakes.fake_server import default_responder, question_index
from loopbench.harness.grid import Grid, run_grid
from loopbench.harness.models.scripted import FunctionModel, text_reply, tool_reply
from loopbench.harness.models.wire import request_body
from loopbench.harness.results.store import ResultsFolder
from loopbench.tasks.loading import load_taskset
from tests.depot_answers import RIGHT

NOTEBOOK = Path(__file__).parents[1] / "notebooks" / "patterns.ipynb"


def scripted(request):
    """The fake server's deterministic model, as an in-process scripted client."""
    reply = default_responder(request_body(request))
    if reply.tool_calls:
        calls = [(c["function"]["name"], c["function"]["arguments"]) for c in reply.tool_calls]
        return tool_reply(*calls)
    return text_reply(reply.content)


def answering(right):
    """Every depot question answered right (or not), as a final answer."""

    def reply(request):
        messages = request_body(request)["messages"]
        question = messages[question_index(messages)]["content"].removeprefix("Question: ")
        return text_reply(f"Answer: {RIGHT[question] if right else 'no idea'}")

    return reply


def results_folder(folder, arms, model, repeats=2):
    with ResultsFolder.open(folder, {"task_set": "depot", "model": "gpt-5-mini"}) as r:
        grid = Grid(load_taskset("depot"), parse_arms(arms), repeats, "gpt-5-mini")
        asyncio.run(run_grid(grid, FunctionModel(model), r))
    return folder


def executed(folder, monkeypatch, reference=None):
    """Every output of the notebook's code cells, run on ``folder`` in a fresh kernel."""
    monkeypatch.setenv("LOOPBENCH_RESULTS", str(folder))
    if reference is None:
        monkeypatch.delenv("LOOPBENCH_REFERENCE_ARM", raising=False)
    else:
        monkeypatch.setenv("LOOPBENCH_REFERENCE_ARM", reference)
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    ).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    stderr = [o.text for o in outputs if o.output_type == "stream" and o.name == "stderr"]
    assert stderr == []  # no warning, no fallback said, no progress bar
    return outputs


def images(outputs):
    return [o for o in outputs if "image/png" in o.get("data", {})]


def printed(outputs):
    return "".join(o.text for o in outputs if o.output_type == "stream")


def test_notebook_executes(tmp_path, monkeypatch):
    arms = ["direct", "cot", "react_text", "react_text:guard=on", "react"]
    folder = results_folder(tmp_path / "r", arms, scripted)
    outputs = executed(folder, monkeypatch, reference="react_text")
    assert len(images(outputs)) == 4  # frontier, status, tokens, turns


@pytest.mark.parametrize(
    ("arms", "right", "said"),
    [
        (["direct", "cot"], True, "direct: no failed runs"),
        (["cot"], True, "cot: no failed runs"),
        (["direct", "cot"], False, "direct: 24 failed runs"),
    ],
    ids=["no-failed-run", "one-arm", "every-run-failed"],
)
def test_the_notebook_runs_quietly_on_any_results_folder(tmp_path, monkeypatch, arms, right, said):
    folder = results_folder(tmp_path / "r", arms, answering(right))
    outputs = executed(folder, monkeypatch)
    assert said in printed(outputs)
    # Nothing correct has no cost per correct answer: the frontier is left out, not an error.
    assert len(images(outputs)) == (4 if right else 3)
