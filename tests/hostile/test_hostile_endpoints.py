"""Hostile endpoints through ``loopbench run``: compression bombs, bodies too large or nested
too deep, numbers too long, and a reply that comes a byte a second.

A reply past the size limit, or one that is not a chat completion, ends its run as
``api_error`` with the reason, and what the run's earlier calls used stays counted. Tool
arguments no parser should take (nested 100,000 deep, a 5,000-digit integer) are the
endpoint's doing: the pattern answers them as it answers any malformed tool call, and no
run is a ``pattern_error``. ``bench/hostile_endpoints.py`` measures the memory it takes.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.fakes.fake_server import question_index
from loopbench.harness.results.reading import read_records
from loopbench.harness.results.statuses import INFRASTRUCTURE_STATUSES
from loopbench.harness.results.store import iter_traces
from tests.fakes.fault_server import FaultServer, Hostile

#: Room for 32 MiB over loopback on a busy machine; the dribble's run has a short one.
TIMEOUT = 60.0
DRIBBLE_TIMEOUT = 3.0
MAX_RETRIES = 1
#: Eight times the default limit: enough to show that the rest is never read.
BOMB_BYTES = 256 << 20
TOO_LARGE = "once decompressed, the most a reply may hold; the rest of it was not read"

#: What the reply to a run's second call does to the run: status, excerpts of its error,
#: and the requests the server saw for that call (a retried one comes twice).
REPLY_FAULTS: dict[str, tuple[str, tuple[str, ...], int]] = {
    "gzip_bomb": ("api_error", ("(HTTP 200) is more than 32 MiB", TOO_LARGE), 1),
    "deflate_bomb": ("api_error", ("(HTTP 200) is more than 32 MiB", TOO_LARGE), 1),
    "huge_body": ("api_error", ("(HTTP 200) is more than 32 MiB", TOO_LARGE), 1),
    "huge_error": ("api_error", ("(HTTP 500) is more than 32 MiB", TOO_LARGE), 1),
    "deep_body": ("api_error", ("not a chat completion", "maximum recursion depth"), 2),
    "long_integer_usage": ("api_error", ("not a chat completion", "4300 digits"), 2),
}
#: A byte a second: its reply would take minutes, and the timeout ends it at 3 s.
DRIBBLE = ("api_error", (f"no complete reply within --timeout {DRIBBLE_TIMEOUT:g} s",), 2)
ARGUMENT_FAULTS: tuple[Hostile, ...] = ("deep_arguments", "long_integer_arguments")
ARMS = ["react", "react:finish=tool", "rewoo", "plan_execute", "reflection", "react_text"]


def question(task_id: str) -> str:
    return f"What is 80 + 4? (case {task_id})"


def run_of(body: dict) -> tuple[str, str, int]:
    """The task a request belongs to, its arm's system prompt, and the replies so far."""
    messages = body["messages"]
    start = question_index(messages)
    asked = (re.search(r"\(case (\S+)\)", m["content"] or "") for m in messages)
    task = next(found[1] for found in asked if found)
    system = messages[0]["content"] if messages[0]["role"] == "system" else ""
    return task, system, sum(m["role"] == "assistant" for m in messages[start:])


class Script:
    """A reply fault on each run's second call; an argument fault on the first call of each
    run that offers tools (of a planning or a tool-calling step alike)."""

    def __init__(self) -> None:
        self._faulted: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def __call__(self, n: int, body: dict) -> str | None:
        task, system, turn = run_of(body)
        if task in REPLY_FAULTS or task == "dribble":
            return task if turn == 1 else None
        if task in ARGUMENT_FAULTS and body.get("tools"):
            with self._lock:
                first = (task, system) not in self._faulted
                self._faulted.add((task, system))
            return task if first else None
        return None


@dataclass
class Grid:
    records: list
    traces: dict
    server: FaultServer
    output: str


def exit_for(out: Path) -> int:
    """``run``'s exit code for the folder: 3 when an arm graded nothing (every run of it an
    endpoint's or the harness's failure), else 0."""
    by_arm: dict[str, set[str]] = {}
    for record in read_records(out):
        by_arm.setdefault(record.arm, set()).add(record.status)
    return 3 if any(s <= INFRASTRUCTURE_STATUSES for s in by_arm.values()) else 0


def run_grid(
    tmp: Path, server: FaultServer, tasks: list[str], arms: list[str], timeout: float = TIMEOUT
) -> Grid:
    folder = tmp / "tasks"
    folder.mkdir()
    (folder / "taskset.toml").write_text('name = "hostile"\ntools = ["lookup", "calc"]\n')
    (folder / "encyclopedia.json").write_text(json.dumps({"entries": {"Paris": "A city."}}))
    lines = [
        json.dumps({"id": t, "question": question(t), "expected": {"numbers": [84]}}) for t in tasks
    ]
    (folder / "tasks.jsonl").write_text("\n".join(lines) + "\n")
    out = tmp / "out"
    args = [
        *("run", "--tasks", str(folder), "--model", "fake", "--quiet", "--out", str(out)),
        *("--base-url", server.base_url, "--timeout", str(timeout)),
        *("--max-retries", str(MAX_RETRIES)),
        *(item for arm in arms for item in ("--arm", arm)),
    ]
    result = CliRunner().invoke(main, args, env={"LOOPBENCH_API_KEY": "k"}, catch_exceptions=False)
    assert result.exit_code == exit_for(out), result.output
    traces = {t["run_id"]: t["events"] for t in iter_traces(out)}
    return Grid(read_records(out), traces, server, result.output)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Grid:
    with FaultServer(Script(), bomb_bytes=BOMB_BYTES) as server:
        tmp = tmp_path_factory.mktemp("hostile")
        return run_grid(tmp, server, [*REPLY_FAULTS, *ARGUMENT_FAULTS], ["react"])


@pytest.fixture(scope="module")
def dribble(tmp_path_factory: pytest.TempPathFactory) -> Grid:
    with FaultServer(Script(), dribble_s=1.0, hang_s=30) as server:
        tmp = tmp_path_factory.mktemp("dribble")
        return run_grid(tmp, server, ["dribble"], ["react"], DRIBBLE_TIMEOUT)


@pytest.fixture(scope="module")
def arguments(tmp_path_factory: pytest.TempPathFactory) -> Grid:
    with FaultServer(Script()) as server:
        return run_grid(tmp_path_factory.mktemp("arguments"), server, [*ARGUMENT_FAULTS], ARMS)


def served(grid: Grid, task: str, key: str) -> int:
    hits = [h for h in grid.server.hits if run_of(h.body)[0] == task]
    return sum(h.usage[key] for h in hits if h.usage is not None)


def check_reply_fault(grid: Grid, fault: str, expected: tuple[str, tuple[str, ...], int]) -> None:
    status, excerpts, attempts = expected
    [record] = [r for r in grid.records if r.task_id == fault]
    assert record.status == status, record.error
    for excerpt in excerpts:
        assert excerpt in (record.error or ""), record.error
    assert [h.fault for h in grid.server.hits].count(fault) == attempts
    # The first call's usage is counted, and no more (the hostile reply reported none).
    assert record.tokens_in == served(grid, fault, "prompt_tokens") > 0
    assert record.tokens_out == served(grid, fault, "completion_tokens") > 0
    [failed] = [e for e in grid.traces[record.run_id] if e["kind"] == "api_error"]
    assert failed["error"] == record.error


@pytest.mark.parametrize("fault", REPLY_FAULTS)
def test_a_hostile_reply_ends_its_run_as_api_error_with_its_reason_and_usage(hostile, fault):
    check_reply_fault(hostile, fault, REPLY_FAULTS[fault])


def test_a_reply_a_byte_a_second_ends_at_the_timeout_as_api_error(dribble):
    check_reply_fault(dribble, "dribble", DRIBBLE)


def test_no_hostile_endpoint_makes_a_pattern_error(hostile, dribble, arguments):
    records = [*hostile.records, *dribble.records, *arguments.records]
    assert len(records) == len(REPLY_FAULTS) + 1 + len(ARGUMENT_FAULTS) * (1 + len(ARMS))
    assert [r.error for r in records if r.status == "pattern_error"] == []


@pytest.mark.parametrize("fault", ARGUMENT_FAULTS)
def test_unreadable_tool_arguments_are_a_failed_call_the_model_reads(hostile, fault):
    [record] = [r for r in hostile.records if r.task_id == fault]
    # Answered, unless the 200 kB of brackets sent back with the conversation used up the
    # run's tokens first: either way a limit the run reached, not a crash.
    assert record.status in ("answered", "token_budget"), record.error
    events = hostile.traces[record.run_id]
    [failed] = [e for e in events if e["kind"] == "tool_call" and not e["ok"]]
    assert "the arguments to lookup are not valid JSON" in failed["result"]


@pytest.mark.parametrize("arm", ARMS)
@pytest.mark.parametrize("fault", ARGUMENT_FAULTS)
def test_every_pattern_answers_unreadable_arguments_as_malformed(arguments, arm, fault):
    [record] = [r for r in arguments.records if r.task_id == fault and r.arm == arm]
    assert record.status not in ("pattern_error", "api_error"), record.error
    assert [h.fault for h in arguments.server.hits].count(fault) >= 1


def flag_grid(tmp: Path, *given: str, experiment: str | None = None) -> Grid:
    """A gzip bomb of 4 MiB on each run's second call, under the limit ``given``."""
    with FaultServer(lambda n, body: "gzip_bomb" if n == 2 else None, bomb_bytes=4 << 20) as s:
        folder = tmp / "tasks"
        folder.mkdir(parents=True)
        (folder / "taskset.toml").write_text('name = "limit"\ntools = ["lookup", "calc"]\n')
        (folder / "encyclopedia.json").write_text(json.dumps({"entries": {"Paris": "A city."}}))
        (folder / "tasks.jsonl").write_text(
            json.dumps({"id": "t", "question": question("t"), "expected": {"numbers": [84]}})
        )
        args = [*("run", "--tasks", str(folder), "--model", "fake", "--quiet")]
        args += [*("--base-url", s.base_url, "--out", str(tmp / "out"), *given)]
        if experiment is None:
            args += ["--arm", "react"]
        else:
            (tmp / "exp.toml").write_text(f'arms = ["react"]\n{experiment}\n')
            args += ["--experiment", str(tmp / "exp.toml")]
        result = CliRunner().invoke(main, args, env={"LOOPBENCH_API_KEY": "k"})
        assert result.exit_code == exit_for(tmp / "out"), result.output
        return Grid(read_records(tmp / "out"), {}, s, result.output)


def test_max_response_mb_sets_the_limit_from_the_command_line_or_an_experiment_file(tmp_path):
    under_default = flag_grid(tmp_path / "default")
    assert [r.status for r in under_default.records] == ["answered"]
    for name, grid in [
        ("flag", flag_grid(tmp_path / "flag", "--max-response-mb", "1")),
        ("file", flag_grid(tmp_path / "file", experiment="max_response_mb = 1.0")),
    ]:
        [record] = grid.records
        assert record.status == "api_error", name
        assert "(HTTP 200) is more than 1 MiB once decompressed" in record.error, name
        assert "(--max-response-mb 1)" in record.error, name


@pytest.mark.parametrize("size", ["0", "-1", "nan"])
def test_a_limit_that_is_not_a_size_is_refused_in_one_line(size):
    result = CliRunner().invoke(main, ["run", "--arm", "direct", "--max-response-mb", size])
    assert result.exit_code == 2
    assert "Invalid value for '--max-response-mb'" in result.output
    assert "Traceback" not in result.output
