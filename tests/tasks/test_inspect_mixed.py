"""An Inspect file mixing samples with choices and without: each sample keeps its grader,
choice where it has choices (its options shown to the model, as in a file of choices only),
the set's grader elsewhere (loopbench/graders/choice_or.py)."""

import asyncio
import json

import pytest
from click.testing import CliRunner

from loopbench.graders.choice import ChoiceTask
from loopbench.graders.choice_or import NAME
from loopbench.graders.registry import GRADERS
from loopbench.harness.cli.main import main
from loopbench.harness.fakes.fake_server import FakeServer, Reply
from loopbench.harness.grading import Grading
from loopbench.harness.results.reading import read_experiment, read_records
from loopbench.tasks.loading import load_taskset
from loopbench.tasks.taskset import TaskSetError, in_folder

SAMPLES = [
    {"id": "pick", "input": "Which city is the capital of France?",
     "choices": ["Lyon", "Paris", "Nice"], "target": "B"},
    {"id": "fr", "input": "Capital of France?", "target": "Paris"},
    {"id": "jp", "input": [{"role": "user", "content": "Capital of Japan?"}], "target": "Tokyo"},
    {"id": "none", "input": "Capital of Spain?", "choices": None, "target": "Madrid"},
]  # fmt: skip
#: The model answers "The answer is Paris" to France, Kyoto to Japan, Madrid to Spain.
RIGHT = {"pick": True, "fr": True, "jp": False, "none": True}


def responder(body):
    question = body["messages"][-1]["content"]
    said = "Paris" if "France" in question else "Kyoto" if "Japan" in question else "Madrid"
    return Reply(f"The answer is {said}")


def write(path, samples=SAMPLES):
    path.write_text("".join(json.dumps(sample) + "\n" for sample in samples))
    return path


def run(data, out, server, *flags):
    args = ["run", "--tasks", str(data), "--arm", "direct", "--quiet", "--out", str(out)]
    args += ["--base-url", server.base_url, "--model", "fake", *flags]
    return CliRunner().invoke(main, args, env={"LOOPBENCH_API_KEY": "k"}, catch_exceptions=False)


@pytest.fixture
def server():
    with FakeServer(responder) as srv:
        yield srv


def test_choice_samples_are_graded_as_choices_with_their_options_shown(server, tmp_path):
    result = run(write(tmp_path / "mixed.jsonl"), tmp_path / "r", server)
    assert result.exit_code == 0, result.output
    records = read_records(tmp_path / "r")
    assert {r.task_id: r.correct for r in records} == RIGHT
    [asked] = [b["messages"][-1]["content"] for b in server.served.bodies if "Which" in str(b)]
    assert asked.endswith("Which city is the capital of France?\n\nA) Lyon\nB) Paris\nC) Nice")
    plain = [b["messages"][-1]["content"] for b in server.served.bodies if "Japan" in str(b)]
    assert plain == ["Capital of Japan?"]  # no options added to a plain sample
    grader = read_experiment(tmp_path / "r")["grader"]
    assert (grader["name"], grader["options"]) == ("choice_or", {"plain": "em"})


def test_the_grader_named_grades_the_samples_without_choices(tmp_path):
    taskset = load_taskset(write(tmp_path / "mixed.jsonl"), grader="exact:rule=seed")
    assert (taskset.grader, dict(taskset.grader_options)) == (
        "choice_or",
        {"plain": "exact", "rule": "seed"},
    )
    kinds = {task.id: type(task) for task in taskset.tasks}
    assert kinds["pick"] is ChoiceTask
    assert kinds["fr"] is GRADERS.lookup("exact").task_model
    grading = Grading(taskset)
    grades = {
        t.id: asyncio.run(grading.grade(t, "The answer is Paris")).correct for t in taskset.tasks
    }
    assert grades == {"pick": True, "fr": True, "jp": False, "none": False}


def test_a_file_of_choices_only_or_none_is_read_as_before(tmp_path):
    choices = load_taskset(write(tmp_path / "choices.jsonl", SAMPLES[:1]))
    plain = load_taskset(write(tmp_path / "plain.jsonl", SAMPLES[1:]))
    assert (choices.grader, plain.grader) == ("choice", "em")
    assert not choices.grader_options and not plain.grader_options


def test_choice_named_for_a_mixed_file_refuses_the_first_sample_without_choices(tmp_path):
    data = write(tmp_path / "mixed.jsonl")
    with pytest.raises(TaskSetError, match=r"mixed.jsonl:2: column 'choices': missing"):
        load_taskset(data, grader="choice")


@pytest.mark.parametrize(
    ("plain", "why"),
    [
        ("choice_or", "is not a grader for the tasks without options"),
        ("code_tests", "grades only its own tasks.jsonl's tasks"),
    ],
)
def test_a_plain_grader_that_cannot_grade_beside_choice_is_refused(tmp_path, plain, why):
    data = write(tmp_path / "mixed.jsonl")
    with pytest.raises(Exception, match=why) as caught:
        load_taskset(data, grader=f"choice_or:plain={plain}")
    assert "\n" not in str(caught.value)


def test_the_plain_graders_file_options_in_taskset_toml_are_read_from_the_sets_folder(tmp_path):
    judged = in_folder(tmp_path, {"plain": "judge", "prompts": "p.toml", "rubric": "r"}, NAME)
    assert judged == {"plain": "judge", "prompts": str(tmp_path / "p.toml"), "rubric": "r"}
    assert in_folder(tmp_path, {"prompts": "p.toml"}, NAME) == {"prompts": "p.toml"}  # em's
    assert in_folder(tmp_path, {"plain": "nope", "prompts": "p.toml"}, NAME)["prompts"] == "p.toml"
