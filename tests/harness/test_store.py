"""A results folder is tied to its task set's content, has one writer, and never counts a
run twice."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.fakes.fake_server import FakeServer, Reply, default_responder, question_index
from loopbench.harness.grid import recorded_runs
from loopbench.harness.models.endpoint import without_credentials
from loopbench.harness.results import reading
from loopbench.harness.results.prices import load_prices
from loopbench.harness.results.reading import ResultsError, read_records
from loopbench.harness.results.store import ResultsFolder
from loopbench.tasks.loading import load_taskset
from loopbench.tasks.taskset import BUILTIN_DIR

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


def test_a_task_fingerprint_follows_what_it_asks_and_expects_not_its_slice():
    task = DEPOT.tasks[0]
    changed = task.model_copy(update={"question": task.question + " In metres?"})
    assert changed.fingerprint != task.fingerprint
    assert changed.model_copy(update={"slice": "other"}).fingerprint == changed.fingerprint
    assert META["fingerprint"]["tasks"][task.id] == task.fingerprint


def test_resume_runs_again_only_the_runs_of_changed_tasks_superseding_them(tmp_path):
    with ResultsFolder.open(tmp_path, META) as folder:
        line = {"arm": "direct", "task_id": DEPOT.tasks[0].id, "repeat": 0, "status": "answered"}
        rows = [
            {**line, "run_id": "a", "task_fingerprint": DEPOT.tasks[0].fingerprint},
            {**line, "run_id": "b", "task_id": DEPOT.tasks[1].id, "task_fingerprint": "0" * 16},
            {**line, "run_id": "c", "task_id": DEPOT.tasks[2].id},  # before fingerprints
            {**line, "run_id": "d", "task_id": DEPOT.tasks[3].id, "status": "api_error"},
        ]
        (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        done, again = recorded_runs(folder.records(), DEPOT)
        _, with_errors = recorded_runs(folder.records(), DEPOT, retry_errors=True)
    assert {key[2] for key in done} == {t.id for t in DEPOT.tasks[:4]} - {DEPOT.tasks[1].id}
    model = folder.records()[0].model
    assert again == {(model, "direct", DEPOT.tasks[1].id, 0): "b"}
    assert with_errors == again | {(model, "direct", DEPOT.tasks[3].id, 0): "d"}


def test_a_second_writer_is_refused_naming_the_first(tmp_path):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from loopbench.harness.results.store import ResultsFolder; "
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


def test_readers_count_a_run_recorded_twice_once_and_name_its_lines(tmp_path, capsys):
    line = json.dumps({"arm": "direct", "task_id": "t", "repeat": 0, "status": "answered"})

    def copied(name: str) -> str:
        """A folder of its own for each reader: a warning is said once a process."""
        (tmp_path / name).mkdir()
        (tmp_path / name / "runs.jsonl").write_text(f"{line}\n{line}\n")
        return str(tmp_path / name)

    records = copied("records")
    assert len(read_records(records)) == 1 and read_records(records, superseded=True) == []
    assert "line 2 repeats line 1 (run ('', 'direct', 't', 0))" in capsys.readouterr().err
    for command in (["table", copied("table")], ["compare", *[copied("compare")] * 2]):
        result = CliRunner().invoke(main, [*command, "--format", "json"])
        assert result.exit_code == 0, result.output
        assert "line 2 repeats line 1 (run ('', 'direct', 't', 0))" in result.stderr
        shown = json.loads(result.stdout)
        [row] = shown["arms"] if isinstance(shown, dict) else shown
        assert row.get("n", row.get("n_pairs")) == 1


def test_a_record_superseding_another_run_id_records_the_run_again(tmp_path):
    """--retry-errors names the record it replaces: a record naming any other run_id (one
    copied from another folder) is the run recorded again, and the first record counts."""
    line = {"arm": "direct", "task_id": "t", "repeat": 0, "status": "api_error"}
    rows = [
        {**line, "run_id": "a"},
        {**line, "run_id": "b", "supersedes": "elsewhere", "status": "answered"},
        {**line, "run_id": "c", "supersedes": "a", "status": "answered"},
    ]
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    runs, replaced = reading.read_both(tmp_path)
    assert [r.run_id for r in runs] == ["c"] and [r.run_id for r in replaced] == ["a"]


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


def test_retry_errors_runs_only_api_errors_again_and_keeps_the_old_records(tmp_path):
    failing = {"on": True}

    def responder(body):
        question = body["messages"][question_index(body["messages"])]["content"]
        if failing["on"] and "Eiffel" in question:
            return Reply(status=500)
        return default_responder(body)

    out = tmp_path / "r"
    with FakeServer(responder) as srv:
        args = ["run", "--arm", "direct", "--model", "fake", "--quiet", "--max-retries", "0"]
        args += ["--base-url", srv.base_url, "--out", str(out)]
        assert CliRunner().invoke(main, args).exit_code == 0
        failed = {r.run_id: r for r in read_records(out) if r.status == "api_error"}
        failing["on"] = False
        again = CliRunner().invoke(main, args)  # an ordinary resume skips the failures
        retried = CliRunner().invoke(main, [*args, "--retry-errors"])
    n = len(failed)
    assert n >= 1 and "0 runs done, 12 already recorded" in again.output
    assert f"{n} runs done, {12 - n} already recorded" in retried.output
    records, replaced = read_records(out), read_records(out, superseded=True)
    assert {r.run_id for r in replaced} == set(failed)
    renewed = [r for r in records if r.supersedes]
    assert {r.supersedes for r in renewed} == set(failed)
    assert {r.status for r in renewed} == {"answered"}
    assert len(records) == 12 and len((out / "runs.jsonl").read_text().splitlines()) == 12 + n
    args = ["table", str(out), "--format", "json", "--price-as", "gpt-5-mini"]
    table = CliRunner().invoke(main, args)
    [row] = json.loads(table.output[table.output.index("[") :])
    assert (row["n"], row["retried_runs"]) == (12, n)
    price = load_prices().require("gpt-5-mini")
    every = read_records(out) + read_records(out, superseded=True)
    spent = sum(price.cost(r.tokens_in, r.tokens_out, r.tokens_cached) for r in every)
    assert row["cost_usd"] == pytest.approx(spent) and spent > 0


def test_a_kill_mid_write_is_repaired_with_a_warning(tmp_path, server):
    out = tmp_path / "r"
    assert run_into(out, server).exit_code == 0
    with (out / "traces.jsonl").open("a") as traces:
        traces.write(json.dumps({"run_id": "killed-before-its-record", "events": []}) + "\n")
    with (out / "runs.jsonl").open("a") as runs:
        runs.write('{"arm": "direct", "task_id": "ceo-a')
    result = run_into(out, server, arm="cot")
    assert result.exit_code == 0, result.output
    assert "runs.jsonl: cut a half-written last line" in result.output
    assert "dropped 1 trace line(s)" in result.output
    assert "killed-before-its-record" not in (out / "traces.jsonl").read_text()
    assert len(read_records(out)) == 24


def test_a_results_file_that_is_not_utf8_is_refused_by_line(tmp_path):
    line = json.dumps({"arm": "direct", "task_id": "t", "repeat": 0, "status": "answered"})
    (tmp_path / "runs.jsonl").write_bytes(f"{line}\n".encode() + b'{"arm": "\xff"}\n')
    with pytest.raises(ResultsError, match=r"runs.jsonl:2: not UTF-8 text"):
        read_records(tmp_path)
    (tmp_path / "runs.jsonl").write_bytes(b"\xef\xbb\xbf" + f"{line}\n".encode())
    assert [r.task_id for r in read_records(tmp_path)] == ["t"]  # a BOM is not an error


def test_a_long_reply_is_cut_in_the_trace_never_in_what_is_graded(tmp_path):
    long_answer = "very " * 2000 + "84"  # the number only past the cut

    def responder(body):
        return Reply(content=long_answer)

    with FakeServer(responder) as srv:
        args = ["run", "--arm", "direct", "--model", "fake", "--quiet", "--base-url", srv.base_url]
        args += ["--out", str(tmp_path / "r"), "--max-trace-text", "1000"]
        assert CliRunner().invoke(main, args).exit_code == 0
    records = read_records(tmp_path / "r")
    [eiffel] = [r for r in records if r.task_id == "eiffel-opera-house"]
    assert eiffel.correct is True  # graded whole: the 84 at the very end counted
    assert all(len(r.answer) < 1100 and "more characters cut on disk]" in r.answer for r in records)
    [line] = (tmp_path / "r" / "traces.jsonl").read_text().splitlines()[:1]
    assert "more characters cut on disk]" in line and len(line) < 6 * 1000 + 3000


def test_an_unknown_price_as_is_refused_before_anything_runs(tmp_path, server):
    result = CliRunner().invoke(
        main,
        [
            *("run", "--arm", "direct", "--model", "fake", "--base-url", server.base_url),
            *("--out", str(tmp_path / "r"), "--price-as", "no-such-model"),
        ],
    )
    assert result.exit_code == 2 and "no-such-model" in result.output
    assert server.served.requests == 0 and not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["run", "--arm", "direct", "--timeout", "nan"],
        ["run", "--arm", "direct", "--rate-limit", "inf"],
        ["compare", ".", ".", "--alpha", "nan"],
        ["compare", ".", ".", "--alpha", "1"],
        ["compare", ".", ".", "--max-drop", "nan"],
        ["compare", ".", ".", "--max-cost-rise", "-1"],
        ["cost", "verifier", "--p", "nan"],
    ],
)
def test_a_number_that_would_disable_a_check_is_refused(args):
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    if args[-1] in ("nan", "inf"):  # refused as the option is read, saying why
        assert "is not a finite number" in result.output, result.output


def test_a_reply_with_thousands_of_tool_calls_or_a_huge_name_stays_small_on_disk(tmp_path):
    def call(i, name="lookup"):
        arguments = json.dumps({"title": "Nile"})
        return {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": name, "arguments": arguments},
        }

    def responder(body):
        if len(body["messages"]) > 2:
            return Reply(content="84")
        return Reply(tool_calls=[call(0, "x" * 100_000)] + [call(i) for i in range(1, 5000)])

    with FakeServer(responder) as srv:
        args = ["run", "--arm", "react", "--model", "fake", "--quiet", "--base-url", srv.base_url]
        args += ["--out", str(tmp_path / "r"), "--max-trace-text", "200", "--tasks", "depot"]
        assert CliRunner().invoke(main, args).exit_code == 0
    size = (tmp_path / "r" / "traces.jsonl").stat().st_size
    assert size < 12 * 2_000_000  # 12 runs, each well under 2 MB
    # Written compact (loopbench.harness.fast_json); the same marker either way a line is spaced.
    traces = (tmp_path / "r" / "traces.jsonl").read_text()
    assert re.search(r'"cut": ?"4900 more tool calls"', traces)
