"""The Anthropic Messages client: what it sends, how it reads a reply, retries and secrets."""

import asyncio
import json
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from loopbench.harness.models.anthropic import AnthropicClient, messages_url
from loopbench.harness.models.anthropic_wire import (
    DEFAULT_MAX_TOKENS,
    THINKING_BUDGETS,
    parse_message,
    request_body,
)
from loopbench.harness.models.http_client import Connection, Hooks, RetryPolicy
from loopbench.harness.models.types import (
    Message,
    ModelAPIError,
    ModelRequest,
    ThinkingBlock,
    ToolCall,
    ToolSpec,
    Usage,
)
from loopbench.harness.models.wire import request_body as chat_body
from tests.secret_text import runs_of_eight

KEY = "sk-ant-test-0123456789abcdefghij"
TOOLS = (ToolSpec("lookup", "Look a title up.", {"type": "object"}),)
THOUGHT = {"type": "thinking", "thinking": "Paris first.", "signature": "sig-1"}


def message(content=None, stop="end_turn", usage=None):
    return {
        "type": "message",
        "role": "assistant",
        "content": content if content is not None else [{"type": "text", "text": "hi"}],
        "stop_reason": stop,
        "usage": usage if usage is not None else {"input_tokens": 10, "output_tokens": 3},
    }


class Script:
    """A MockTransport handler that plays a list of responses and keeps the requests."""

    def __init__(self, *responses):
        self.responses = list(responses)
        self.requests: list[httpx.Request] = []

    def __call__(self, request):
        self.requests.append(request)
        return self.responses.pop(0)


def make_client(script, retries=3, url="http://claude.test"):
    delays: list[float] = []

    async def sleep(seconds):
        delays.append(seconds)

    client = AnthropicClient(
        url,
        KEY,
        Connection(retry=RetryPolicy(max_retries=retries)),
        Hooks(httpx.MockTransport(script), sleep, seed=1),
    )
    return client, delays


REQUEST = ModelRequest(model="claude-x", system="be brief", messages=(Message("user", "q"),))


def complete(client, request=REQUEST):
    return asyncio.run(client.complete(request))


def test_a_request_is_a_messages_api_post_with_the_key_and_version_headers():
    script = Script(httpx.Response(200, json=message()))
    client, _ = make_client(script)
    complete(client, ModelRequest("anthropic/claude-x", (Message("user", "q"),), system="s"))
    sent = script.requests[0]
    assert str(sent.url) == "http://claude.test/v1/messages"
    assert sent.headers["x-api-key"] == KEY and sent.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in sent.headers
    body = json.loads(sent.content)
    assert body == {
        "model": "claude-x",
        "max_tokens": DEFAULT_MAX_TOKENS,
        "messages": [{"role": "user", "content": "q"}],
        "system": "s",
    }


def test_a_base_url_ending_in_v1_is_the_same_endpoint():
    assert messages_url("http://h/v1") == messages_url("http://h") == "http://h/v1/messages"


def test_tool_calls_and_results_go_as_blocks_results_in_a_row_one_user_turn():
    calls = (ToolCall("t1", "lookup", '{"title": "Paris"}'), ToolCall("t2", "lookup", "{}"))
    request = ModelRequest(
        "claude-x",
        (
            Message("user", "q"),
            Message("assistant", "Looking.", calls, thinking=(ThinkingBlock(json.dumps(THOUGHT)),)),
            Message("tool", "Paris: 1889", tool_call_id="t1"),
            Message("tool", "nothing", tool_call_id="t2"),
            Message("user", "Go on."),
        ),
        tools=TOOLS,
        tool_choice="auto",
        stop=("END",),
        temperature=0.5,
        top_p=0.9,
        seed=7,
        max_output_tokens=300,
    )
    body = request_body(request)
    assert body["messages"][1] == {
        "role": "assistant",
        "content": [
            THOUGHT,
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "t1", "name": "lookup", "input": {"title": "Paris"}},
            {"type": "tool_use", "id": "t2", "name": "lookup", "input": {}},
        ],
    }
    assert body["messages"][2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "Paris: 1889"},
            {"type": "tool_result", "tool_use_id": "t2", "content": "nothing"},
            {"type": "text", "text": "Go on."},
        ],
    }
    assert len(body["messages"]) == 3
    assert body["tools"] == [
        {"name": "lookup", "description": "Look a title up.", "input_schema": {"type": "object"}}
    ]
    assert body["tool_choice"] == {"type": "auto"}
    assert (body["stop_sequences"], body["max_tokens"]) == (["END"], 300)
    assert (body["temperature"], body["top_p"]) == (0.5, 0.9)
    assert "seed" not in body and "thinking" not in body


def test_the_chat_completions_wire_leaves_thinking_out():
    thought = Message("assistant", "a", thinking=(ThinkingBlock(json.dumps(THOUGHT)),))
    body = chat_body(ModelRequest("m", (Message("user", "q"), thought)))
    assert body["messages"][1] == {"role": "assistant", "content": "a"}


@pytest.mark.parametrize(
    ("choice", "sent"),
    [
        ("auto", {"type": "auto"}),
        ("required", {"type": "any"}),
        ("none", {"type": "none"}),
        ("lookup", {"type": "tool", "name": "lookup"}),
    ],
)
def test_tool_choice_is_mapped(choice, sent):
    request = ModelRequest("m", (Message("user", "q"),), tools=TOOLS, tool_choice=choice)
    assert request_body(request)["tool_choice"] == sent


@pytest.mark.parametrize(
    ("effort", "budget", "sent"),
    [
        *((effort, None, THINKING_BUDGETS[effort]) for effort in THINKING_BUDGETS),
        ("none", None, None),
        (None, 5000, 5000),
        ("high", 3000, 3000),
    ],
)
def test_reasoning_is_sent_as_a_thinking_budget_above_which_max_tokens_is_raised(
    effort, budget, sent
):
    request = ModelRequest(
        "m",
        (Message("user", "q"),),
        reasoning_effort=effort,
        thinking_budget=budget,
        temperature=0.2,
        top_p=0.5,
        max_output_tokens=500,
    )
    body = request_body(request)
    if sent is None:
        assert "thinking" not in body and body["max_tokens"] == 500
        assert (body["temperature"], body["top_p"]) == (0.2, 0.5)
    else:
        assert body["thinking"] == {"type": "enabled", "budget_tokens": sent}
        assert body["max_tokens"] == sent + 500
        assert "temperature" not in body and "top_p" not in body


def test_a_request_forcing_a_tool_goes_without_thinking_which_the_api_refuses_then():
    request = ModelRequest(
        "m", (Message("user", "q"),), tools=TOOLS, tool_choice="lookup", thinking_budget=2048
    )
    body = request_body(request)
    assert "thinking" not in body and body["max_tokens"] == DEFAULT_MAX_TOKENS


def test_a_reply_is_read_text_joined_tool_uses_as_calls_thinking_kept():
    content = [
        THOUGHT,
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "text", "text": "Let me "},
        {"type": "text", "text": "look."},
        {"type": "tool_use", "id": "t1", "name": "lookup", "input": {"title": "Paris"}},
    ]
    usage = {
        "input_tokens": 5,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 20,
        "output_tokens": 9,
    }
    client, _ = make_client(Script(httpx.Response(200, json=message(content, "tool_use", usage))))
    response = complete(client)
    assert response.message.content == "Let me look."
    assert response.message.tool_calls == (ToolCall("t1", "lookup", '{"title": "Paris"}'),)
    assert [json.loads(b.json) for b in response.message.thinking] == content[:2]
    assert [b.text for b in response.message.thinking] == ["Paris first.", ""]
    assert response.finish_reason == "tool_calls"
    assert response.usage == Usage(125, 9, cached_tokens=100, cache_write_tokens=20)


@pytest.mark.parametrize(
    ("stop", "finish"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("tool_use", "tool_calls"),
        ("refusal", "content_filter"),
        ("pause_turn", "other"),
        (None, "stop"),
    ],
)
def test_stop_reasons_are_mapped(stop, finish):
    assert parse_message(message(stop=stop)).finish_reason == finish


def test_a_reply_without_usage_has_unknown_tokens_not_zero():
    assert parse_message(message(usage={})).usage == Usage(missing=1)
    assert parse_message(message(usage={"output_tokens": 3})).usage == Usage(missing=1)


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"content": "hi"}, "content is the text"),
        ({"content": [{"type": "text"}]}, "content[0].text"),
        ({"content": [{"type": "tool_use", "name": "x", "id": "t", "input": "{}"}]}, ".input"),
        ({"content": [{"type": "tool_use", "id": "t", "input": {}}]}, "content[0].name"),
        ({"content": [{"type": "thinking", "signature": "s"}]}, "content[0].thinking"),
        ({"content": [], "stop_reason": 3}, "stop_reason"),
        ({"content": [], "usage": {"input_tokens": -1, "output_tokens": 1}}, "input_tokens"),
        ([], "the body"),
    ],
)
def test_a_malformed_reply_is_an_api_error_naming_the_field_after_retries(body, named):
    script = Script(*(httpx.Response(200, json=body) for _ in range(2)))
    client, _ = make_client(script, retries=1)
    with pytest.raises(ModelAPIError) as info:
        complete(client)
    assert named in str(info.value) and "not a Messages API message" in str(info.value)
    assert info.value.retries == 1


@pytest.mark.parametrize("status", [429, 500, 529])
def test_retried_statuses_529_among_them_wait_what_retry_after_asks(status):
    script = Script(
        httpx.Response(status, headers={"retry-after": "7"}, json={"type": "error"}),
        httpx.Response(200, json=message()),
    )
    client, delays = make_client(script)
    response = complete(client)
    assert response.retries == 1 and delays == [7.0]


def test_a_429_without_retry_after_waits_for_the_limit_it_used_up_to_reset():
    reset = (datetime.now(UTC) + timedelta(seconds=20)).isoformat()
    headers = {
        "anthropic-ratelimit-requests-remaining": "0",
        "anthropic-ratelimit-requests-reset": reset,
        "anthropic-ratelimit-tokens-remaining": "5000",
        "anthropic-ratelimit-tokens-reset": (datetime.now(UTC) + timedelta(hours=1)).isoformat(),
    }
    script = Script(httpx.Response(429, headers=headers), httpx.Response(200, json=message()))
    client, delays = make_client(script)
    complete(client)
    assert 15 < delays[0] <= 20


@pytest.mark.parametrize("status", [429, 529])
def test_a_429_or_a_529_halves_the_requests_in_flight(status):
    script = Script(httpx.Response(status), httpx.Response(200, json=message()))
    client, _ = make_client(script)
    complete(client)
    assert client.concurrency.cuts == 1


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_a_refusal_is_not_retried_and_quotes_the_api_error_with_the_key_redacted(status):
    echoed = {"type": "error", "error": {"type": "authentication_error", "message": f"bad {KEY}"}}
    client, delays = make_client(Script(httpx.Response(status, json=echoed)))
    with pytest.raises(ModelAPIError) as info:
        complete(client)
    said = str(info.value)
    assert f"HTTP {status}: authentication_error: bad [redacted]" in said
    assert not any(run in said for run in runs_of_eight(KEY))
    assert (info.value.status, info.value.retries, delays) == (status, 0, [])


def test_a_key_the_model_repeats_is_redacted_from_its_text_calls_and_thinking():
    content = [
        {"type": "thinking", "thinking": f"the key is {KEY}", "signature": "s"},
        {"type": "text", "text": f"key: {KEY}"},
        {"type": "tool_use", "id": "t", "name": "lookup", "input": {"title": KEY}},
    ]
    client, _ = make_client(Script(httpx.Response(200, json=message(content))))
    response = complete(client)
    held = json.dumps(
        [response.message.content, response.message.tool_calls[0].arguments]
        + [b.json for b in response.message.thinking]
    )
    assert "[redacted]" in held and not any(run in held for run in runs_of_eight(KEY))


def test_thinking_is_cached_and_replayed_and_a_message_without_it_keeps_its_key(tmp_path):
    from loopbench.harness.models.cache import (
        CachingClient,
        ResponseCache,
        canonical_request,
        request_key,
    )
    from loopbench.harness.models.scripted import FunctionModel

    thought = Message("assistant", "a", thinking=(ThinkingBlock(json.dumps(THOUGHT)),))
    model = FunctionModel(lambda request: "unused")

    async def replayed():
        cache = ResponseCache(tmp_path)
        try:
            request = ModelRequest("m", (Message("user", "q"),))
            cache.put(request_key(canonical_request(request, "s", 0)), {}, _response(thought))
            return await CachingClient(model, cache, "s").complete(request)
        finally:
            cache.close()

    response = asyncio.run(replayed())
    assert response.from_cache and response.message.thinking == thought.thinking
    plain = ModelRequest("m", (Message("user", "q"), Message("assistant", "a")))
    held = ModelRequest("m", (Message("user", "q"), thought))
    assert "thinking" not in canonical_request(plain, "s", 0)["messages"][1]
    assert request_key(canonical_request(plain, "s", 0)) != request_key(
        canonical_request(held, "s", 0)
    )


def _response(message):
    from loopbench.harness.models.types import ModelResponse

    return ModelResponse(message, usage=Usage(10, 3, cache_write_tokens=4))


def test_the_fake_is_served_from_the_command_line_with_anthropic():
    import subprocess
    import sys

    command = [
        sys.executable,
        "-m",
        "loopbench.harness.fakes.serve",
        "--anthropic",
        "--latency",
        "0",
    ]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as server:
        try:
            url = server.stdout.readline().strip()
            assert url.startswith("http://127.0.0.1:") and not url.endswith("/v1")

            async def call():
                async with AnthropicClient(url, KEY) as client:
                    return await client.complete(REQUEST)

            assert asyncio.run(call()).message.content == "84"
        finally:
            server.terminate()
