"""Patterns, tools, graders and task sets by name: each kind is a registry open to plugins,
a name is registered once, an unknown name is refused with the registered ones and the ways
to add one, and the lookup's variant is a tool option an arm sets with ``tool=improved``."""

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import BaseModel

import loopbench
from loopbench.harness.arms import ArmError, parse_arm
from loopbench.harness.cli.main import main
from loopbench.harness.grading import Grading
from loopbench.harness.patterns.base import PatternOptions
from loopbench.tasks.loading import load_taskset
from loopbench.tasks.taskset import TaskBase, TaskSetError
from loopbench.tasks.tool_registry import TOOLS, ToolOptionsError, UnknownTool, check_tool_choices
from loopbench.tasks.tools import ToolSource

ROOT = Path(__file__).parents[2]
DEPOT = load_taskset("depot")


class Text(BaseModel):
    text: str


def echo(source, options):
    return loopbench.Tool("echo", "Say it back.", Text, lambda args: args.text)


def write_set(folder, toml, task='{"id": "a", "question": "q", "expected": {"numbers": [1]}}'):
    folder.mkdir()
    (folder / "taskset.toml").write_text(toml)
    (folder / "tasks.jsonl").write_text(task + "\n")
    return folder


def test_the_lookup_variant_is_a_tool_option_an_arm_sets_with_tool_improved():
    arm = parse_arm("react_text:tool=improved")
    assert arm.spec == "react_text:tool=improved"  # the arm's identity is unchanged
    assert arm.options.tool_options() == {"lookup": {"variant": "improved"}}
    assert parse_arm("react_text").options.tool_options() == {"lookup": {"variant": "plain"}}
    assert parse_arm("direct").options.tool_options() == {}
    for variant, said in (("plain", "Not found: "), ("improved", "No entry is titled")):
        tools = DEPOT.toolset({"lookup": {"variant": variant}})
        missed = asyncio.run(tools.invoke("lookup", {"title": "Moonbase Zeta"}))
        assert not missed.ok and said in missed.content


def test_a_run_gets_the_lookup_its_arm_names(tmp_path):
    def model(request):
        last = request.messages[-1].content
        if not last.startswith("Observation:"):
            return "Action: lookup[Larkspur Freight]"
        return f"Action: finish[{'improved' if 'Related entries' in last else 'plain'}]"

    arms = ["react_text", "react_text:tool=improved"]
    results = loopbench.Experiment("depot", arms, model=model, out=tmp_path / "r", limit=1).run()
    assert {r.arm: r.answer for r in results.records()} == {
        "react_text": "plain",
        "react_text:tool=improved": "improved",
    }


def test_a_set_builds_the_tools_it_names_with_their_options(registries, tmp_path):
    class EchoOptions(loopbench.ToolOptions):
        loud: bool = False

    @loopbench.register_tool("echo", EchoOptions, "says it back")
    def loud_echo(source, options):
        say = (lambda a: a.text.upper()) if options.loud else (lambda a: a.text)
        return loopbench.Tool("echo", "Say it back.", Text, say)

    folder = write_set(tmp_path / "s", 'name = "s"\ntools = ["echo", "calc"]\n')
    loaded = load_taskset(folder)
    assert loaded.encyclopedia is None  # no tool it names reads one
    tools = loaded.toolset({"echo": {"loud": "on"}, "lookup": {"variant": "improved"}})
    assert tools.names == ["echo", "calc"]
    assert asyncio.run(tools.invoke("echo", {"text": "hi"})).content == "HI"
    assert asyncio.run(loaded.toolset().invoke("echo", {"text": "hi"})).content == "hi"


def test_a_tool_registered_twice_or_under_a_name_no_endpoint_takes_is_refused(registries):
    loopbench.register_tool("echo", loopbench.ToolOptions, "says it back")(echo)
    with pytest.raises(ValueError, match="a tool named 'echo' is already registered"):
        loopbench.register_tool("echo", loopbench.ToolOptions, "again")(echo)
    with pytest.raises(ValueError, match="1 to 64 letters, digits, _ or -"):
        loopbench.register_tool("say it", loopbench.ToolOptions, "spaces")(echo)


def test_a_factory_making_a_tool_of_another_name_is_refused(registries, tmp_path):
    loopbench.register_tool("parrot", loopbench.ToolOptions, "says it back")(echo)
    loaded = load_taskset(write_set(tmp_path / "s", 'name = "s"\ntools = ["parrot"]\n'))
    with pytest.raises(ValueError, match="made a tool named 'echo'"):
        loaded.toolset()


def test_the_lookup_needs_an_encyclopedia():
    with pytest.raises(ValueError, match=r"encyclopedia\.json, and this set has none"):
        TOOLS.lookup("lookup").build(ToolSource(Path(".")), {})


def test_tool_options_are_checked_by_the_tools_options_model():
    check_tool_choices({"lookup": {"variant": "improved"}, "calc": {}})
    with pytest.raises(ToolOptionsError, match=r"'lookup': field 'variant'.*its options: variant"):
        check_tool_choices({"lookup": {"variant": "best"}})
    with pytest.raises(ToolOptionsError, match="field 'colour': Extra inputs"):
        check_tool_choices({"calc": {"colour": "red"}})
    with pytest.raises(UnknownTool, match="no tool named 'search' is registered"):
        check_tool_choices({"search": {}})


def test_an_arm_whose_options_give_a_tool_an_unknown_option_is_refused_before_any_run(
    registries,
):
    class Careless(PatternOptions):
        def tool_options(self):
            return {"lookup": {"variant": "best"}}

    @loopbench.register_pattern("careless", Careless, "gives the lookup a variant it lacks")
    def careless(options):
        raise AssertionError("never built")

    with pytest.raises(ArmError, match="arm 'careless': tool 'lookup': field 'variant'"):
        parse_arm("careless")


class WordTask(TaskBase):
    expected: str


class LastWord(loopbench.Grader[WordTask]):
    async def grade(self, task, answer):
        said = answer.split()[-1]
        return loopbench.Grade(said == task.expected, f"said {said}")


def test_a_set_is_read_and_graded_as_its_grader_says(registries, tmp_path):
    loopbench.register_grader("last_word", WordTask, "ends with the word")(lambda s: LastWord())
    task = '{"id": "a", "question": "Say yes.", "expected": "yes"}'
    folder = write_set(tmp_path / "s", 'name = "s"\ngrader = "last_word"\n', task)
    loaded = load_taskset(folder)
    assert isinstance(loaded.tasks[0], WordTask) and not loaded.is_code
    grading = Grading(loaded)
    verdict = asyncio.run(grading.grade(loaded.tasks[0], "I say yes"))
    assert verdict == loopbench.Grade(True, "said yes")
    assert grading.check(loaded.tasks[0]) is None
    assert grading.measures(loaded.tasks[0], ["no", "yes"], [False, True]) == {}
    wrong = write_set(
        tmp_path / "w",
        'name = "w"\ngrader = "last_word"\n',
        task.replace(', "expected": "yes"', ""),
    )
    with pytest.raises(TaskSetError, match=r"tasks.jsonl:1: field 'expected': Field required"):
        load_taskset(wrong)


def test_a_grader_registered_twice_or_reading_no_task_model_is_refused(registries):
    def factory(setup):
        return LastWord()

    loopbench.register_grader("last_word", WordTask, "ends with the word")(factory)
    with pytest.raises(ValueError, match="a grader named 'last_word' is already registered"):
        loopbench.register_grader("last_word", WordTask, "again")(factory)
    with pytest.raises(ValueError, match=r"must be a subclass of loopbench\.TaskBase"):
        loopbench.register_grader("loose", dict, "reads dicts")(factory)


def test_a_pattern_or_a_task_set_registered_twice_is_refused(registries, tmp_path):
    def factory(options):
        raise AssertionError("never built")

    loopbench.register_pattern("echoes", PatternOptions, "says it twice")(factory)
    with pytest.raises(ValueError, match="a pattern named 'echoes' is already registered"):
        loopbench.register_pattern("echoes", PatternOptions, "again")(factory)
    folder = write_set(tmp_path / "s", 'name = "mine"\n')
    loopbench.register_taskset("mine", folder)
    assert loopbench.load_taskset("mine").name == "mine"
    with pytest.raises(ValueError, match="a task set named 'mine' is already registered"):
        loopbench.register_taskset("mine", folder)
    with pytest.raises(ValueError, match="a task set name is one word, not 'a/b'"):
        loopbench.register_taskset("a/b", folder)


def register_one_of_each(tmp_path):
    """A pattern, a tool, a grader and a task set, registered as a plugin registers them."""
    loopbench.register_pattern("asks_twice", PatternOptions, "asks twice")(lambda o: None)
    loopbench.register_tool("echo", loopbench.ToolOptions, "says it back")(echo)
    loopbench.register_grader("last_word", WordTask, "ends with the word")(lambda s: LastWord())
    loopbench.register_taskset("mine", write_set(tmp_path / "mine", 'name = "mine"\n'))


def ways_to_add(kind):
    return [f"@loopbench.register_{kind}", "--plugin", f"'loopbench.{kind}s'"]


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (
            ("--arm", "nosuch"),
            ["no pattern named 'nosuch' is registered", "asks_twice", *ways_to_add("pattern")],
        ),
        (
            ("--tasks", "nosuch"),
            ["no task set 'nosuch'", "mine", "depot", "a folder holding tasks.jsonl"],
        ),
        (
            ("taskset.toml", 'tools = ["calc", "search"]'),
            [
                "field 'tools.1' on line 2: no tool named 'search' is registered",
                "'echo'",
                "'calc'",
                *ways_to_add("tool"),
            ],
        ),
        (
            ("taskset.toml", 'grader = "fuzzy"'),
            [
                "field 'grader' on line 2: no grader named 'fuzzy' is registered",
                "'last_word'",
                "'exact'",
                *ways_to_add("grader"),
            ],
        ),
    ],
    ids=["pattern", "task set", "tool", "grader"],
)
def test_an_unknown_name_is_one_line_naming_the_registered_ones_and_how_to_add_one(
    registries, tmp_path, given, said
):
    register_one_of_each(tmp_path)
    flag, value = given
    if flag == "taskset.toml":  # a line of the set's taskset.toml
        flag, value = "--tasks", str(write_set(tmp_path / "s", f'name = "s"\n{value}\n'))
    args = {"--tasks": "depot", "--arm": "direct", flag: value}
    result = CliRunner().invoke(main, ["run", *(word for pair in args.items() for word in pair)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.output.count("Error: ") == 1
    if given[0] == "taskset.toml":
        assert result.output.startswith(f"Error: {value}/taskset.toml: ")
        assert result.output.count("\n") == 1
    for words in said:
        assert words in result.output


def test_a_broken_tool_plugin_is_named_when_a_set_loads(tmp_path):
    # An installed package declaring an entry point whose module does not import.
    site = tmp_path / "site"
    (site / "broken-0.1.dist-info").mkdir(parents=True)
    (site / "broken-0.1.dist-info" / "METADATA").write_text("Name: broken\nVersion: 0.1\n")
    (site / "broken-0.1.dist-info" / "entry_points.txt").write_text(
        "[loopbench.tools]\nsearch = no_such_module_anywhere\n"
    )
    folder = write_set(tmp_path / "s", 'name = "s"\ntools = ["calc"]\n')
    args = ["run", "--arm", "direct", "--tasks", str(folder)]
    code = f"from loopbench.harness.cli.main import main; main({args!r})"
    ran = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(site)},
        timeout=120,
    )
    assert ran.returncode == 2 and "Traceback" not in ran.stderr
    assert ran.stderr.startswith(
        f"Error: {folder / 'taskset.toml'}: plugin 'search' (no_such_module_anywhere, from "
        "broken, entry point group loopbench.tools) cannot be loaded: ModuleNotFoundError"
    )
