"""Tools served by an MCP server in runs: counted as the server counts them, observed as it
answered, a crashed or hung server recorded as tool_error, and no server left running."""

import time

import pytest

import loopbench
from loopbench.harness.results.errors import ResultsError

from .mcp_helpers import (
    TOOL_ARMS,
    alive,
    calls,
    pids,
    runs,
    scripted,
    server_set,
    tool_events,
)


def _tool(word):
    return (
        ("shout", {"text": word[6:]}) if word.startswith("shout:") else ("reverse", {"text": word})
    )


def _seen(said):
    return "Observation:" in said.split("WORD=")[-1] or "#E1" in said


def _run(folder, out, arms=("react",), runs_in_flight=1):
    experiment = loopbench.Experiment(
        tasks=folder,
        arms=list(arms),
        model=scripted(_tool, _seen),
        out=out,
        runs_in_flight=runs_in_flight,
    )
    return experiment.run()


def test_every_tool_pattern_calls_the_server_as_it_counts_and_sees_what_it_returned(tmp_path):
    folder = server_set(tmp_path / "set", ["abc", "shout:hey"])
    _run(folder, tmp_path / "out", TOOL_ARMS)
    records, served = runs(tmp_path / "out"), calls(folder)
    assert {r["status"] for r in records} == {"answered"} and len(records) == 10
    assert {r["arm"] for r in records if r["tool_calls"]} == set(TOOL_ARMS)
    assert sum(r["tool_calls"] for r in records) == len(served) > 0
    observed = sorted((e["tool"], e["result"]) for e in tool_events(tmp_path / "out"))
    assert observed == sorted((c["tool"], c["result"]) for c in served)
    assert {c["result"] for c in served} == {"cba", "HEY!"}
    assert pids(folder) and not any(alive(p) for p in pids(folder))


def test_a_server_killed_mid_run_is_that_runs_tool_error_and_the_rest_finish(tmp_path):
    folder = server_set(tmp_path / "set", ["abc", "die", "shout:hey"])
    _run(folder, tmp_path / "out")
    status = {r["task_id"]: r["status"] for r in runs(tmp_path / "out")}
    assert status == {"t0": "answered", "t1": "tool_error", "t2": "answered"}
    failed = next(r for r in runs(tmp_path / "out") if r["status"] == "tool_error")
    assert "counting" in failed["error"] and failed["correct"] is None
    assert not any(alive(p) for p in pids(folder))
    again = loopbench.Experiment(
        tasks=folder,
        arms=["react"],
        model=scripted(_tool, _seen),
        out=tmp_path / "out",
        settings=loopbench.RunSettings(retry_errors=True),
    ).run()
    redone = runs(tmp_path / "out")[-1]
    assert again.ran == 1 and redone["supersedes"] == failed["run_id"]
    assert (redone["task_id"], redone["status"]) == ("t1", "answered")
    assert not any(alive(p) for p in pids(folder))


def test_runs_in_flight_when_the_server_dies_end_as_tool_error_or_answered(tmp_path):
    folder = server_set(tmp_path / "set", ["abc", "die", "shout:hey", "xyz", "more"])
    _run(folder, tmp_path / "out", arms=("react", "rewoo"), runs_in_flight=4)
    records = runs(tmp_path / "out")
    assert len(records) == 10 and {r["status"] for r in records} <= {"answered", "tool_error"}
    assert any(r["task_id"] == "t1" and r["status"] == "tool_error" for r in records)
    assert not any(alive(p) for p in pids(folder))


def test_a_call_that_hangs_ends_its_run_within_the_time_limit(tmp_path):
    folder = server_set(tmp_path / "set", ["hang", "abc"], extra="timeout_s = 1\n")
    began = time.monotonic()
    _run(folder, tmp_path / "out")
    assert time.monotonic() - began < 30
    status = {r["task_id"]: (r["status"], r["error"]) for r in runs(tmp_path / "out")}
    assert status["t0"][0] == "tool_error" and "timeout_s" in status["t0"][1]
    assert status["t1"] == ("answered", None)
    # The call that hung was made: the server counted it, and so does the record.
    assert sum(r["tool_calls"] for r in runs(tmp_path / "out")) == len(calls(folder)) == 2
    hung = next(e for e in tool_events(tmp_path / "out") if not e["ok"])
    assert "gave no result within 1 s" in hung["result"]
    assert not any(alive(p) for p in pids(folder))


def test_a_changed_tool_list_is_refused_on_resume(tmp_path):
    folder = server_set(tmp_path / "set", ["abc"])
    _run(folder, tmp_path / "out")
    server_set(tmp_path / "set", ["abc"], server_args="--extra")
    with pytest.raises(ResultsError, match=r"other MCP tools: .*whisper") as refused:
        _run(folder, tmp_path / "out", arms=("react", "rewoo"))
    assert "\n" not in str(refused.value)
    assert not any(alive(p) for p in pids(folder))


def test_the_folder_records_the_servers_name_version_and_tools(tmp_path):
    import json

    folder = server_set(tmp_path / "set", ["abc"])
    _run(folder, tmp_path / "out")
    meta = json.loads((tmp_path / "out" / "experiment.json").read_text())
    (server,) = meta["fingerprint"]["mcp"]
    assert (server["name"], server["server"], server["version"]) == (
        "counting",
        "counting-test-server",
        "0.1.0",
    )
    assert server["tools"] == ["reverse", "shout"] and len(server["tools_hash"]) == 64


def test_a_server_over_streamable_http_is_called_as_a_stdio_one(tmp_path):
    import socket
    import subprocess
    import sys

    from .mcp_helpers import SERVER

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    folder = tmp_path / "set"
    folder.mkdir()
    argv = [sys.executable, str(SERVER), str(folder / "calls.jsonl"), str(folder / "pids")]
    served = subprocess.Popen([*argv, "--http", str(port)], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        server_set(folder, ["abc", "shout:hey"])
        url = f'[[mcp]]\nname = "counting"\nurl = "http://127.0.0.1:{port}/mcp"\n'
        (folder / "taskset.toml").write_text(f'name = "served"\n\n{url}')
        _run(folder, tmp_path / "out", arms=("react", "react_text"))
    finally:
        served.terminate()
        served.wait(timeout=30)
    records = runs(tmp_path / "out")
    assert {r["status"] for r in records} == {"answered"}
    assert sum(r["tool_calls"] for r in records) == len(calls(folder)) == 4
