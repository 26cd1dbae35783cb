"""The analysis notebook runs clean on a small results folder made with the scripted model."""

import asyncio
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from harness.experiment import parse_arms
from harness.fakes.fake_server import default_responder
from harness.grid import Grid, run_grid
from harness.models.scripted import FunctionModel, text_reply, tool_reply
from harness.models.wire import request_body
from harness.results.store import ResultsFolder
from tasks.loading import load_taskset

NOTEBOOK = Path(__file__).parents[1] / "notebooks" / "patterns.ipynb"


def scripted(request):
    """The fake server's deterministic model, as an in-process scripted client."""
    reply = default_responder(request_body(request))
    if reply.tool_calls:
        calls = [(c["function"]["name"], c["function"]["arguments"]) for c in reply.tool_calls]
        return tool_reply(*calls)
    return text_reply(reply.content)


def test_notebook_executes(tmp_path, monkeypatch):
    depot = load_taskset("depot")
    arms = parse_arms(["direct", "cot", "react_text", "react_text:guard=on", "react"])
    with ResultsFolder.open(tmp_path / "r", {"task_set": "depot", "model": "gpt-5-mini"}) as r:
        asyncio.run(run_grid(Grid(depot, arms, 2, "gpt-5-mini"), FunctionModel(scripted), r))
    monkeypatch.setenv("LOOPBENCH_RESULTS", str(tmp_path / "r"))
    monkeypatch.setenv("LOOPBENCH_REFERENCE_ARM", "react_text")
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
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) == 4  # frontier, status, tokens, turns
