"""``loopbench tasks generate`` and ``tasks check`` through click: the shipped sets are what
their recorded command makes, bad input is one line and exit 2, check says who disagrees."""

import json
import shlex

import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.cli.tasks import tasks_group
from loopbench.harness.fakes.fake_server import FakeServer
from loopbench.harness.results.reading import read_records
from loopbench.tasks.loading import load_taskset
from loopbench.tasks.taskset import BUILTIN_DIR

FILES = ("taskset.toml", "tasks.jsonl", "encyclopedia.json")


def invoke(*args: str):
    return CliRunner().invoke(tasks_group, [str(a) for a in args])


@pytest.mark.parametrize("name", ["depot-500", "depot-easy"])
def test_the_recorded_command_remakes_the_shipped_set_byte_for_byte(tmp_path, name):
    recorded = load_taskset(name).generated_by
    words = shlex.split(recorded)
    assert words[:3] == ["loopbench", "tasks", "generate"]
    result = invoke(*words[2:], "--out", tmp_path / "again")
    assert result.exit_code == 0, result.output
    for file in FILES:
        assert (tmp_path / "again" / file).read_bytes() == (BUILTIN_DIR / name / file).read_bytes()
    assert sorted(p.name for p in (BUILTIN_DIR / name).iterdir()) == sorted(FILES)


def test_generate_then_check_agree_and_the_name_defaults_to_the_folder(tmp_path):
    out = tmp_path / "mine"
    made = invoke("generate", "--n", 8, "--hops", "2", "--seed", 1, "--out", out)
    assert made.exit_code == 0 and made.output.startswith(f"{out}: 8 tasks")
    assert load_taskset(out).name == "mine"
    checked = invoke("check", out)
    assert checked.exit_code == 0 and "agrees with all 8 tasks" in checked.output
    again = invoke("generate", "--n", 8, "--hops", "2", "--seed", 2, "--out", out)
    assert again.exit_code == 0  # a generated set may be replaced


def one_error_line(result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    return lines[0]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--n", "5", "--hops", "0"], "--hops '0' is out of order or range"),
        (["--n", "5", "--hops", "5-2"], "1 <= A <= B <= 4"),
        (["--n", "5", "--hops", "two"], "not a number or a range"),
        (["--n", "0"], "--n 0: give a number of questions"),
        (["--n", "5", "--ambiguity", "1.5"], "--ambiguity 1.5: give a share"),
        (["--n", "5", "--distractors", "nan"], "--distractors nan"),
        (["--n", "5", "--operations", "which", "--hops", "2-3"], "cannot make a question of 2"),
        (["--n", "5", "--operations", "which", "--hops", "2"], "questions of 3 or 4 look-ups"),
        (["--n", "5", "--operations", "lookup", "--hops", "2-3"], "of 1 look-up (--hops 1)"),
        (["--n", "5", "--operations", "product"], "unknown 'product'"),
        (["--n", "5", "--public", "-1"], "--public -1"),
        (["--n", "5", "--public", "500"], "--public may be at most"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(tmp_path, args, said):
    line = one_error_line(invoke("generate", *args, "--out", tmp_path / "o"))
    assert said in line
    assert not (tmp_path / "o").exists()


def test_a_folder_that_is_not_a_generated_set_is_not_overwritten(tmp_path):
    out = tmp_path / "notes"
    out.mkdir()
    (out / "mine.txt").write_text("keep me")
    line = one_error_line(invoke("generate", "--n", 3, "--out", out))
    assert "holds files and is not a generated task set" in line
    assert sorted(p.name for p in out.iterdir()) == ["mine.txt"]
    depot = tmp_path / "depot"
    depot.mkdir()
    for file in FILES:
        (depot / file).write_bytes((BUILTIN_DIR / "depot" / file).read_bytes())
    one_error_line(invoke("generate", "--n", 3, "--out", depot))
    assert (depot / "tasks.jsonl").read_bytes() == (BUILTIN_DIR / "depot/tasks.jsonl").read_bytes()
    (tmp_path / "file").write_text("x")
    assert "is a file" in one_error_line(invoke("generate", "--n", 3, "--out", tmp_path / "file"))


def test_check_names_each_task_that_disagrees_and_exits_1(tmp_path):
    out = tmp_path / "s"
    assert invoke("generate", "--n", 6, "--hops", "1-2", "--seed", 3, "--out", out).exit_code == 0
    lines = (out / "tasks.jsonl").read_text().splitlines()
    first, second = json.loads(lines[0]), json.loads(lines[1])
    first["expected"]["numbers"] = [n + 1 for n in first["expected"]["numbers"]]
    second["question"] = second["question"].replace("?", " today?")
    tampered = [json.dumps(first), json.dumps(second), *lines[2:]]
    (out / "tasks.jsonl").write_text("\n".join(tampered) + "\n")
    result = invoke("check", out)
    assert result.exit_code == 1
    assert f"{first['id']}: expected [" in result.output and "the solver finds [" in result.output
    assert f"{second['id']}: the solver cannot answer it" in result.output
    assert "disagrees on 2 of 6 tasks" in result.output


def test_check_refuses_a_set_that_is_not_generated_or_not_there(tmp_path):
    assert "is not a generated set" in one_error_line(invoke("check", BUILTIN_DIR / "depot"))
    assert "no task set" in one_error_line(invoke("check", tmp_path / "none"))


def test_a_generated_set_runs(tmp_path):
    out = tmp_path / "s"
    assert invoke("generate", "--n", 3, "--hops", "2", "--out", out).exit_code == 0
    with FakeServer() as server:
        args = ["run", "--tasks", str(out), "--arm", "direct", "--model", "fake", "--quiet"]
        args += ["--out", str(tmp_path / "r"), "--base-url", server.base_url]
        result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert len(read_records(tmp_path / "r")) == 3
