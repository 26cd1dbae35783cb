"""Every registered kind of pattern run on Anthropic's Messages API (the loopback fake):
what the records count is what the fake served; the provider is chosen and recorded;
thinking goes back within a tool loop and into the trace; the key reaches no other host."""

import asyncio
import json
from dataclasses import replace

import pytest
from click.testing import CliRunner

from loopbench.harness.api import Experiment
from loopbench.harness.cli.main import main
from loopbench.harness.config import ModelEntry, RunConfig
from loopbench.harness.endpoints import resolve_endpoints
from loopbench.harness.fakes.anthropic_server import THINKING, AnthropicFakeServer, Fault
from loopbench.harness.models.anthropic import AnthropicClient
from loopbench.harness.models.anthropic_endpoint import (
    DEFAULT_URL,
    chosen_provider,
    resolve_anthropic,
)
from loopbench.harness.models.endpoint import EndpointNotConfigured
from loopbench.harness.models.http_client import Connection, Hooks, RetryPolicy
from loopbench.harness.models.types import ModelAPIError, ModelRequest, ModelResponse
from loopbench.harness.results.prices import load_prices
from loopbench.harness.results.reading import read_records
from tests.secret_text import runs_of_eight

KEY = "sk-ant-test-0123456789abcdefghij"
ARMS = [
    "direct",
    "cot",
    "react",
    "react_text",
    "rewoo",
    "reflection",
    "pipeline:stages=plan_execute>react_text",
]
PRICES = """as_of = "2026-01-01"
[models.claude-fake]
input = 3.0
cached_input = 0.3
output = 15.0
"""


def run(out, *extra, env=None):
    args = ["run", "--tasks", "depot", "--limit", "2", "--out", str(out), "--quiet", *extra]
    return CliRunner().invoke(main, args, env=env)


def test_every_pattern_runs_on_the_messages_api_counting_what_was_served(tmp_path, monkeypatch):
    prices = tmp_path / "prices.toml"
    prices.write_text(PRICES, encoding="utf-8")
    arms = [flag for arm in ARMS for flag in ("--arm", arm)]
    with AnthropicFakeServer(api_key=KEY) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        result = run(tmp_path / "out", *arms, "--model", "claude-fake", "--prices", str(prices))
    assert result.exit_code == 0, result.output
    records = read_records(tmp_path / "out")
    assert {r.arm for r in records} == set(ARMS) and len(records) == 2 * len(ARMS)
    assert {r.status for r in records} == {"answered"}
    served = fake.served
    assert served.requests == served.messages == sum(r.turns for r in records)
    # Native tool use is react's and reflection's loops and plan_execute's steps; the
    # pipeline's react_text stage then acts once in text, as react_text and rewoo do.
    native = served.tool_uses["lookup"] + served.tool_uses["calc"]
    by_tool_use = [r for r in records if r.pattern in ("react", "reflection", "pipeline")]
    text_actions = sum(r.pattern == "pipeline" for r in records)
    assert sum(r.tool_calls for r in by_tool_use) - text_actions == native > 0
    assert sum(r.tokens_in for r in records) == served.input_tokens
    assert sum(r.tokens_out for r in records) == served.output_tokens
    assert sum(r.tokens_cached for r in records) == served.cache_read_tokens > 0
    price = load_prices(str(prices)).require("claude-fake")
    for record in records:
        expected = price.cost(record.tokens_in, record.tokens_out, record.tokens_cached)
        assert record.cost_usd == pytest.approx(expected)
    assert set(served.keys) == {KEY}
    meta = json.loads((tmp_path / "out" / "experiment.json").read_text(encoding="utf-8"))
    assert (meta["provider"], meta["model"], meta["base_url"]) == (
        "anthropic",
        "claude-fake",
        fake.base_url,
    )


class Thinking:
    """Sends every request with a thinking budget, and totals the usage it is given."""

    def __init__(self, inner):
        self.inner = inner
        self.usage = None

    async def complete(self, request: ModelRequest) -> ModelResponse:
        response = await self.inner.complete(replace(request, thinking_budget=2048))
        self.usage = response.usage if self.usage is None else self.usage + response.usage
        return response


def test_thinking_goes_back_within_a_tool_loop_into_the_trace_and_cache_writes_count(tmp_path):
    async def grid(url):
        async with AnthropicClient(url, KEY) as client:
            counted = Thinking(client)
            experiment = Experiment("depot", ["react", "rewoo"], limit=2, out=tmp_path / "o")
            await experiment.run_async(counted)
            return counted.usage

    with AnthropicFakeServer(api_key=KEY) as fake:
        usage = asyncio.run(grid(fake.base_url))
    records = read_records(tmp_path / "o")
    assert {r.status for r in records} == {"answered"}  # the fake checks each signature
    react = sum(r.tool_calls for r in records if r.pattern == "react")
    assert react == fake.served.tool_uses["lookup"] > 0  # rewoo's steps are not tool_use
    thinking = [b for b in fake.served.bodies if "thinking" in b]
    assert thinking and all(b["thinking"]["budget_tokens"] == 2048 for b in thinking)
    forced = [b for b in fake.served.bodies if b.get("tool_choice", {}).get("type") == "tool"]
    assert forced and not any("thinking" in b for b in forced)  # rewoo's plan: no thinking
    assert usage.cache_write_tokens == fake.served.cache_write_tokens > 0
    assert usage.cached_tokens == fake.served.cache_read_tokens
    assert usage.input_tokens == fake.served.input_tokens
    traces = (tmp_path / "o" / "traces.jsonl").read_text(encoding="utf-8")
    responses = [
        e["response"]
        for line in traces.splitlines()
        for e in json.loads(line)["events"]
        if e["kind"] == "response"
    ]
    assert any(r.get("thinking") == THINKING for r in responses)


def test_a_model_written_anthropic_slash_chooses_the_api_and_is_recorded_as_given(
    tmp_path, monkeypatch
):
    with AnthropicFakeServer() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # not this one's
        prices = tmp_path / "prices.toml"
        prices.write_text(PRICES, encoding="utf-8")
        model = ["--model", "anthropic/claude-fake", "--prices", str(prices)]
        result = run(tmp_path / "o", "--arm", "direct", *model)
    assert result.exit_code == 0, result.output
    assert f"at {fake.base_url} (ANTHROPIC_BASE_URL, Anthropic's Messages API)" in result.output
    assert {b["model"] for b in fake.served.bodies} == {"claude-fake"}
    records = read_records(tmp_path / "o")
    assert {r.model for r in records} == {"anthropic/claude-fake"}
    assert all(r.cost_usd for r in records)  # priced as claude-fake, the prefix aside


def test_a_model_entry_may_name_its_own_provider_beside_an_openai_model(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-0123456789")
    models = [ModelEntry(name="claude-x", provider="anthropic"), ModelEntry(name="gpt-x")]
    config = RunConfig(models=models, base_urls=["http://127.0.0.1:8/v1"])
    found = {e.model: e for e in resolve_endpoints(config)[1]}
    assert (found["claude-x"].provider, found["gpt-x"].provider) == ("anthropic", "openai")
    assert found["claude-x"].base_url == "http://127.0.0.1:8/v1"  # the shared one given
    assert found["claude-x"].api_key is None  # given, not Anthropic's: never its key
    assert found["gpt-x"].api_key == "sk-openai-0123456789"


def test_provider_in_an_experiment_file_chooses_the_api(tmp_path):
    with AnthropicFakeServer() as fake:
        experiment = tmp_path / "e.toml"
        experiment.write_text(
            f'arms = ["direct"]\nprovider = "anthropic"\nbase_urls = ["{fake.base_url}"]\n'
            'models = [{name = "claude-fake"}]\n',
            encoding="utf-8",
        )
        result = run(tmp_path / "o", "--experiment", str(experiment))
    assert result.exit_code == 0, result.output
    assert fake.served.messages == 2


def test_the_anthropic_key_reaches_no_other_host(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # where the key is for
    with AnthropicFakeServer() as fake:
        given = ["--provider", "anthropic", "--base-url", fake.base_url, "--model", "c"]
        result = run(tmp_path / "o", "--arm", "direct", *given)
    assert result.exit_code == 0, result.output
    assert fake.served.keys == [None, None]
    # Nor does an OpenAI-style endpoint get it, nor Anthropic's default a LOOPBENCH key.
    config = RunConfig(base_urls=["http://127.0.0.1:8/v1"], models=[ModelEntry(name="m")])
    assert [e.api_key for e in resolve_endpoints(config)[1]] == [None]
    monkeypatch.delenv("ANTHROPIC_BASE_URL")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("LOOPBENCH_API_KEY", "sk-loopbench-0123456789")
    assert resolve_anthropic(None, "c").api_key is None


def test_the_provider_is_chosen_by_flag_model_prefix_or_anthropic_base_url(monkeypatch):
    assert chosen_provider(None, "claude-x", None) == "openai"
    assert chosen_provider(None, "anthropic/claude-x", None) == "anthropic"
    assert chosen_provider("openai", "anthropic/claude-x", None) == "openai"
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    assert chosen_provider(None, "claude-x", None) == "anthropic"
    assert chosen_provider(None, "claude-x", "http://127.0.0.1:8/v1") == "openai"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8/v1")
    assert chosen_provider(None, "claude-x", None) == "openai"


def test_the_key_goes_to_the_url_it_is_for_and_to_anthropics_own_by_default(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    assert resolve_anthropic(None, "c").api_key == KEY
    assert resolve_anthropic(None, "c").base_url == DEFAULT_URL
    assert resolve_anthropic(DEFAULT_URL + "/v1/", "c").api_key == KEY
    assert resolve_anthropic("https://proxy.example", "c").api_key is None
    monkeypatch.setenv("LOOPBENCH_API_KEY", "sk-given-url-key")
    assert resolve_anthropic("https://proxy.example", "c").api_key == "sk-given-url-key"
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://proxy.example")
    assert resolve_anthropic(None, "c").api_key == KEY
    assert resolve_anthropic(DEFAULT_URL, "c").api_key == "sk-given-url-key"
    with pytest.raises(EndpointNotConfigured, match="needs the name of the model"):
        resolve_anthropic(None, None)


def test_retries_on_the_fake_honour_retry_after_and_an_echoed_key_is_redacted():
    delays: list[float] = []

    async def sleep(seconds):
        delays.append(seconds)

    async def call(url):
        connection = Connection(retry=RetryPolicy(max_retries=3))
        async with AnthropicClient(url, KEY, connection, Hooks(sleep=sleep)) as client:
            return await client.complete(ModelRequest("c", ()))

    with AnthropicFakeServer() as fake:
        fake.fail_next(
            Fault(429, headers={"retry-after": "3"}),
            Fault(529),
            Fault(500),
            Fault(200, body=b'{"content": 7}'),
        )
        with pytest.raises(ModelAPIError) as info:
            asyncio.run(call(fake.base_url))
        assert "content is the number 7" in str(info.value)
        assert delays[0] == 3.0 and len(delays) == 3
        fake.fail_next(Fault(401, f"invalid x-api-key {KEY}"))
        with pytest.raises(ModelAPIError) as info:
            asyncio.run(call(fake.base_url))
    said = str(info.value)
    assert "authentication_error: invalid x-api-key [redacted]" in said
    assert not any(run in said for run in runs_of_eight(KEY))
