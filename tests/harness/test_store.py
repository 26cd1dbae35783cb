"""A results folder is tied to its task set's content, has one writer, and never counts a
run twice."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import main
from harness.models.fake_server import FakeServer
from harness.models.settings import without_credentials
from harness.store import ResultsError, ResultsFolder, read_records
from tasks import load_taskset
from tasks.taskset import BUILTIN_DIR

DEPOT = load_taskset("depot")
META = {"task_set": "depot", "model": "m", "base_url": "u", "fingerprint": DEPOT.fingerprint()}


@pytest.fixture
def server():
    with FakeServer() as srv:
        yield srv


def run_into(out, server, tasks="depot", arm="direct", model="fake"):
    args = ["run", "--tasks", str(tasks), "--arm", arm, "--model", model, "--quiet"]
    return CliRunner().invoke(main, [*args, "--out", str(out), "--base-url", server.base_url])


def copy_of_depot(tmp_path):
    folder = tmp_path / "depot-copy"
    shutil.copytree(BUILTIN_DIR / "depot", folder, ignore=shutil.ignore_patterns("*.py*"))
    return folder


def rewrite_tasks(folder, change):
    path = folder / "tasks.jsonl"
    tasks = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json.dumps(change(t)) + "\n" for t in tasks))


def test_a_changed_answer_key_under_the_same_name_is_refused(tmp_path, server):
    copy = copy_of_depot(tmp_path)
    assert run_into(tmp_path / "r", server, copy).exit_code == 0

    def other_answer(task):
        return {**task, "expected": {"numbers": [1234]}} if task["id"] == "ceo-age" else task

    rewrite_tasks(copy, other_answer)
    result = run_into(tmp_path / "r", server, copy)
    assert result.exit_code == 2
    assert "tasks changed since: ceo-age" in result.output and "another --out" in result.output
    assert len(read_records(tmp_path / "r")) == 12  # nothing added, nothing lost


def test_changed_tools_and_another_endpoint_are_refused(tmp_path, server):
    copy = copy_of_depot(tmp_path)
    assert run_into(tmp_path / "r", server, copy).exit_code == 0
    book = json.loads((copy / "encyclopedia.json").read_text())
    first = next(iter(book["entries"]))
    book["entries"][first] += " Reopened in 2031."
    (copy / "encyclopedia.json").write_text(json.dumps(book))
    result = run_into(tmp_path / "r", server, copy)
    assert result.exit_code == 2 and "encyclopedia changed" in result.output
    with FakeServer() as elsewhere:
        moved = run_into(tmp_path / "r2", server)
        assert moved.exit_code == 0
        again = run_into(tmp_path / "r2", elsewhere)
    assert again.exit_code == 2 and "base_url" in again.output


def test_a_record_of_a_changed_task_is_not_counted_as_done():
    folder_meta = dict(META)
    task = DEPOT.tasks[0]
    changed = task.model_copy(update={"question": task.question + " In metres?"})
    assert changed.fingerprint != task.fingerprint
    assert changed.model_copy(update={"slice": "other"}).fingerprint == changed.fingerprint
    assert folder_meta["fingerprint"]["tasks"][task.id] == task.fingerprint


def test_resume_skips_only_records_whose_task_is_unchanged(tmp_path):
    with ResultsFolder.open(tmp_path, META) as folder:
        line = {"arm": "direct", "task_id": DEPOT.tasks[0].id, "repeat": 0, "status": "answered"}
        rows = [
            {**line, "task_fingerprint": DEPOT.tasks[0].fingerprint},
            {**line, "task_id": DEPOT.tasks[1].id, "task_fingerprint": "0" * 16},
            {**line, "task_id": DEPOT.tasks[2].id},  # written before fingerprints: trusted
        ]
        (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        done = folder.done({t.id: t.fingerprint for t in DEPOT.tasks})
    assert {key[1] for key in done} == {DEPOT.tasks[0].id, DEPOT.tasks[2].id}


def test_a_second_writer_is_refused_naming_the_first(tmp_path):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from harness.store import ResultsFolder; "
            f"held = ResultsFolder.open({str(tmp_path)!r}, {{'task_set': 'depot', 'model': 'm'}}); "
            "print('held', flush=True); time.sleep(30)",
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parents[2],
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(ResultsError, match=rf"being written by loopbench \(pid {holder.pid}\)"):
            ResultsFolder.open(tmp_path, {"task_set": "depot", "model": "m"})
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    with ResultsFolder.open(tmp_path, {"task_set": "depot", "model": "m"}):
        pass  # the lock went with the process


def test_the_run_command_refuses_a_locked_folder_with_exit_2(tmp_path, server):
    with ResultsFolder.open(tmp_path / "r", {"task_set": "depot", "model": "fake"}):
        result = run_into(tmp_path / "r", server)
    assert result.exit_code == 2 and "being written by" in result.output
    assert not (tmp_path / "r" / "runs.jsonl").exists()


def test_readers_refuse_a_run_recorded_twice(tmp_path):
    line = json.dumps({"arm": "direct", "task_id": "t", "repeat": 0, "status": "answered"})
    (tmp_path / "runs.jsonl").write_text(f"{line}\n{line}\n")
    with pytest.raises(ResultsError, match=r"runs.jsonl:2: run .* already recorded on line 1"):
        read_records(tmp_path)
    for command in (["table", str(tmp_path)], ["compare", str(tmp_path), str(tmp_path)]):
        result = CliRunner().invoke(main, command)
        assert result.exit_code == 2 and "already recorded on line 1" in result.output


def test_out_that_is_a_file_is_refused(tmp_path, server):
    (tmp_path / "f").write_text("x")
    result = run_into(tmp_path / "f", server)
    assert result.exit_code == 2 and "is a file" in result.output


def test_credentials_in_the_base_url_are_never_recorded(tmp_path, server):
    url = server.base_url.replace("http://", "http://alice:s3cret-pw@")
    args = ["run", "--arm", "direct", "--model", "fake", "--quiet", "--base-url", url]
    result = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    for file in (tmp_path / "r").iterdir():
        assert "s3cret-pw" not in file.read_text() and "alice" not in file.read_text(), file
    assert without_credentials("https://u:p@host:8443/v1") == "https://host:8443/v1"
