"""Grading one answer as ``loopbench grade --grader NAME`` does, for the graders' tests."""

import json

from click.testing import CliRunner

from graders.base import GraderSetup
from graders.registry import GRADERS
from graders.selftest import as_task
from harness.cli.main import main


def graded(grader: str, expected, answer: str) -> dict:
    """The JSON verdict ``grade --grader`` prints (``grader`` may carry options)."""
    args = ["--grader", grader, "--expected", json.dumps(expected), "--answer", answer]
    result = CliRunner().invoke(main, ["grade", *args, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def refused(grader: str, expected) -> str:
    """The one line ``grade --grader`` says when the grader refuses ``expected``."""
    args = ["--grader", grader, "--expected", json.dumps(expected), "--answer", "x"]
    result = CliRunner().invoke(main, ["grade", *args])
    assert result.exit_code == 2, result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    return result.output


def canonical(grader: str, expected, answer: str, **options) -> str:
    info = GRADERS.lookup(grader)
    task = as_task(info, expected)
    return info.build(GraderSetup(folder=None, options=options, tasks=(task,))).canonical(
        task, answer
    )


def from_target(grader: str, target, **extras):
    """A data file's answer cell made the grader's expected, as its task model reads it."""
    info = GRADERS.lookup(grader)
    assert info.from_target is not None
    return as_task(info, info.from_target(target, extras)).expected
