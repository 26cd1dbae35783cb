"""The embedded local model, for real: llama.cpp serving SmolLM2 on loopback.

These are the suite's only tests that run a real model; everything else uses fakes.
"""

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from loopbench.harness.models.local import MODEL_NAME, LocalServer, model_file
from loopbench.harness.models.openai_compat import OpenAICompatClient
from loopbench.harness.models.types import Message, ModelRequest
from loopbench.harness.results.reading import read_records
from loopbench.harness.results.store import iter_traces
from loopbench.tasks.taskset import BUILTIN_DIR


def llama_servers(parent: int | None = None, tag: str | None = None) -> set[int]:
    """Pids of running llama_cpp.server processes: children of ``parent`` if given, those
    whose environment holds ``tag`` (``TAG_VARIABLE``, given to the run that started
    them) if given, so that another run on the machine is never counted."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            environ = (entry / "environ").read_bytes().split(b"\0") if tag else []
        except (OSError, IndexError, ValueError):
            continue
        tagged = tag is None or f"{TAG_VARIABLE}={tag}".encode() in environ
        if b"llama_cpp.server" in cmdline and (parent is None or ppid == parent) and tagged:
            found.add(int(entry.name))
    return found


def gone(pids: set[int], within_s: float = 15.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not any(Path(f"/proc/{pid}").exists() for pid in pids):
            return True
        time.sleep(0.1)
    return False


def test_model_file_is_found_in_the_installed_wheel():
    path = model_file()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 50_000_000


def test_server_answers_with_real_usage_and_is_stopped_on_an_error():
    with pytest.raises(RuntimeError, match="boom"), LocalServer() as server:
        pid = server.process.pid

        async def ask():
            async with OpenAICompatClient(server.base_url) as client:
                request = ModelRequest(MODEL_NAME, (Message("user", "Name a colour."),))
                return await client.complete(request)

        response = asyncio.run(ask())
        assert response.message.content.strip()
        assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0
        raise RuntimeError("boom")
    assert gone({pid})


def two_task_set(folder: Path) -> Path:
    folder.mkdir()
    for name in ("taskset.toml", "encyclopedia.json"):
        shutil.copy(BUILTIN_DIR / "depot" / name, folder / name)
    lines = (BUILTIN_DIR / "depot" / "tasks.jsonl").read_text().splitlines()
    (folder / "tasks.jsonl").write_text("\n".join([lines[0], lines[6]]) + "\n")
    return folder


def loopbench(*args: str) -> list[str]:
    return [sys.executable, "-m", "loopbench.harness.cli", "run", *args]


#: Nothing names an endpoint: neither loopbench's variables nor the openai SDK's.
ENDPOINT_VARIABLES = ("LOOPBENCH_BASE_URL", "LOOPBENCH_MODEL", "OPENAI_BASE_URL")
ENV = {k: v for k, v in os.environ.items() if k not in ENDPOINT_VARIABLES}
#: Marks the processes a test's run started (a server inherits its run's environment).
TAG_VARIABLE = "LOOPBENCH_TEST_RUN"


def test_run_without_an_endpoint_uses_the_real_model_and_leaves_no_server(tmp_path):
    tasks = two_task_set(tmp_path / "two")
    out = tmp_path / "r"
    tag = uuid.uuid4().hex
    finished = subprocess.run(
        loopbench(
            "--tasks",
            str(tasks),
            "--arm",
            "direct",
            "--arm",
            "react_text:max_steps=3",
            "--out",
            str(out),
            "--quiet",
            "--concurrency",
            "1",
        ),
        env={**ENV, TAG_VARIABLE: tag},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert finished.returncode == 0, finished.stderr
    lines = finished.stderr.splitlines()
    said = next(i for i, line in enumerate(lines) if line.startswith("serving this run: "))
    assert (
        f"the embedded model (SmolLM2-135M-Instruct on llama.cpp, chatml) {MODEL_NAME}"
        in (lines[said])
    )
    assert said < next(i for i, line in enumerate(lines) if "runs to do" in line)
    records = read_records(out)
    assert len(records) == 4 and {r.model for r in records} == {MODEL_NAME}
    assert all(r.turns >= 1 and r.tokens_in > 0 and r.tokens_out > 0 for r in records)
    replies = [
        e["response"]["message"]["content"]
        for t in iter_traces(out)
        for e in t["events"]
        if e["kind"] == "response"
    ]
    assert len(replies) == sum(r.turns for r in records) and any(r.strip() for r in replies)
    assert json.loads((out / "experiment.json").read_text())["base_url"].startswith("llama.cpp")
    assert not llama_servers(tag=tag)


@pytest.mark.parametrize(
    "sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name
)
def test_interrupted_run_leaves_no_server(tmp_path, sig):
    tasks = two_task_set(tmp_path / "two")
    run = subprocess.Popen(
        loopbench(
            "--tasks",
            str(tasks),
            "--arm",
            "react_text",
            "--repeats",
            "5",
            "--out",
            str(tmp_path / "r"),
            "--quiet",
        ),
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    servers: set[int] = set()
    while time.monotonic() < deadline and not (
        servers and (tmp_path / "r" / "runs.jsonl").exists()
    ):
        servers = servers or llama_servers(parent=run.pid)
        time.sleep(0.1)
    assert servers, "the run never started its server"
    run.send_signal(sig)
    run.wait(timeout=30)
    assert gone(servers), f"llama_cpp.server outlived loopbench after {sig.name}"
