"""Grading one answer as ``loopbench grade --grader NAME`` does, for the graders' tests."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from loopbench.graders.base import GraderSetup
from loopbench.graders.registry import GRADERS
from loopbench.graders.selftest import as_task
from loopbench.harness.cli.main import main

ROOT = Path(__file__).parents[2]


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


def graded_apart(grader: str, expected, answer: str, within: float = 60) -> tuple[dict, float]:
    """The JSON verdict of ``grade --grader`` run in its own process, and the seconds it
    took: a grading that hangs fails the test after ``within`` seconds instead of holding
    the suite."""
    args = ["--grader", grader, "--expected", json.dumps(expected), "--answer", answer]
    command = [sys.executable, "-m", "loopbench.harness.cli", "grade", *args, "--format", "json"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=within)
    except subprocess.TimeoutExpired:
        pytest.fail(f"grading {answer[:40]!r} with {grader} still running after {within} s")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), time.monotonic() - started
