"""``loopbench grade``: every registered grader's self-test, and one answer graded by any
grader named with ``--grader`` (exact by default)."""

import json

from click.testing import CliRunner

import loopbench
from loopbench.graders.base import SelfCase
from loopbench.graders.registry import GRADERS
from loopbench.harness.cli.main import main


def invoke(*args):
    return CliRunner().invoke(main, ["grade", *args])


def test_the_self_test_runs_every_graders_cases_and_passes():
    result = invoke("--self-test")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    graders = {line.split()[1] for line in lines if line.startswith("ok")}
    assert graders == {name for name, info in GRADERS.registered().items() if info.cases}
    # The judge's verdicts are a model's, given none here: tests/graders/test_judge.py.
    own = {name for name, info in GRADERS.registered().items() if not info.runs_code} - {"judge"}
    assert own <= graders
    assert lines[-1].endswith("0 failed")


def test_a_failing_case_fails_the_self_test():
    class Always(loopbench.Grader):
        async def grade(self, task, answer):
            return loopbench.Grade(True, "always")

    class WordTask(loopbench.TaskBase):
        expected: str

    wrong = SelfCase("x", "anything", False, "a grader that says yes to everything")
    refused = SelfCase(["x"], "anything", True, "an expected its model refuses")
    details = loopbench.GraderDetails(cases=(wrong, refused))
    loopbench.register_grader("always", WordTask, "yes", details)(lambda setup: Always())
    result = invoke("--self-test")
    assert result.exit_code == 1
    failed = [line for line in result.output.splitlines() if line.startswith("FAIL")]
    assert len(failed) == 2 and all(line.split()[1] == "always" for line in failed)
    assert "its expected is refused" in failed[1]
    assert result.output.splitlines()[-1].endswith("2 failed")


def test_grader_defaults_to_exact_as_before():
    args = ("--expected", '{"numbers": [59], "entities": ["Hamburg"]}', "--answer", "Hamburg, 59")
    assert invoke(*args).output == invoke(*args, "--grader", "exact").output
    assert invoke(*args).output.startswith("correct: numbers [59] match")


def test_a_score_is_printed_when_the_grader_gives_one():
    args = ("--grader", "f1", "--expected", '["Denver Broncos"]', "--answer", "Denver")
    assert invoke(*args).output.strip().endswith("(score 0.67)")
    as_json = json.loads(invoke(*args, "--format", "json").output)
    assert set(as_json) == {"correct", "reason", "score"}
    plain = json.loads(
        invoke(
            "--grader",
            "choice",
            "--expected",
            '{"choices": ["a", "b"], "answer": "A"}',
            "--answer",
            "A",
            "--format",
            "json",
        ).output
    )
    assert set(plain) == {"correct", "reason"}


def test_options_are_given_in_the_spec():
    args = ("--expected", "3.14159", "--answer", "Answer: 3.14", "--format", "json")
    assert not json.loads(invoke("--grader", "number", *args).output)["correct"]
    assert json.loads(invoke("--grader", "number:tolerance=0.01", *args).output)["correct"]


def test_bad_input_is_one_line_and_exit_2():
    for args, says in [
        (("--grader", "nope", "--expected", "1"), "no grader named 'nope'"),
        (("--grader", "code_tests", "--expected", "1"), "--task"),
        (("--grader", "number:tolerance", "--expected", "1"), "KEY=VALUE"),
        (("--grader", "number:tolerance=-1", "--expected", "1"), "tolerance"),
        (("--grader", "choice", "--expected", '"x"'), "--expected"),
        (("--grader", "regex", "--expected", '"("'), "not a regular expression"),
        (("--grader", "em", "--expected", '{"answers": ["4"], "answers": ["5"]}'), "twice"),
        (("--grader", "number", "--expected", '{"numbers": [NaN]}'), "NaN"),
        (("--grader", "em", "--expected", '{"answers": '), "not valid JSON"),
    ]:
        result = invoke(*args, "--answer", "x")
        assert result.exit_code == 2, (args, result.output)
        assert says in result.output, (args, result.output)
        assert "Traceback" not in result.output
