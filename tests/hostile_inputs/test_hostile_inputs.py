"""Hostile inputs through the real command line, one case file each (``cases/*.toml``).

Each case writes its files (a prompt file, a task file, a schema, a results folder) into a
fresh folder, runs ``loopbench`` on them in a subprocess there, and checks what a hostile
file must never get: a traceback, a hang (60 s, room for a loaded machine; the figures are
in bench/), more than 1 GiB of memory, a file created by a template (``pwned``), a
connection to the loopback listener behind ``{url}`` (grading and reading never reach the
network), a line printed raw that the case says must not be. Then what the case expects:
exit 2 with one ``Error:`` line holding its words, or a run that ends with every run
recorded once. The format is described in this folder's README.md.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from loopbench.harness.fakes.fake_server import FakeServer, Reply
from tests.fakes.counting_listener import CountingListener
from tests.hostile_inputs.generate import generate

CASES = Path(__file__).parent / "cases"
ROOT = Path(__file__).parents[2]
TIME_LIMIT_S = 60.0
MEMORY_LIMIT_KIB = 1 << 20  # 1 GiB, as ru_maxrss counts it on Linux
#: A port nothing listens on: a run refused before its first request sends none.
CLOSED = "http://127.0.0.1:9/v1"
ENDPOINT = ["--model", "fake", "--max-retries", "0", "--quiet"]


@pytest.fixture(scope="module")
def listener() -> Iterator[CountingListener]:
    counting = CountingListener()
    yield counting
    counting.close()


@dataclass
class Finished:
    exit: int
    stdout: str
    stderr: str
    peak_kib: int
    seconds: float


def run_cli(args: list[str], cwd: Path) -> Finished:
    """``loopbench ARGS`` in a subprocess, with its peak memory (from ``wait4``)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", "NO_COLOR": "1"}
    out, err = cwd / ".stdout", cwd / ".stderr"
    started = time.monotonic()
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "loopbench.harness.cli", *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
        )
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - started > TIME_LIMIT_S:
                process.kill()
                process.wait()
                pytest.fail(f"loopbench {' '.join(args)} still running after {TIME_LIMIT_S} s")
            time.sleep(0.05)
    process.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    text = {p: p.read_bytes().decode("utf-8", "backslashreplace") for p in (out, err)}
    out.unlink()
    err.unlink()
    return Finished(
        process.returncode, text[out], text[err], usage.ru_maxrss, time.monotonic() - started
    )


def fill(text: str, folder: Path, url: str) -> str:
    return (text.replace("{dir}", str(folder)).replace("{out}", str(folder / "out"))).replace(
        "{url}", url
    )


def reply_of(step: dict[str, Any]) -> str | None:
    if "reply_json" in step:
        return str(json.loads(step["reply_json"]))
    return step.get("reply")


def command(step: dict[str, Any], folder: Path, url: str) -> tuple[list[str], FakeServer | None]:
    """The step's command line, and the endpoint serving its reply when it is a run."""
    args = [fill(arg, folder, url) for arg in step["command"]]
    if args[0] != "run":
        return args, None
    reply = reply_of(step)
    if reply is None:
        return [*args, *ENDPOINT, "--base-url", CLOSED], None
    server = FakeServer(lambda _body: Reply(content=reply), keep_bodies=False).start()
    return [*args, *ENDPOINT, "--base-url", server.base_url], server


def run_step(step: dict[str, Any], folder: Path, url: str) -> Finished:
    args, server = command(step, folder, url)
    try:
        return run_cli(args, folder)
    finally:
        if server is not None:
            server.stop()


def write_files(case: dict[str, Any], folder: Path, url: str) -> None:
    for name, text in case.get("files", {}).items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(fill(text, folder, url), encoding="utf-8")
    for name, data in case.get("files_base64", {}).items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
    for name, options in case.get("generate", {}).items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        generate(path, **options)


def listing(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def records(folder: Path) -> list[dict[str, Any]]:
    runs = folder / "out" / "runs.jsonl"
    if not runs.is_file():
        return []
    return [json.loads(line) for line in runs.read_text(encoding="utf-8").splitlines() if line]


def case_files() -> list[Path]:
    return sorted(CASES.glob("*.toml"))


@pytest.mark.parametrize("path", case_files(), ids=lambda p: p.stem)
def test_hostile_input(path: Path, tmp_path: Path, listener: CountingListener) -> None:
    case = tomllib.loads(path.read_text(encoding="utf-8"))
    expect = case["expect"]
    folder = tmp_path / "case"
    folder.mkdir()
    write_files(case, folder, listener.url)
    for step in case.get("before", []):
        done = run_step(step, folder, listener.url)
        assert done.exit == 0, f"setup {step['command']} exited {done.exit}: {done.stderr}"
    given = listing(folder)
    accepted = listener.accepted

    done = run_step(case, folder, listener.url)
    said = done.stdout + done.stderr

    assert "Traceback" not in said, said[-3000:]
    assert done.peak_kib < MEMORY_LIMIT_KIB, f"peak memory {done.peak_kib // 1024} MiB"
    assert listener.accepted == accepted, "a connection reached the loopback listener"
    assert not [p for p in listing(folder) if Path(p).name == "pwned"], "a template ran code"
    assert given <= listing(folder), f"files removed: {sorted(given - listing(folder))}"
    for text in expect.get("absent", []):
        assert text not in said, f"{text!r} printed: {said[-2000:]!r}"
    assert done.exit == expect["exit"], f"exit {done.exit}, expected {expect['exit']}: {said}"
    if expect["exit"] == 2:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("Error:"), done.stderr[-3000:]
        for word in expect.get("words", []):
            assert word.lower() in lines[0].lower(), f"{word!r} not in {lines[0]!r}"
    for word in expect.get("stdout_words", []):
        assert word in done.stdout, f"{word!r} not in stdout: {done.stdout[-2000:]}"
    if "runs" in expect:
        found = records(folder)
        assert len(found) == expect["runs"], f"{len(found)} records, expected {expect['runs']}"
        assert len({r["run_id"] for r in found}) == len(found), "a run recorded twice"
        if "status" in expect:
            assert {r["status"] for r in found} == {expect["status"]}, found


def test_every_case_says_what_it_is_and_expects_something() -> None:
    for path in case_files():
        case = tomllib.loads(path.read_text(encoding="utf-8"))
        assert case.get("about") and case.get("command"), path.name
        assert isinstance(case.get("expect", {}).get("exit"), int), path.name
