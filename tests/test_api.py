"""The public Python API: a grid built and run in code, with a plain function as the
model, read back as a DataFrame, a table, a comparison and the failure taxonomy; and
plugins (a pattern, a tool, a grader and task sets) installed from outside the package or
named with --plugin."""

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import loopbench
from loopbench.harness.cli.main import main
from loopbench.harness.results.reading import ResultsError
from loopbench.harness.results.records import RunRecord
from tests.depot_answers import RIGHT

ROOT = Path(__file__).parents[1]
PLUGIN = ROOT / "examples" / "plugin"
MODULES = PLUGIN / "loopbench_example_plugin"
DEPOT = loopbench.load_taskset("depot")


def knows_the_public_half(request):
    """Right on the public questions, wrong on the company ones."""
    question = request.messages[-1].content
    task = next(t for t in DEPOT.tasks if t.question == question)
    return f"Answer: {RIGHT[question] if task.slice == 'public' else 'no idea'}"


def test_a_grid_with_a_function_as_the_model_gives_one_row_per_run(tmp_path):
    experiment = loopbench.Experiment(
        tasks="depot",
        arms=["direct", "cot"],
        repeats=2,
        model=knows_the_public_half,
        model_name="my-function",
        out=tmp_path / "r",
    )
    results = experiment.run()
    frame = results.frame()
    assert results.ran == len(frame) == 2 * 2 * len(DEPOT.tasks)
    assert set(frame.columns) >= {"arm", "task_id", "repeat", "correct", "tokens_in"}
    assert frame.groupby("arm")["correct"].mean().to_dict() == {"cot": 0.5, "direct": 0.5}
    table = results.table()
    assert list(table["arm"]) == ["cot", "direct"] and list(table["accuracy"]) == [0.5, 0.5]
    cli = CliRunner().invoke(main, ["table", str(tmp_path / "r"), "--format", "json"])
    assert json.loads(cli.output)[0]["accuracy"] == table["accuracy"][0]
    again = experiment.run()
    assert again.ran == 0 and again.skipped == len(frame)


def test_results_compare_and_sort_failures(tmp_path):
    def base(model):
        return loopbench.Experiment(
            "depot", ["direct"], model=model, model_name="m", out=tmp_path / model.__name__
        )

    def knows_nothing(request):
        return "Answer: no idea"

    before = base(knows_the_public_half).run()
    after = base(knows_nothing).run()
    comparison = after.compare(before)
    (arm,) = comparison.arms
    assert arm.regressed and arm.paired.difference == -0.5
    (failures,) = after.failures()
    assert failures.arm == "direct" and failures.failed == len(DEPOT.tasks)


def test_an_async_function_and_a_client_both_serve_as_the_model(tmp_path):
    async def model(request):
        return "Answer: 84"

    first = loopbench.Experiment("depot", ["direct"], model=model, out=tmp_path / "a").run()
    scripted = loopbench.FunctionModel(lambda request: "Answer: 84")
    second = loopbench.Experiment("depot", ["direct"], out=tmp_path / "b").run(scripted)
    assert first.table()["correct"][0] == second.table()["correct"][0] == 1
    assert scripted.requests == []  # a grid of any size holds no requests
    kept = loopbench.FunctionModel(lambda request: "Answer: 84", keep_requests=True)
    loopbench.Experiment("depot", ["direct"], out=tmp_path / "c").run(kept)
    assert len(kept.requests) == second.ran


def test_inside_a_running_loop_run_says_to_await_run_async(tmp_path):
    experiment = loopbench.Experiment("depot", ["direct"], model=knows_the_public_half)

    async def in_a_notebook():
        with pytest.raises(RuntimeError, match=r"await experiment\.run_async"):
            experiment.run()
        experiment.out = tmp_path / "nb"
        return await experiment.run_async()

    assert asyncio.run(in_a_notebook()).ran == len(DEPOT.tasks)


def test_a_bad_arm_or_model_is_refused_before_anything_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no out: results/<timestamp> would be made here
    with pytest.raises(ValueError, match="registered"):
        loopbench.Experiment("depot", ["nosuch"], model=knows_the_public_half).run()
    assert not (tmp_path / "results").exists()
    with pytest.raises(TypeError, match="function of the request"):
        loopbench.Experiment("depot", ["direct"], model=42, out=tmp_path / "x").run()
    assert not (tmp_path / "x").exists()


@pytest.fixture(scope="module")
def installed_plugin(tmp_path_factory):
    """The example plugin, installed with pip into a folder of its own (no index, no build
    isolation: nothing leaves this machine)."""
    base = tmp_path_factory.mktemp("plugin")
    shutil.copytree(PLUGIN, base / "src")
    site = base / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps",
         "--no-build-isolation", "--target", str(site), str(base / "src")],
        check=True, capture_output=True,
    )  # fmt: skip
    return site


def in_python(site, code):
    """Run ``code`` in a fresh interpreter that sees the installed plugin."""
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )


def test_an_installed_plugin_pattern_and_task_set_run(installed_plugin, tmp_path):
    code = f"""
import loopbench
answers = {{"What is the capital of France?": "Paris", "What is the capital of Japan?": "Kyoto"}}

def model(request):
    return answers[request.messages[0].content]

results = loopbench.Experiment(
    "capitals", ["ask_twice"], model=model, out={str(tmp_path / "r")!r}
).run()
frame = results.frame()
print(list(frame["arm"]), list(frame["turns"]), list(frame["correct"]))
"""
    ran = in_python(installed_plugin, code)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split("\n")[0] == "['ask_twice', 'ask_twice'] [2, 2] [True, False]"


def test_the_cli_lists_the_plugin_pattern_and_the_task_set(installed_plugin):
    code = "from loopbench.harness.cli.main import main; main()"
    listed = in_python(installed_plugin, code.replace("main()", "main(['patterns'])"))
    assert "ask_twice: asks, then asks again; 2 calls" in listed.stdout
    tasks = in_python(
        installed_plugin,
        "from loopbench.tasks.loading import builtin_names; print(builtin_names())",
    )
    assert "capitals" in tasks.stdout


def test_an_installed_plugin_tool_and_grader_run(installed_plugin, tmp_path):
    code = f"""
import loopbench

def model(request):
    question = next(m.content for m in request.messages if m.role == "user")
    last = request.messages[-1]
    if last.role == "tool":
        return "It is " + last.content + "."
    word = question.split("'")[1]
    if word == "drawer":
        return "It is drawer."  # answered without the tool, and wrong
    return loopbench.tool_reply(("reverse", {{"text": word}}))

results = loopbench.Experiment("words", ["react"], model=model, out={str(tmp_path / "r")!r}).run()
for record in sorted(results.records(), key=lambda r: r.task_id):
    print(record.task_id, record.tool_calls, record.correct, record.grade_reason)
"""
    ran = in_python(installed_plugin, code)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == [
        "drawer 0 False the last word is 'drawer'",
        "stressed 1 True the last word is 'desserts'",
    ]


def loopbench_cli(site, *args):
    """``loopbench ARGS`` in a fresh process that sees the installed plugin (this
    checkout's loopbench, as ``python -m loopbench.harness.cli``)."""
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"}
    command = [sys.executable, "-m", "loopbench.harness.cli", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)


def test_the_example_plugin_runs_through_loopbench_run(installed_plugin, tmp_path):
    """examples/plugin, installed: its pattern with its prompt slot overridden, its tool and
    its grader, run by ``loopbench run`` against the loopback fake."""
    from loopbench.harness.fakes.fake_server import FakeServer, Reply

    listed = loopbench_cli(installed_plugin, "patterns", "ask_twice", "--prompts")
    assert listed.returncode == 0 and "\ncheck = " in listed.stdout, listed.stderr
    recheck = tmp_path / "recheck.toml"
    recheck.write_text('check = "Is that so? {{ question }} One word."\n')

    def responder(body):
        said = [m["content"] for m in body["messages"] if m["role"] == "user"]
        word = said[0].split("'")[1]
        if not body.get("tools"):  # ask_twice: wrong at first, right when asked again
            return Reply(f"It is {word}." if len(said) == 1 else f"It is {word[::-1]}.")
        last = body["messages"][-1]
        if last["role"] == "tool":
            return Reply(f"It is {last['content']}.")
        if word == "drawer":
            return Reply("It is drawer.")  # answered without the tool, and wrong
        call = {"id": "c1", "type": "function"}
        call["function"] = {"name": "reverse", "arguments": json.dumps({"text": word})}
        return Reply(tool_calls=[call], finish_reason="tool_calls")

    with FakeServer(responder) as server:
        ran = loopbench_cli(
            installed_plugin, "run", "--tasks", "words", "--arm", "react",
            "--arm", f"ask_twice:prompts={recheck}", "--quiet", "--model", "fake",
            "--base-url", server.base_url, "--out", tmp_path / "r",
        )  # fmt: skip
        bodies = list(server.served.bodies)
    assert ran.returncode == 0, ran.stderr
    made = sorted(
        (r["arm"], r["task_id"], r["tool_calls"], r["correct"], bool(r["prompts_hash"]))
        for r in map(json.loads, (tmp_path / "r" / "runs.jsonl").read_text().splitlines())
    )
    assert made == [
        ("ask_twice:prompts=recheck", "drawer", 0, True, True),
        ("ask_twice:prompts=recheck", "stressed", 0, True, True),
        ("react", "drawer", 0, False, False),
        ("react", "stressed", 1, True, False),
    ]
    asked_again = [b for b in bodies if not b.get("tools") and len(b["messages"]) == 3]
    checks = {b["messages"][-1]["content"] for b in asked_again}
    assert checks == {
        "Is that so? What is 'stressed' spelled backwards? One word.",
        "Is that so? What is 'drawer' spelled backwards? One word.",
    }


def test_a_plugin_tool_and_grader_named_with_the_flag_run(tmp_path):
    from loopbench.harness.fakes.fake_server import FakeServer, Reply

    for module, name in (("reverse", "my_reverse"), ("last_word", "my_last_word")):
        source = (MODULES / f"{module}.py").read_text()
        here = source.replace(f'"{module}"', f'"{module}_here"')
        (tmp_path / f"{name}.py").write_text(here)
    words = shutil.copytree(MODULES / "words", tmp_path / "words")
    toml = (words / "taskset.toml").read_text()
    toml = toml.replace('"reverse"', '"reverse_here"').replace('"last_word"', '"last_word_here"')
    (words / "taskset.toml").write_text(toml)
    offered = set()

    def responder(body):
        offered.update(tool["function"]["name"] for tool in body.get("tools", []))
        question = next(m["content"] for m in body["messages"] if m["role"] == "user")
        last = body["messages"][-1]
        if last["role"] == "tool":
            return Reply(f"It is {last['content']}.")
        word = question.split("'")[1]
        if word == "drawer":
            return Reply("It is drawer.")  # answered without the tool, and wrong
        arguments = json.dumps({"text": word})
        call = {"id": "c1", "type": "function"}
        call["function"] = {"name": "reverse_here", "arguments": arguments}
        return Reply(tool_calls=[call], finish_reason="tool_calls")

    with FakeServer(responder) as server:
        args = ["run", "--plugin", "my_reverse", "--plugin", "my_last_word",
                "--tasks", str(words), "--arm", "react",
                "--quiet", "--model", "fake", "--base-url", server.base_url,
                "--out", str(tmp_path / "r")]  # fmt: skip
        ran = in_python(tmp_path, f"from loopbench.harness.cli.main import main; main({args!r})")
    assert ran.returncode == 0, ran.stderr
    lines = (tmp_path / "r" / "runs.jsonl").read_text().splitlines()
    made = sorted(
        (r["task_id"], r["tool_calls"], r["correct"], r["grade_reason"])
        for r in map(json.loads, lines)
    )
    assert made == [
        ("drawer", 0, False, "the last word is 'drawer'"),
        ("stressed", 1, True, "the last word is 'desserts'"),
    ]
    assert offered == {"reverse_here"}


def test_plugin_named_with_the_flag_is_imported(tmp_path):
    module = tmp_path / "my_patterns.py"
    module.write_text(
        (MODULES / "ask_twice.py")
        .read_text()
        .replace('"ask_twice", AskTwiceOptions', '"ask_twice_here", AskTwiceOptions')
    )
    code = (
        "from loopbench.harness.cli.main import main; main(['patterns', '--plugin', 'my_patterns'])"
    )
    listed = in_python(tmp_path, code)
    assert "ask_twice_here: asks, then asks again" in listed.stdout, listed.stderr


def test_a_plugin_that_cannot_be_imported_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "broken.py").write_text("raise RuntimeError('half written')\n")
    code = (
        "from loopbench.harness.cli.main import main; "
        "main(['run', '--plugin', 'broken', '--arm', 'direct'])"
    )
    ran = in_python(tmp_path, code)
    assert ran.returncode == 2 and "Traceback" not in ran.stderr
    assert "--plugin broken: cannot be imported (RuntimeError: half written)" in ran.stderr


def test_the_registry_says_the_real_ways_to_add_a_pattern():
    result = CliRunner().invoke(main, ["run", "--arm", "nosuch"])
    assert result.exit_code == 2
    for way in ("@loopbench.register_pattern", "--plugin", "'loopbench.patterns'"):
        assert way in result.output


def test_arms_expand_as_on_the_command_line_and_parsed_ones_are_taken_as_they_are():
    parsed = loopbench.Experiment(arms=["react_text:guard=on|off"]).parsed_arms
    assert [a.spec for a in parsed] == ["react_text:guard=on", "react_text:guard=off"]
    mixed = loopbench.Experiment(arms=["direct", parsed[0]]).parsed_arms
    assert [a.spec for a in mixed] == ["direct", "react_text:guard=on"]
    with pytest.raises(ValueError, match="same configuration"):
        _ = loopbench.Experiment(arms=[parsed[0], "react_text:guard=on"]).parsed_arms


def test_load_checks_every_line_on_the_columnar_path(tmp_path, monkeypatch):
    out = tmp_path / "r"
    loopbench.Experiment(tasks="depot", arms=["direct"], model=knows_the_public_half, out=out).run()
    validated = []
    real = RunRecord.model_validate_json
    monkeypatch.setattr(
        RunRecord, "model_validate_json", lambda line, **kw: validated.append(line) or real(line)
    )
    assert loopbench.load(out).path == out
    assert validated == []  # every line vouched for by the columns, none built one by one
    runs = out / "runs.jsonl"
    first, *rest = runs.read_text().splitlines()
    runs.write_text("\n".join([first.replace('"repeat":0', '"repeat":-1'), *rest]) + "\n")
    with pytest.raises(ResultsError, match=r"runs\.jsonl:1: field 'repeat'"):
        loopbench.load(out)
