"""Which endpoint serves a run: flags and files, then LOOPBENCH_*, then OPENAI_*, and the
embedded model only when none names one; said on stderr before the first request."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from aiohttp import web
from click.testing import CliRunner

import loopbench.harness.endpoints
from loopbench.harness.cli.main import main
from loopbench.harness.config import ModelEntry, RunConfig
from loopbench.harness.endpoints import resolve_endpoints, serving, serving_line
from loopbench.harness.fakes.fake_server import FakeServer
from loopbench.harness.models.endpoint import (
    ASKED_FOR_LOCAL,
    NOTHING_CONFIGURED,
    Endpoint,
    EndpointNotConfigured,
    resolve_endpoint,
    why_local_model,
)
from loopbench.harness.models.local import MODEL_NAME
from loopbench.harness.results.reading import read_records
from tests.conftest import ENDPOINT_VARIABLES

CLEAN = {k: v for k, v in os.environ.items() if k not in ENDPOINT_VARIABLES}
ROOT = Path(__file__).resolve().parents[3]


class KeyedServer(FakeServer):
    """The fake server, keeping the Authorization header of every request."""

    def __init__(self) -> None:
        super().__init__()
        self.authorizations: list[str | None] = []

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.authorizations.append(request.headers.get("Authorization"))
        return await super().handle(request)


@pytest.fixture
def server():
    with KeyedServer() as srv:
        yield srv


def loopbench_run(*args: str, env: dict[str, str], code: str | None = None):
    """``loopbench run ARGS`` in a subprocess; ``code`` runs first in it (a stub)."""
    start = [sys.executable, "-c", f"{code}\nfrom loopbench.harness.cli.main import main\nmain()"]
    command = [*start, "run"] if code else [sys.executable, "-m", "loopbench.harness.cli", "run"]
    return subprocess.run(
        [*command, *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_with_only_openai_base_url_set_the_run_goes_there_and_stderr_says_so(server, tmp_path):
    out = tmp_path / "r"
    env = {**CLEAN, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-openai-0001"}
    done = loopbench_run(
        *("--arm", "direct", "--limit", "2", "--model", "fake", "--out", str(out), "--quiet"),
        env=env,
    )
    assert done.returncode == 0, done.stderr
    records = read_records(out)
    assert len(records) == 2 and {r.model for r in records} == {"fake"}
    assert server.served.requests == sum(r.turns for r in records) >= 2
    assert set(server.authorizations) == {"Bearer sk-openai-0001"}
    lines = done.stderr.splitlines()
    said = lines.index(f"serving this run: fake at {server.base_url} (OPENAI_BASE_URL)")
    assert said < next(i for i, line in enumerate(lines) if "runs to do" in line)
    assert "sk-openai" not in done.stderr + done.stdout


def test_openai_base_url_without_a_model_is_refused_naming_it_and_starts_nothing(
    server, tmp_path, monkeypatch
):
    def never(*_: object) -> None:
        raise AssertionError("the embedded model was started")

    monkeypatch.setattr(loopbench.harness.endpoints, "LocalServer", never)
    server.models = ("fake", "other")  # one listed would serve the run (test_model_list.py)
    out = tmp_path / "r"
    result = CliRunner().invoke(
        main,
        ["run", "--arm", "direct", "--out", str(out)],
        env={"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k"},
    )
    assert result.exit_code == 2, result.output
    [line] = result.output.strip().splitlines()
    assert line.startswith("Error: the endpoint") and "(OPENAI_BASE_URL)" in line
    assert "--model or LOOPBENCH_MODEL" in line
    assert server.served.requests == 0 and not out.exists()


def test_loopbench_base_url_wins_over_openai_base_url(monkeypatch):
    monkeypatch.setenv("LOOPBENCH_BASE_URL", "http://127.0.0.1:8001/v1")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8002/v1")
    endpoint = resolve_endpoint(None, "m")
    assert (endpoint.base_url, endpoint.source) == (
        "http://127.0.0.1:8001/v1",
        "LOOPBENCH_BASE_URL",
    )
    given = resolve_endpoint("http://127.0.0.1:8003/v1", "m")
    assert (given.base_url, given.source) == ("http://127.0.0.1:8003/v1", "--base-url")


def test_an_empty_variable_counts_as_unset(monkeypatch):
    monkeypatch.setenv("LOOPBENCH_BASE_URL", "")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8002/v1")
    assert resolve_endpoint(None, "m").source == "OPENAI_BASE_URL"


def test_a_url_from_openai_base_url_takes_the_key_from_openai_api_key_first(monkeypatch):
    monkeypatch.setenv("LOOPBENCH_API_KEY", "sk-for-another-endpoint")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8002/v1")
    assert resolve_endpoint(None, "m").api_key == "sk-openai"
    # Given by flag (or LOOPBENCH_BASE_URL), the key is LOOPBENCH_API_KEY's, as ever.
    assert resolve_endpoint("http://127.0.0.1:8003/v1", "m").api_key == "sk-for-another-endpoint"
    monkeypatch.delenv("OPENAI_API_KEY")
    assert resolve_endpoint(None, "m").api_key == "sk-for-another-endpoint"
    monkeypatch.setenv("MY_KEY", "sk-mine")
    assert resolve_endpoint(None, "m", "MY_KEY").api_key == "sk-mine"  # named: it wins


def test_the_embedded_model_runs_only_when_nothing_names_an_endpoint(monkeypatch):
    assert why_local_model(None, None) == NOTHING_CONFIGURED
    assert why_local_model("http://127.0.0.1:1/v1", None) is None
    assert why_local_model(None, "gpt-4o-mini") is None
    for name in ("LOOPBENCH_BASE_URL", "OPENAI_BASE_URL", "LOOPBENCH_MODEL"):
        monkeypatch.setenv(name, "http://127.0.0.1:1/v1" if "URL" in name else "m")
        assert why_local_model(None, None) is None, name
        monkeypatch.delenv(name)


def test_model_local_is_the_embedded_model_whatever_openai_base_url_says(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8002/v1")
    assert why_local_model(None, "local") == ASKED_FOR_LOCAL
    monkeypatch.setenv("LOOPBENCH_BASE_URL", "http://127.0.0.1:8001/v1")
    with pytest.raises(EndpointNotConfigured, match="drop --base-url"):
        why_local_model(None, "local")


def test_the_config_resolves_the_environments_endpoint_for_the_api_too(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8002/v1")
    monkeypatch.setenv("LOOPBENCH_MODEL", "m")
    local, [endpoint] = resolve_endpoints(RunConfig(arms=["direct"]))
    assert not local and (endpoint.base_url, endpoint.model) == ("http://127.0.0.1:8002/v1", "m")
    local, endpoints = resolve_endpoints(
        RunConfig(models=[ModelEntry(name="a"), ModelEntry(name="b")])
    )
    assert {e.source for e in endpoints} == {"OPENAI_BASE_URL"}


@pytest.mark.parametrize(
    "config",
    [
        RunConfig(base_urls=[""], models=[ModelEntry(name="m")]),
        RunConfig(base_urls=["  "]),
        RunConfig(models=[ModelEntry(name=" ")]),
    ],
)
def test_a_blank_base_url_or_model_in_the_config_is_refused_not_read_as_unset(config, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8002/v1")
    with pytest.raises(EndpointNotConfigured, match=r"empty|blank"):
        resolve_endpoints(config)


def test_the_serving_line_never_shows_credentials_or_a_query_string():
    url = "http://alice:hunter2@127.0.0.1:8000/v1?api_key=sk-in-the-query#frag"
    replicas = [Endpoint(url, "m", "sk-key"), Endpoint("https://b.example/v1/", "m")]
    line = serving_line(
        [*replicas, Endpoint("http://127.0.0.1:9/v1", "n", source="OPENAI_BASE_URL")]
    )
    assert line == (
        "serving this run: m at http://127.0.0.1:8000/v1?..., https://b.example/v1 (--base-url); "
        "n at http://127.0.0.1:9/v1 (OPENAI_BASE_URL)"
    )
    assert not any(secret in line for secret in ("alice", "hunter2", "sk-", "frag"))


URL_BEFORE_START = "http://127.0.0.1:5999/v1"


def test_serving_names_the_embedded_model_its_url_and_why_before_starting_it(monkeypatch, capsys):
    events: list[str] = []

    class StubServer:
        """Stands for the embedded model's server: its URL is known before it starts, as
        a real one's port is; starting it notes what stderr said by then."""

        base_url = URL_BEFORE_START

        def __init__(self, chat_format: str) -> None:
            self.chat_format = chat_format

        def start(self) -> None:
            events.append(capsys.readouterr().err)

        def stop(self) -> None:
            events.append("stopped")

    monkeypatch.setattr(loopbench.harness.endpoints, "LocalServer", StubServer)
    placeholder = Endpoint("llama.cpp on loopback (chatml)", MODEL_NAME, source=NOTHING_CONFIGURED)
    with serving(True, "chatml", [placeholder], lambda line: print(line, file=sys.stderr)) as live:
        assert live == [Endpoint(URL_BEFORE_START, MODEL_NAME, source=NOTHING_CONFIGURED)]
    assert events == [
        "serving this run: the embedded model (SmolLM2-135M-Instruct on llama.cpp, chatml) "
        f"{MODEL_NAME} at {URL_BEFORE_START} ({NOTHING_CONFIGURED}); starting it ...\n",
        "stopped",
    ]


# A stand-in for the embedded model's server, run inside `loopbench run`: a fake server
# that writes a line to stderr when the first request reaches it.
EMBEDDED_STUB = textwrap.dedent(
    """
    import sys
    import loopbench.harness.endpoints
    from loopbench.harness.fakes.fake_server import FakeServer, default_responder

    def answer(body):
        if not answered:
            answered.append(True)
            print("<first request>", file=sys.stderr, flush=True)
        return default_responder(body)

    answered = []

    class Embedded(FakeServer):
        def __init__(self, chat_format):
            super().__init__(answer)
            super().start()

        def start(self):
            return self

    loopbench.harness.endpoints.LocalServer = Embedded
    loopbench.harness.endpoints.model_file = lambda: None
    """
)


def test_with_nothing_set_stderr_names_the_embedded_model_before_the_first_request(tmp_path):
    out = tmp_path / "r"
    done = loopbench_run(
        *("--arm", "direct", "--limit", "2", "--out", str(out), "--quiet"),
        env=CLEAN,
        code=EMBEDDED_STUB,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    named = next(i for i, line in enumerate(lines) if line.startswith("serving this run: "))
    assert lines[named].startswith("serving this run: the embedded model (SmolLM2-135M-Instruct")
    assert f"{MODEL_NAME} at http://127.0.0.1:" in lines[named]
    assert NOTHING_CONFIGURED in lines[named]
    assert named < lines.index("<first request>")
    assert {r.model for r in read_records(out)} == {MODEL_NAME}


@pytest.mark.parametrize("value", ["", "  "])
@pytest.mark.parametrize(
    "flag",
    [
        "--model",
        "--out",
        "--base-url",
        "--tasks",
        "--arm",
        "--experiment",
        "--prices",
        "--price-as",
        "--cache",
        "--api-key-env",
        "--plugin",
        "--ray-address",
    ],
)
def test_an_empty_text_option_is_refused_in_one_line_and_nothing_is_written(
    flag, value, server, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    args = ["run", "--arm", "direct", "--model", "fake", "--base-url", server.base_url]
    result = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "r"), flag, value])
    assert result.exit_code == 2, result.output
    [line] = result.output.strip().splitlines()
    assert line.startswith(f"Error: {flag} {value!r} is empty: give ") and "drop the option" in line
    assert list(tmp_path.iterdir()) == [] and server.served.requests == 0


def test_a_rerun_from_the_cache_says_no_call_was_sent_and_what_the_replay_saved(server, tmp_path):
    def run(out: str):
        args = ["run", "--arm", "direct", "--limit", "3", "--model", "gpt-5-mini"]
        args += ["--base-url", server.base_url, "--cache", str(tmp_path / "c"), "--quiet"]
        return CliRunner().invoke(main, [*args, "--out", str(tmp_path / out)])

    first = run("first")
    assert first.exit_code == 0, first.output
    sent = server.served.requests
    again = run("again")
    assert again.exit_code == 0, again.output
    assert server.served.requests == sent == 3
    [done] = [line for line in again.output.splitlines() if line.startswith("done: ")]
    assert ", 0 calls sent (0.0/s), $0.0000 spent; 3 calls replayed, not sent (would have " in done
    [first_done] = [line for line in first.output.splitlines() if line.startswith("done: ")]
    assert "3 calls sent (" in first_done and "replayed" not in first_done
    assert first_done.split(" spent")[0].rsplit("$", 1)[1] == done.rsplit("$", 1)[1].rstrip(")")
