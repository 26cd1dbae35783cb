"""End to end through the CLI against a loopback fake server that counts what it serves."""

import importlib.metadata
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

import loopbench.harness.api
import loopbench.harness.grid
from loopbench.harness.cli.main import main
from loopbench.harness.config import RunConfig
from loopbench.harness.fakes.fake_server import FakeServer, Reply, default_responder, question_index
from loopbench.harness.results.reading import read_records

SECRET = "sk-test-secret-never-written-0001"
ALL_ARMS = [
    "direct",
    "cot",
    "react_text",
    "react_text:guard=on,tool=improved",
    "react",
    "react:finish=tool",
]


@pytest.fixture
def server():
    with FakeServer() as srv:
        yield srv


def run(args, env=None):
    env = {"LOOPBENCH_API_KEY": SECRET, **(env or {})}
    return CliRunner().invoke(main, args, env=env, catch_exceptions=False)


def arms(*names):
    return [a for n in names for a in ("--arm", n)]


def test_recorded_usage_equals_what_the_server_served(server, tmp_path):
    out = tmp_path / "r"
    result = run(
        [
            "run",
            "--base-url",
            server.base_url,
            "--model",
            "fake",
            "--repeats",
            "2",
            "--out",
            str(out),
            "--quiet",
            *arms(*ALL_ARMS),
        ]
    )
    assert result.exit_code == 0, result.output
    records = read_records(out)
    assert len(records) == len(ALL_ARMS) * 12 * 2
    served = server.served
    assert sum(r.turns for r in records) == served.requests
    assert sum(r.tokens_in for r in records) == served.prompt_tokens
    assert sum(r.tokens_out for r in records) == served.completion_tokens
    assert sum(r.tokens_cached for r in records) == served.cached_tokens > 0
    assert "| direct" in result.output and "accuracy [95% CI]" in result.output


def test_unknown_arm_exits_non_zero_with_zero_requests(server, tmp_path):
    result = run(
        [
            "run",
            "--base-url",
            server.base_url,
            "--model",
            "fake",
            "--out",
            str(tmp_path / "r"),
            *arms("direct", "rewoo2"),
        ]
    )
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1  # no usage lines
    assert result.stderr.startswith("Error: no pattern named 'rewoo2'")
    assert "no pattern named 'rewoo2'" in result.output and "react_text" in result.output
    assert server.served.requests == 0 and not (tmp_path / "r").exists()


def test_a_base_url_without_a_model_says_what_to_set(tmp_path):
    result = CliRunner().invoke(
        main,
        ["run", "--arm", "direct", "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path)],
        env={"LOOPBENCH_BASE_URL": None, "LOOPBENCH_MODEL": None, "OPENAI_BASE_URL": None},
    )
    assert result.exit_code == 2
    assert "--model or LOOPBENCH_MODEL" in result.output


def test_model_local_with_a_base_url_is_refused():
    args = ["run", "--arm", "direct", "--model", "local", "--base-url", "http://127.0.0.1:9/v1"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and "drop --base-url" in result.output


def test_missing_local_extra_prints_the_install_command(tmp_path, monkeypatch):
    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "files", not_installed)
    result = CliRunner().invoke(
        main,
        ["run", "--arm", "direct", "--out", str(tmp_path / "r")],
        env={"LOOPBENCH_BASE_URL": None, "LOOPBENCH_MODEL": None, "OPENAI_BASE_URL": None},
    )
    assert result.exit_code == 2
    assert "pip install -e '.[local]'" in result.output and not (tmp_path / "r").exists()


def test_a_users_task_folder_runs(server, tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "taskset.toml").write_text('name = "mine"\ntools = ["calc"]\n')
    (folder / "tasks.jsonl").write_text(
        json.dumps({"id": "t1", "question": "What is 80 + 4?", "expected": {"numbers": [84]}})
        + "\n"
    )
    result = run(
        [
            "run",
            "--tasks",
            str(folder),
            "--base-url",
            server.base_url,
            "--model",
            "fake",
            "--out",
            str(tmp_path / "r"),
            *arms("direct"),
        ]
    )
    assert result.exit_code == 0, result.output
    [record] = read_records(tmp_path / "r")
    assert (record.task_set, record.correct) == ("mine", True)


def test_api_failures_are_recorded_with_usage_and_never_graded(tmp_path):
    def responder(body):
        messages = body["messages"]
        start = question_index(messages)
        turns = sum(m["role"] == "assistant" for m in messages[start:])
        if "completion of the Eiffel" in messages[start]["content"] and turns == 1:
            return Reply(status=500)
        return default_responder(body)

    with FakeServer(responder) as srv:
        result = run(
            [
                "run",
                "--base-url",
                srv.base_url,
                "--model",
                "fake",
                "--max-retries",
                "1",
                "--out",
                str(tmp_path / "r"),
                *arms("react_text"),
            ]
        )
        served = srv.served
    assert result.exit_code == 0
    records = read_records(tmp_path / "r")
    [failed] = [r for r in records if r.task_id == "eiffel-opera-house"]
    assert (failed.status, failed.correct, failed.turns, failed.retries) == (
        "api_error",
        None,
        2,
        1,
    )
    assert failed.tokens_in > 0 and "HTTP 500" in failed.error
    assert sum(r.tokens_in for r in records) == served.prompt_tokens
    assert "answered 11, api_error 1" in result.output


def test_the_key_never_reaches_records_traces_or_output(server, tmp_path):
    result = run(
        [
            "run",
            "--base-url",
            server.base_url,
            "--model",
            "fake",
            "--out",
            str(tmp_path / "r"),
            *arms("react"),
        ]
    )
    assert SECRET not in result.output
    for file in (tmp_path / "r").iterdir():
        assert SECRET not in file.read_text(), file


def test_existing_results_for_another_model_are_not_mixed(server, tmp_path):
    out = str(tmp_path / "r")
    run(["run", "--base-url", server.base_url, "--model", "a", "--out", out, *arms("direct")])
    result = run(
        ["run", "--base-url", server.base_url, "--model", "b", "--out", out, *arms("direct")]
    )
    assert result.exit_code == 2 and "write to another --out folder" in result.output


def test_sigkill_mid_run_then_rerun_finishes_with_nothing_missing_or_doubled(tmp_path):
    out = tmp_path / "r"
    grid = arms("direct", "cot", "react_text")
    with FakeServer(latency_s=0.02) as srv:
        command = [
            sys.executable,
            "-m",
            "loopbench.harness.cli",
            "run",
            "--base-url",
            srv.base_url,
            "--model",
            "fake",
            "--repeats",
            "3",
            "--concurrency",
            "2",
            "--quiet",
            "--out",
            str(out),
            *grid,
        ]
        env = {**os.environ, "LOOPBENCH_API_KEY": SECRET}
        process = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        runs = out / "runs.jsonl"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (not runs.exists() or runs.stat().st_size < 3000):
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
        process.wait()
        partial = len(runs.read_text().splitlines())
        assert 0 < partial < 3 * 12 * 3
        finished = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stderr
    keys = [(r.arm, r.task_id, r.repeat) for r in read_records(out)]
    assert len(keys) == len(set(keys)) == 3 * 12 * 3


class CountingInFlight(FakeServer):
    """Counts the requests it is answering at once, and the most at any moment."""

    def __init__(self) -> None:
        super().__init__(latency_s=0.05)
        self.in_flight = self.most_in_flight = 0

    async def handle(self, request):
        self.in_flight += 1  # one event loop answers every request: no lock needed
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            return await super().handle(request)
        finally:
            self.in_flight -= 1


@pytest.mark.parametrize(
    ("flags", "requests", "runs"), [([], 2, 4), (["--runs-in-flight", "3"], 2, 3)]
)
def test_concurrency_caps_requests_and_twice_as_many_runs_are_in_flight(
    tmp_path, monkeypatch, flags, requests, runs
):
    out = tmp_path / "out"
    in_flight = []  # the runs in flight the command gave the grid

    async def run_grid(grid, client, folder, settings, observer, recorded=None):
        in_flight.append(settings.runs_in_flight)
        return await loopbench.harness.grid.run_grid(
            grid, client, folder, settings, observer, recorded
        )

    monkeypatch.setattr(loopbench.harness.api, "run_grid", run_grid)
    with CountingInFlight() as server:
        result = run(
            [
                *["run", "--arm", "react", "--concurrency", "2", "--limit", "8", "--quiet"],
                *["--base-url", server.base_url, "--model", "m", "--out", str(out), *flags],
            ]
        )
    assert result.exit_code == 0, result.output
    records = read_records(out)
    assert len(records) == 8 and server.most_in_flight == requests
    assert in_flight == [runs]


def test_runs_in_flight_default_to_twice_the_requests_all_endpoints_allow():
    assert RunConfig(concurrency=2).runs_at_once() == 4
    assert RunConfig(concurrency=2).runs_at_once(endpoints=3) == 12  # replicas, or models
    assert RunConfig(concurrency=2, paired=True).runs_at_once() == 2  # shared calls wait
    assert RunConfig(concurrency=2, runs_in_flight=5).runs_at_once(endpoints=3) == 5
    assert RunConfig(concurrency=2, executor="ray").runs_at_once() == 2  # a worker per run
