"""A task set's [[mcp]] entries: refused in one line before any model request when a server
cannot be used, its tools offered and bounded as set, and no server left after a run is
stopped by Ctrl-C or SIGTERM."""

import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from loopbench.harness.errors import BadInput
from loopbench.harness.tools import ToolSet
from loopbench.tasks.mcp_settings import McpServerError
from loopbench.tasks.mcp_tools import stop_servers
from loopbench.tasks.taskset import TaskSetError, read_taskset

from .mcp_helpers import alive, calls, pids, server_set

ROOT = Path(__file__).parents[2]
DEPOT_SERVER = ROOT / "examples" / "mcp" / "depot_server.py"
BOOK = ROOT / "loopbench" / "tasks" / "depot" / "encyclopedia.json"


@pytest.fixture(autouse=True)
def _stopped():
    yield
    stop_servers()


def _set(folder: Path, toml: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tasks.jsonl").write_text(
        '{"id": "a", "question": "q", "expected": {"numbers": [1]}}\n'
    )
    (folder / "taskset.toml").write_text(textwrap.dedent(toml))
    return folder


def _refusal(folder: Path) -> str:
    with pytest.raises(McpServerError) as refused:
        read_taskset(folder)
    message = str(refused.value)
    assert "\n" not in message and str(folder / "taskset.toml") in message
    return message


def test_a_refusal_is_bad_input_one_line_exit_2():
    assert issubclass(McpServerError, BadInput)


def test_no_such_command_is_refused_naming_the_field(tmp_path):
    folder = _set(tmp_path, 'name = "s"\n[[mcp]]\nname = "x"\ncommand = ["no-such-program-here"]\n')
    message = _refusal(folder)
    assert "field 'command'" in message and "no-such-program-here" in message


def test_a_server_that_never_says_hello_is_refused_within_its_limit(tmp_path):
    script = "import os, time; open('pid', 'w').write(str(os.getpid())); time.sleep(40)"
    command = json.dumps([sys.executable, "-c", script])
    folder = _set(
        tmp_path, f'name = "s"\n[[mcp]]\nname = "mute"\ncommand = {command}\nstart_timeout_s = 1\n'
    )
    began = time.monotonic()
    message = _refusal(folder)
    assert time.monotonic() - began < 30 and "start_timeout_s = 1" in message
    assert not alive(int((folder / "pid").read_text()))


def test_a_server_that_exits_at_start_is_refused_with_its_last_words(tmp_path):
    command = json.dumps([sys.executable, "-c", "import sys; sys.exit('broken: no config')"])
    folder = _set(tmp_path, f'name = "s"\n[[mcp]]\nname = "x"\ncommand = {command}\n')
    message = _refusal(folder)
    assert "did not start" in message and "its stderr ends: broken: no config" in message


def test_a_tool_name_a_builtin_tool_has_is_refused(tmp_path):
    command = json.dumps(["python", str(DEPOT_SERVER), str(BOOK)])
    folder = _set(
        tmp_path, f'name = "s"\ntools = ["calc"]\n[[mcp]]\nname = "depot"\ncommand = {command}\n'
    )
    message = _refusal(folder)
    assert "'calc' is offered by the built-in tools too" in message and "field 'mcp'" in message


def test_a_tool_two_servers_offer_is_refused(tmp_path):
    folder = server_set(tmp_path, ["abc"])
    text = (folder / "taskset.toml").read_text()
    (folder / "taskset.toml").write_text(
        text + text.split("\n\n", 1)[1].replace('"counting"', '"again"')
    )
    assert "offered by MCP server 'counting' too" in _refusal(folder)


def test_a_tool_name_no_endpoint_takes_is_refused(tmp_path):
    folder = server_set(tmp_path, ["abc"], server_args="--odd")
    message = _refusal(folder)
    assert "the tool name 'odd.name' is not one an endpoint takes" in message


def test_a_tool_the_server_does_not_list_is_refused(tmp_path):
    folder = server_set(tmp_path, ["abc"], extra='tools = ["reverse", "nope"]\n')
    message = _refusal(folder)
    assert "field 'tools'" in message and "'nope'" in message and "reverse, shout" in message


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ('command = ["x"]\nurl = "http://127.0.0.1:9/mcp"\n', "either command"),
        ("", "either command"),
        ('url = "ftp://x"\n', "http:// or https://"),
        ("command = []\n", "command"),
        ('command = ["x"]\ntimeout_s = 0\n', "timeout_s"),
    ],
)
def test_malformed_entries_are_refused_in_one_line(tmp_path, entry, said):
    folder = _set(tmp_path, f'name = "s"\n[[mcp]]\nname = "x"\n{entry}')
    with pytest.raises(TaskSetError, match="mcp") as refused:
        read_taskset(folder)
    assert said in str(refused.value) and "\n" not in str(refused.value)


def test_only_the_named_tools_are_offered_and_results_are_cut_to_the_limit(tmp_path):
    import asyncio

    folder = server_set(tmp_path, ["abc"], extra='tools = ["reverse"]\nmax_result_chars = 3\n')
    tools: ToolSet = read_taskset(folder).toolset()
    assert tools.names == ["reverse"]
    result = asyncio.run(tools.invoke("reverse", {"text": "abcdef"}))
    assert result.ok and result.content.startswith(
        "fed\n[cut: 6 characters; max_result_chars is 3]"
    )
    assert calls(folder)[0]["result"] == "fedcba"


RUNNER = """
import sys
sys.path.insert(0, {root!r})
import loopbench
from tests.tasks.mcp_helpers import scripted
loopbench.Experiment(
    tasks={folder!r}, arms=["react"], out={out!r},
    model=scripted(lambda word: ("reverse", {{"text": word}}), lambda said: False),
).run()
"""


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_no_server_is_left_after_ctrl_c_or_sigterm(tmp_path, stop):
    folder = server_set(tmp_path / "set", ["hang"], extra="timeout_s = 600\n")
    script = RUNNER.format(root=str(ROOT), folder=str(folder), out=str(tmp_path / "out"))
    log = (tmp_path / "stderr").open("w")
    run = subprocess.Popen([sys.executable, "-c", script], stderr=log)
    try:
        deadline = time.monotonic() + 60
        while not calls(folder) and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.1)
        assert calls(folder) == [{"tool": "reverse", "text": "hang", "result": "gnah"}]
        run.send_signal(stop)
        run.wait(timeout=60)
    finally:
        run.kill()
        log.close()
    assert pids(folder) and not any(alive(p) for p in pids(folder))


def test_tasks_list_shows_a_sets_mcp_tools(tmp_path):
    from click.testing import CliRunner

    from loopbench.harness.cli.main import main

    folder = server_set(tmp_path / "set", ["abc"])
    shown = CliRunner().invoke(main, ["tasks", "list", "--tasks", str(folder)])
    assert shown.exit_code == 0, shown.output
    assert "reverse (MCP counting), shout (MCP counting)" in shown.output
    listed = CliRunner().invoke(main, ["tasks", "list", "--tasks", str(folder), "--format", "json"])
    (served,) = json.loads(listed.output)[-1]["mcp"]
    assert (served["server"], served["tools"]) == ("counting-test-server", ["reverse", "shout"])


def test_a_bad_server_is_exit_2_in_one_line_from_the_command_line(tmp_path):
    from click.testing import CliRunner

    from loopbench.harness.cli.main import main

    folder = _set(tmp_path, 'name = "s"\n[[mcp]]\nname = "x"\ncommand = ["no-such-program-here"]\n')
    refused = CliRunner().invoke(main, ["tasks", "list", "--tasks", str(folder)])
    assert refused.exit_code == 2
    assert "field 'command': no such command 'no-such-program-here'" in refused.output
    assert "Traceback" not in refused.output


def test_an_experiment_files_servers_are_offered_beside_the_sets_tools(tmp_path):
    from loopbench.harness.config import load_experiment
    from loopbench.harness.plan import plan_run
    from loopbench.harness.runner import RunSettings

    served = server_set(tmp_path / "served", ["abc"])
    entry = (served / "taskset.toml").read_text().split("\n\n", 1)[1]
    (tmp_path / "exp.toml").write_text(f'tasks = "depot"\narms = ["react"]\n\n{entry}')
    plan = plan_run(load_experiment(tmp_path / "exp.toml"), [], RunSettings(), print)
    assert plan.taskset.toolset().names == ["lookup", "calc", "reverse", "shout"]
    assert plan.taskset.fingerprint()["mcp"][0]["tools"] == ["reverse", "shout"]


def test_an_experiment_files_server_clashing_with_the_sets_tool_is_refused(tmp_path):
    from loopbench.harness.config import load_experiment
    from loopbench.harness.plan import plan_run
    from loopbench.harness.runner import RunSettings

    command = json.dumps(["python", str(DEPOT_SERVER), str(BOOK)])
    entry = f'[[mcp]]\nname = "depot"\ncommand = {command}\ntools = ["lookup"]\n'
    (tmp_path / "exp.toml").write_text(f'tasks = "depot"\narms = ["react"]\n\n{entry}')
    with pytest.raises(McpServerError) as refused:
        plan_run(load_experiment(tmp_path / "exp.toml"), [], RunSettings(), print)
    assert str(refused.value).startswith(str(tmp_path / "exp.toml"))
    assert "'lookup' is offered by the built-in tools too" in str(refused.value)
