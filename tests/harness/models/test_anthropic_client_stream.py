"""The Anthropic client with ``stream``: a Messages stream read through the httpx path a
test scripts (``httpx.MockTransport``) gives the response the whole message does, with its
time to first token; a stream cut short keeps the usage it reported, cache counts too."""

import asyncio
import json

import httpx
import pytest

from loopbench.harness.fakes.fake_stream import MESSAGES_WIRE, message_events
from loopbench.harness.models.anthropic import AnthropicClient
from loopbench.harness.models.anthropic_wire import parse_message
from loopbench.harness.models.http_client import Connection, Hooks
from loopbench.harness.models.types import Message, ModelAPIError, ModelRequest, Usage

REQUEST = ModelRequest("claude-fake", (Message("user", "q"),), thinking_budget=2048)
MESSAGE = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-fake",
    "content": [
        {"type": "thinking", "thinking": "Think it through.", "signature": "sig-1"},
        {"type": "text", "text": "Looking it up."},
        {"type": "tool_use", "id": "tu_1", "name": "lookup", "input": {"key": "paris"}},
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 10,
        "cache_read_input_tokens": 30,
        "cache_creation_input_tokens": 5,
        "output_tokens": 42,
    },
}


def call(body: bytes, streamed: bool = True):
    """Complete REQUEST against a reply of ``body``; what it returned or raised, and the
    bodies sent."""
    sent: list[dict] = []

    async def handler(request):
        sent.append(json.loads(request.content))
        kind = "text/event-stream" if streamed else "application/json"
        return httpx.Response(200, headers={"content-type": kind}, content=body)

    async def scenario():
        hooks = Hooks(httpx.MockTransport(handler), sleep=lambda s: asyncio.sleep(0))
        how = Connection(stream=streamed, max_retries=1)
        async with AnthropicClient("http://claude.test", "k", how, hooks) as client:
            try:
                return await client.complete(REQUEST)
            except ModelAPIError as exc:
                return exc

    return asyncio.run(scenario()), sent


def events(cut_after: int | None = None) -> bytes:
    lines = [MESSAGES_WIRE.line(event) for event in message_events(MESSAGE)]
    return b"".join(lines[:cut_after])


def test_a_streamed_message_is_the_whole_one_with_its_ttft():
    streamed, sent = call(events())
    whole, sent_whole = call(json.dumps(MESSAGE).encode(), streamed=False)
    assert sent[0]["stream"] is True and "stream_options" not in sent[0]
    assert "stream" not in sent_whole[0]
    assert streamed.message == whole.message == parse_message(MESSAGE).message
    assert "sig-1" in streamed.message.thinking[0].json  # the thinking block, signed, kept
    assert streamed.usage == whole.usage == Usage(45, 42, cached_tokens=30, cache_write_tokens=5)
    assert streamed.finish_reason == whole.finish_reason == "tool_calls"
    assert streamed.ttft_s is not None and whole.ttft_s is None


@pytest.mark.parametrize("cut_after", [1, 6])
def test_a_stream_cut_short_is_an_api_error_with_the_usage_message_start_reported(cut_after):
    # 1: message_start alone; 6: into the thinking block. Retried once, so counted twice.
    failed, sent = call(events(cut_after))
    assert isinstance(failed, ModelAPIError) and len(sent) == 2
    assert "closed before the stream ended" in str(failed)
    once = Usage(45, 1, cached_tokens=30, cache_write_tokens=5)
    assert failed.usage == once + once
