"""Every refusal is one line on stderr with nothing printed before it: no usage lines above
a bad value or a wrong name, no line saying which endpoint serves a run it then refuses,
no warning of a plotting library; stdout empty. Through the real command line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.fakes.fake_server import FakeServer
from tests.harness.report.test_table import record

ROOT = Path(__file__).parents[1]
NOWHERE = ["--model", "fake", "--base-url", "http://127.0.0.1:9/v1", "--max-retries", "0"]
#: A results folder: "{good}" in a case's arguments.
GOOD = "{good}"

REFUSALS = {
    "run-unknown-stage": (["run", *NOWHERE, "--arm", "nosuch>x"], "no pattern named 'nosuch'"),
    "run-bad-option": (["run", *NOWHERE, "--arm", "cot:bogus=1"], "cot has no option 'bogus'"),
    "run-unknown-arm": (["run", *NOWHERE, "--arm", "nosuch"], "no pattern named 'nosuch'"),
    "run-not-key-value": (["run", *NOWHERE, "--arm", "cot:steps"], "is not key=value"),
    "run-unknown-tasks": (["run", *NOWHERE, "--arm", "cot", "--tasks", "nosuch"], "nosuch"),
    "run-no-such-option": (["run", "--nosuch"], "No such option '--nosuch'"),
    "run-bad-number": (["run", *NOWHERE, "--arm", "cot", "--repeats", "x"], "'x' is not"),
    "table-missing": (["table", "{tmp}/none"], "no such file"),
    "table-format": (["table", GOOD, "--format", "nosuch"], "Invalid value for '--format'"),
    "table-vs": (["table", GOOD, "--vs", "nosuch"], "nosuch"),
    "compare-missing": (["compare", "{tmp}/a", "{tmp}/b"], "no such file"),
    "report-missing": (["report", "{tmp}/none", "-o", "{tmp}/r.html"], "no such file"),
    "report-no-output": (["report", GOOD], "Missing option '-o'"),
    "report-nowhere": (["report", GOOD, "-o", "{tmp}/none/r.html"], "r.html"),
    "export-format": (["export", GOOD, "--format", "nosuch"], "Invalid value for '--format'"),
    "failures-missing": (["failures", "{tmp}/none"], "no such file"),
    "grade-nothing": (["grade"], "give --self-test"),
    "grade-half-code": (["grade", "--task", "humaneval/0"], "give both --task and --code-file"),
    "grade-grader": (["grade", "--grader", "nosuch", "--answer", "1", "--expected", "1"], "nosuch"),
    "power-correlation": (
        ["power", "--baseline", "0.5", "--delta", "0.1", "--arm-correlation", "most"],
        "--arm-correlation 'most'",
    ),
    "cost-steps": (["cost", "growth", "--steps", "x"], "--steps 'x'"),
    "patterns-prompts": (["patterns", "--prompts"], "give PATTERN"),
    "patterns-unknown": (["patterns", "nosuch"], "no pattern named 'nosuch'"),
    "tasks-check": (["tasks", "check", "nosuch"], "nosuch"),
    "tasks-option": (["tasks", "list", "--nosuch"], "see 'loopbench tasks list --help'"),
    "no-such-command": (["nosuch"], "No such command 'nosuch'"),
    "group-option": (["--nosuch", "table"], "No such option '--nosuch'"),
}


def good_folder(folder: Path) -> Path:
    folder.mkdir()
    runs = [record(arm=arm, task=f"t{i}") for arm in ("cot", "direct") for i in (1, 2)]
    (folder / "runs.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in runs))
    return folder


def one_line(result, *words: str) -> str:
    """The one line a refusal says: stderr, after exit code 2 and an empty stdout."""
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert result.stdout == "", result.stdout
    [line] = result.stderr.splitlines()
    assert line.startswith("Error: "), line
    for word in words:
        assert word in line, f"{word!r} not in {line!r}"
    return line


@pytest.mark.parametrize("name", REFUSALS)
def test_a_refusal_is_one_line_on_stderr_and_nothing_else(name, tmp_path):
    args, said = REFUSALS[name]
    good = good_folder(tmp_path / "good")
    given = [a.replace(GOOD, str(good)).replace("{tmp}", str(tmp_path)) for a in args]
    one_line(CliRunner().invoke(main, given, prog_name="loopbench"), said)


def test_a_wrong_arm_is_one_line_from_the_installed_command_too(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "loopbench.harness.cli", "run", *NOWHERE, "--arm", "nosuch>x"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("Error: arm 'nosuch>x': stage 1: no pattern named 'nosuch'")
    assert len(done.stderr.splitlines()) == 1


def test_a_group_without_a_subcommand_still_shows_its_help():
    for args in ([], ["tasks"]):
        result = CliRunner().invoke(main, args, prog_name="loopbench")
        assert result.output.startswith("Usage: loopbench") and "Commands:" in result.output
        assert len(result.output.splitlines()) > 5  # its lines, not one escaped line


def test_a_resume_refused_is_said_before_any_endpoint_is_named(tmp_path):
    folder = tmp_path / "old"
    shutil.copytree(ROOT / "tests" / "fixtures" / "results-0.1.0", folder)
    with FakeServer() as server:
        meta = json.loads((folder / "experiment.json").read_text())
        meta["base_url"] = server.base_url
        (folder / "experiment.json").write_text(json.dumps(meta))
        args = ["run", "--model", "fake", "--out", str(folder), "--repeats", "2"]
        args += ["--base-url", server.base_url, "--temperature", "0", "--arm", "best_of_n:n=2"]
        result = CliRunner().invoke(main, args)
        assert server.served.requests == 0
    one_line(result, "runs of best_of_n:n=2 there were made with other options")


def test_report_prints_no_warning_for_names_its_font_cannot_draw(tmp_path):
    folder = tmp_path / "r"
    folder.mkdir()
    runs = [
        record(arm=arm, task=f"t{i}", model="模型-😀") for arm in ("cot", "直接") for i in (1, 2)
    ]
    (folder / "runs.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in runs))
    result = CliRunner().invoke(main, ["report", str(folder), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 0 and result.stderr == "", result.stderr
