"""OPENAI_BASE_URL alone: the one model the endpoint lists at GET /models serves the run,
said on stderr; a list of several, none, or a reply too slow, too large or not a list
leaves the refusal asking for the model's name. The key is sent, never said."""

import asyncio
import json

import pytest
from aiohttp import web
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.fakes.fake_server import FakeServer
from loopbench.harness.fakes.loopback import LoopbackServer
from loopbench.harness.models import model_list
from loopbench.harness.models.endpoint import EndpointNotConfigured, resolve_endpoint

KEY = "sk-test-model-list-key-0001"


class ModelsServer(LoopbackServer):
    """Answers GET /v1/models with a scripted body, status and delay; keeps the headers."""

    def __init__(self, body=b"", status=200, delay_s=0.0, drip_s=0.0):
        super().__init__()
        self.body, self.status, self.delay_s, self.drip_s = body, status, delay_s, drip_s
        self.headers = []

    def routes(self, app):
        app.router.add_get("/v1/models", self.handle)

    async def handle(self, request):
        self.headers.append(dict(request.headers))
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if self.drip_s:  # a byte at a time: each read in time, the whole reply not
            reply = web.StreamResponse(headers={"content-type": "application/json"})
            await reply.prepare(request)
            for byte in self.body:
                await reply.write(bytes([byte]))
                await asyncio.sleep(self.drip_s)
            return reply
        return web.Response(body=self.body, status=self.status, content_type="application/json")


def listing(*ids):
    return json.dumps({"object": "list", "data": [{"id": i, "object": "model"} for i in ids]})


@pytest.fixture
def env(monkeypatch):
    for name in ("LOOPBENCH_BASE_URL", "LOOPBENCH_MODEL", "LOOPBENCH_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return monkeypatch


def test_the_one_listed_model_is_taken_with_the_key_sent(env):
    with ModelsServer(listing("qwen2.5-7b").encode()) as server:
        env.setenv("OPENAI_BASE_URL", server.base_url)
        endpoint = resolve_endpoint(None, None)
    assert (endpoint.model, endpoint.api_key) == ("qwen2.5-7b", KEY)
    assert endpoint.source == "OPENAI_BASE_URL; the one model its /models lists"
    assert server.headers[0]["Authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize(
    ("body", "status"),
    [
        (listing("a", "b"), 200),  # several: which one is the user's to say
        (listing(), 200),
        (listing("fake"), 404),
        ("not json", 200),
        (json.dumps({"data": [{"id": 3}]}), 200),
        (listing("x" * 300), 200),  # an id too long to be a name
        (listing(*[f"m{i}" for i in range(1)]) + " " * (model_list.MAX_LIST_BYTES + 1), 200),
    ],
)
def test_anything_but_one_listed_model_leaves_todays_refusal(env, body, status):
    with ModelsServer(body.encode(), status) as server:
        env.setenv("OPENAI_BASE_URL", server.base_url)
        with pytest.raises(EndpointNotConfigured, match="needs the name of the model") as caught:
            resolve_endpoint(None, None)
    assert KEY not in str(caught.value)


def test_a_slow_endpoint_is_given_up_on_within_its_time(env):
    env.setattr(model_list, "LIST_TIMEOUT_S", 0.2)
    with ModelsServer(listing("slow").encode(), delay_s=3) as server:
        env.setenv("OPENAI_BASE_URL", server.base_url)
        with pytest.raises(EndpointNotConfigured, match="needs the name of the model"):
            resolve_endpoint(None, None)


def test_a_reply_dripping_past_the_time_limit_is_given_up_on(env):
    env.setattr(model_list, "LIST_TIMEOUT_S", 0.5)
    body = listing("slow").encode() + b" " * 40  # about 4 s at 0.05 s a byte
    with ModelsServer(body, drip_s=0.05) as server:
        env.setenv("OPENAI_BASE_URL", server.base_url)
        with pytest.raises(EndpointNotConfigured, match="needs the name of the model"):
            resolve_endpoint(None, None)


def test_a_base_url_given_by_flag_is_not_asked(env):
    with (
        ModelsServer(listing("one").encode()) as server,
        pytest.raises(EndpointNotConfigured, match="needs the name of the model"),
    ):
        resolve_endpoint(server.base_url, None)
    assert server.headers == []


def test_run_with_openai_base_url_alone_says_which_model_it_took(env, tmp_path):
    with FakeServer() as server:
        env.setenv("OPENAI_BASE_URL", server.base_url)
        args = ["run", "--tasks", "depot", "--limit", "1", "--arm", "direct", "--quiet"]
        result = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    said = f"serving this run: fake at {server.base_url} (OPENAI_BASE_URL; the one model its "
    assert said + "/models lists)" in result.stderr
    assert KEY not in result.output
