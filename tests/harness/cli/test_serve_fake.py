"""``loopbench serve-fake`` (and ``python -m loopbench.harness.fakes.serve``) serve the scripted
endpoint the docs' examples are checked against: its base URL printed, a chat completion
answered, ``GET /v1/models`` listing ``fake``, and a run against it with OPENAI_BASE_URL
alone taking that model."""

import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[3]


def started(command):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", *command], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, cwd=ROOT, env=env,
    )  # fmt: skip
    return process, process.stdout.readline().strip()


def get(url):
    with urllib.request.urlopen(url, timeout=30) as reply:  # loopback only
        return json.loads(reply.read())


def post(url, body):
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as reply:
        return json.loads(reply.read())


@pytest.mark.parametrize(
    "command",
    [
        ["loopbench.harness.cli", "serve-fake", "--latency", "0"],
        ["loopbench.harness.fakes.serve", "--latency", "0"],
    ],
)
def test_the_fake_serves_chat_completions_and_lists_its_model(command):
    process, base_url = started(command)
    try:
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        listed = get(f"{base_url}/models")
        assert [m["id"] for m in listed["data"]] == ["fake"]
        asked = {"model": "fake", "messages": [{"role": "user", "content": "Hi"}]}
        answer = post(f"{base_url}/chat/completions", asked)
        assert answer["choices"][0]["message"]["role"] == "assistant"
    finally:
        process.send_signal(signal.SIGINT)
        _, said = process.communicate(timeout=30)  # its pipes read and closed
    if command[0] == "loopbench.harness.cli":
        assert "model name: fake" in said


def test_serve_fake_refuses_a_bad_value_in_one_line():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    ran = subprocess.run(
        [sys.executable, "-m", "loopbench.harness.cli", "serve-fake", "--false-pass", "2"],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=120,
    )  # fmt: skip
    assert ran.returncode == 2 and "--false-pass" in ran.stderr and ran.stdout == ""
