"""A hostile endpoint echoes the secrets back in every form: none of them is ever written.

The API key is in the environment, a token is the base URL's user name and a password
with reserved characters its password. A loopback server echoes all three, in each
form below, in a 401's body, in a model's reply and in a tool call's arguments; and a
tool's output holds them too (the task set's encyclopedia does), which only the writers
can redact, as the client never sees it. Then
every file ``run`` (with a cache), ``report``, ``export``, ``table`` and ``failures``
wrote, and everything they printed, is searched for any 8 characters in a row of any
secret, as written, upper-cased and lower-cased.
"""

import base64
import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest
from aiohttp import web

from loopbench.harness.fakes.fake_server import question_index
from loopbench.harness.fakes.loopback import LoopbackServer
from tests.secret_text import b64, runs_of_eight

ROOT = Path(__file__).parents[2]
KEY = "sk-hostile-Q7mZp2Lr9XvB4nTk8WcY3dHs"
USER = "tok_7Hq2Rm9Zx4Lp8Vb3Jw"
PASSWORD = "pw/Z9#q?X@3kLm7%Rt:5"
SECRETS = (KEY, USER, PASSWORD)


#: How an endpoint or a model may repeat a secret.
FORMS = {
    "raw": lambda s: s,
    "json": lambda s: json.dumps(s),
    "json_slashes": lambda s: json.dumps(s).replace("/", "\\/"),
    "unicode_escaped": lambda s: "".join(f"\\u{ord(c):04x}" for c in s),
    "unicode_escaped_upper": lambda s: "".join(f"\\u{ord(c):04X}" for c in s),
    "percent": lambda s: quote(s, safe=""),
    "percent_plus": quote_plus,
    "percent_every": lambda s: "".join(f"%{b:02X}" for b in s.encode()),
    "html": html.escape,
    "base64": b64,
    "base64_offset_1": lambda s: b64("x" + s)[2:],
    "base64_offset_2": lambda s: "header " + b64("xy" + s),
    "base64_urlsafe": lambda s: base64.urlsafe_b64encode(s.encode()).decode(),
    "upper": str.upper,
    "lower": str.lower,
    "swapped": str.swapcase,
    "part": lambda s: s[3:15],
    "basic": lambda s: "Basic " + b64(f"{USER}:{PASSWORD}") + " for " + b64(s),
}


def echo(form: str) -> str:
    return " ".join(f"<{FORMS[form](secret)}>" for secret in SECRETS)


def question(task_id: str) -> str:
    return f"What is 80 + 4? (case {task_id})"


class EchoServer(LoopbackServer):
    """Answers a task's calls with the echoes of its form: ``401-FORM`` tasks with a 401
    whose body repeats the secrets, the others with a tool call whose arguments repeat
    them (when tools are offered) and then a reply whose text does."""

    def __init__(self) -> None:
        super().__init__()
        self.served: list[str] = []

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        messages = body["messages"]
        start = question_index(messages)
        task = re.search(r"\(case (\S+)\)", messages[start]["content"])[1]
        turn = sum(m["role"] == "assistant" for m in messages[start:])
        form = task.removeprefix("401-")
        self.served.append(task)
        if task.startswith("401-"):
            return web.Response(status=401, text=f"Incorrect API key provided: {echo(form)}")
        message: dict = {"role": "assistant", "content": f"Answer: 84 (you sent {echo(form)})"}
        if body.get("tools") and turn == 0:
            calls = [
                {"id": f"c{i}", "type": "function", "function": {"name": "lookup", "arguments": a}}
                for i, a in enumerate(
                    [json.dumps({"title": f"Paris {echo(form)}"}), json.dumps({"title": "Paris"})]
                )
            ]
            message = {"role": "assistant", "content": None, "tool_calls": calls}
        usage = {"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30}
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        return web.json_response({"choices": [choice], "usage": usage})


def loopbench(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "loopbench.harness.cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def runs_in_any_case(secret: str) -> set[str]:
    return {run for case in (secret, secret.upper(), secret.lower()) for run in runs_of_eight(case)}


def leaks(text: str) -> list[str]:
    return sorted({run for secret in SECRETS for run in runs_in_any_case(secret) if run in text})


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """Everything the commands wrote and printed, by where: file paths and outputs."""
    tmp = tmp_path_factory.mktemp("echoes")
    tasks = tmp / "tasks"
    tasks.mkdir()
    (tasks / "taskset.toml").write_text('name = "echoes"\ntools = ["lookup", "calc"]\n')
    entry = "A city. " + " ".join(echo(form) for form in FORMS)
    (tasks / "encyclopedia.json").write_text(json.dumps({"entries": {"Paris": entry}}))
    ids = [*FORMS, *(f"401-{form}" for form in FORMS)]
    lines = [
        json.dumps({"id": t, "question": question(t), "expected": {"numbers": [84]}}) for t in ids
    ]
    (tasks / "tasks.jsonl").write_text("\n".join(lines) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY",)}
    env = {**env, "LOOPBENCH_API_KEY": KEY, "LOOPBENCH_BASE_URL": ""}
    out, cache = tmp / "out", tmp / "cache"
    with EchoServer() as server:
        url = f"http://{quote(USER, safe='')}:{quote(PASSWORD, safe='')}@127.0.0.1:{server.port}/v1"
        outputs = {}
        for name, args in {
            "run": [
                *("run", "--tasks", str(tasks), "--arm", "react", "--arm", "cot"),
                *("--model", "fake", "--base-url", url, "--out", str(out), "--quiet"),
                *("--cache", str(cache), "--max-retries", "0"),
            ],
            "report": ["report", str(out), "-o", str(tmp / "report.html")],
            "csv": ["export", str(out), "--format", "csv", "-o", str(tmp / "runs.csv")],
            "parquet": ["export", str(out), "--format", "parquet", "-o", str(tmp / "r.parquet")],
            "table": ["table", str(out)],
            "failures": ["failures", str(out)],
            "cache": ["cache", "stats", str(cache)],
        }.items():
            ran = loopbench(*args, env=env)
            outputs[name] = ran
        served = list(server.served)
    files = {p: p.read_bytes() for p in tmp.rglob("*") if p.is_file() and tasks not in p.parents}
    return outputs, files, served, out, server.port


def test_the_server_echoed_every_form_and_the_commands_ran(written):
    outputs, files, served, out, _ = written
    assert {o.returncode for o in outputs.values()} == {0}, {
        name: o.stderr for name, o in outputs.items() if o.returncode
    }
    assert set(served) == {*FORMS, *(f"401-{form}" for form in FORMS)}
    records = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    statuses = {(r["task_id"].startswith("401-"), r["status"]) for r in records}
    assert statuses == {(True, "api_error"), (False, "answered")}
    traces = (out / "traces.jsonl").read_text()
    assert "[redacted]" in traces and '"lookup"' in traces and "A city. " in traces
    assert any(p.name == "responses.sqlite" for p in files)


def test_no_eight_characters_of_a_secret_are_written_anywhere(written):
    outputs, files, *_ = written
    found = {str(p): leaks(data.decode("utf-8", "replace")) for p, data in files.items()}
    assert {p: runs for p, runs in found.items() if runs} == {}
    printed = {
        f"{name} {stream}": leaks(getattr(o, stream))
        for name, o in outputs.items()
        for stream in ("stdout", "stderr")
    }
    assert {where: runs for where, runs in printed.items() if runs} == {}


def test_no_echoed_form_is_written_either(written):
    """Not only the secrets as given: no form of them the server sent is kept."""
    _, files, *_ = written
    text = "\n".join(data.decode("utf-8", "replace") for data in files.values())
    fragments = {(form, FORMS[form](secret)[2:14]) for form in FORMS for secret in SECRETS}
    # As written, and as a JSON line holds it (twice escaped, if it was escaped).
    kept = {
        (form, fragment)
        for form, fragment in fragments
        if fragment in text or json.dumps(fragment)[1:-1] in text
    }
    assert kept == set()


def test_the_url_is_recorded_without_its_credentials(written):
    *_, out, port = written
    experiment = json.loads((out / "experiment.json").read_text())
    assert experiment["base_url"] == f"http://127.0.0.1:{port}/v1"


@pytest.mark.parametrize("reserved", ["/", "#", "?", "@"])
def test_a_password_with_an_unencoded_reserved_character_is_refused_unseen(reserved):
    password = f"Zq8{reserved}vN3xK7pL2w"
    url = f"http://{USER}:{password}@127.0.0.1:9/v1"
    env = {**os.environ, "LOOPBENCH_API_KEY": ""}
    ran = loopbench(
        "run",
        "--arm",
        "cot",
        "--model",
        "m",
        "--base-url",
        url,
        "--out",
        "/nonexistent/never",
        env=env,
    )
    assert ran.returncode == 2, ran.stderr
    lines = ran.stderr.strip().splitlines()
    assert len(lines) == 1 and "percent-encode" in lines[0], ran.stderr
    assert not [run for s in (USER, password) for run in runs_in_any_case(s) if run in ran.stderr]
    assert "Zq8" not in ran.stderr and "vN3x" not in ran.stderr
