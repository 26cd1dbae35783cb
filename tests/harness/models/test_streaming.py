"""The OpenAI-compatible client with ``stream``: replies read as server-sent events through
the httpx path a test scripts (``httpx.MockTransport``), cut short, stalled and oversized."""

import asyncio
import json
import time

import httpx
import pytest

from loopbench.harness.models.openai_compat import Connection, Hooks, OpenAICompatClient
from loopbench.harness.models.openai_stream import ChatChunks
from loopbench.harness.models.sse import ServerEvent
from loopbench.harness.models.streamed import StreamEventError
from loopbench.harness.models.types import Message, ModelAPIError, ModelRequest, ToolCall, Usage

REQUEST = ModelRequest("m", (Message("user", "q"),))
USAGE = {"prompt_tokens": 12, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 4}}


def chunk(delta=None, finish=None, usage=None, choices=True):
    data = {"object": "chat.completion.chunk", "choices": []}
    if choices:
        data["choices"] = [{"index": 0, "delta": delta or {}, "finish_reason": finish}]
    if usage is not None:
        data["usage"] = usage
    return data


def sse(*chunks, done=True) -> bytes:
    lines = [f"data: {json.dumps(c)}\n\n" for c in chunks]
    return ("".join(lines) + ("data: [DONE]\n\n" if done else "")).encode()


TEXT_STREAM = [
    chunk({"role": "assistant", "content": ""}),
    chunk({"content": "Par"}),
    chunk({"content": "is"}),
    chunk(finish="stop"),
    chunk(usage=USAGE, choices=False),
]


class Pieces(httpx.AsyncByteStream):
    """A body sent a piece at a time, with a pause before the pieces ``pauses`` names."""

    def __init__(self, pieces: list[bytes], pauses: dict[int, float] | None = None) -> None:
        self.pieces, self.pauses = pieces, pauses or {}

    async def __aiter__(self):
        for index, piece in enumerate(self.pieces):
            if index in self.pauses:
                await asyncio.sleep(self.pauses[index])
            yield piece


def event_stream(body: bytes | Pieces) -> httpx.Response:
    headers = {"content-type": "text/event-stream"}
    if isinstance(body, bytes):
        return httpx.Response(200, headers=headers, content=body)
    return httpx.Response(200, headers=headers, stream=body)


STREAMED = Connection(stream=True, max_retries=1)


def call(answer, connection=STREAMED):
    """Complete REQUEST against ``answer`` (a function of the request); what it returned or
    raised, the requests sent, and the seconds it took."""
    sent: list[httpx.Request] = []

    async def handler(request):
        sent.append(request)
        return answer(request)

    async def scenario():
        hooks = Hooks(httpx.MockTransport(handler), sleep=lambda s: asyncio.sleep(0))
        async with OpenAICompatClient("http://model.test/v1", "k", connection, hooks) as client:
            try:
                return await client.complete(REQUEST)
            except ModelAPIError as exc:
                return exc

    began = time.monotonic()
    outcome = asyncio.run(scenario())
    return outcome, sent, time.monotonic() - began


def test_a_stream_asks_for_usage_and_reads_as_the_whole_reply():
    streamed, sent, _ = call(lambda r: event_stream(sse(*TEXT_STREAM)))
    whole = {
        "choices": [
            {"message": {"role": "assistant", "content": "Paris"}, "finish_reason": "stop"}
        ],
        "usage": USAGE,
    }
    unstreamed, _, _ = call(lambda r: httpx.Response(200, json=whole), Connection())
    body = json.loads(sent[0].content)
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert streamed.message == unstreamed.message and streamed.usage == unstreamed.usage
    assert streamed.usage == Usage(12, 5, 4)
    assert streamed.ttft_s is not None and unstreamed.ttft_s is None


def test_the_time_to_first_token_waits_for_text_not_the_role_chunk():
    pieces = Pieces([sse(TEXT_STREAM[0], done=False), sse(*TEXT_STREAM[1:])], {1: 0.3})
    response, _, took = call(lambda r: event_stream(pieces))
    assert 0.3 <= response.ttft_s <= took


def test_a_reply_sent_whole_to_a_stream_request_is_read_as_ever():
    whole = {"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}], "usage": USAGE}
    response, _, _ = call(lambda r: httpx.Response(200, json=whole))
    assert response.message.content == "hi" and response.ttft_s is None


def test_an_error_status_is_read_whole_and_retried():
    replies = iter([httpx.Response(503, json={"error": "busy"}), event_stream(sse(*TEXT_STREAM))])
    response, sent, _ = call(lambda r: next(replies))
    assert len(sent) == 2 and response.message.content == "Paris" and response.retries == 1


def test_a_stream_cut_short_is_retried_and_counts_the_usage_it_reported():
    response, sent, _ = call(lambda r: event_stream(sse(*TEXT_STREAM, done=False)))
    assert isinstance(response, ModelAPIError) and len(sent) == 2
    assert "closed before the stream ended" in str(response)
    assert response.usage == Usage(24, 10, 8)  # both attempts reported theirs, and were billed


def test_a_stream_cut_before_its_usage_counts_none():
    response, _, _ = call(lambda r: event_stream(sse(*TEXT_STREAM[:2], done=False)))
    assert isinstance(response, ModelAPIError) and response.usage == Usage()


def test_an_error_event_ends_the_stream_with_what_it_said():
    error = {"error": {"message": "overloaded", "type": "server_error"}}
    response, _, _ = call(lambda r: event_stream(sse(TEXT_STREAM[0], error, done=False)))
    assert isinstance(response, ModelAPIError) and "overloaded" in str(response)


def test_a_stream_that_stalls_ends_after_the_limit_between_events():
    connection = Connection(stream=True, max_retries=1, stream_idle_s=0.2)

    def stalling(request):
        return event_stream(
            Pieces([sse(TEXT_STREAM[0], done=False), sse(*TEXT_STREAM[1:])], {1: 30})
        )

    response, sent, took = call(stalling, connection)
    assert isinstance(response, ModelAPIError) and "stalled: no event within 0.2 s" in str(response)
    assert len(sent) == 2 and took < 10


def test_a_stream_of_keep_alive_events_ends_within_the_request_timeout():
    ping = sse(chunk({"role": "assistant"}), done=False)
    connection = Connection(timeout_s=0.5, stream=True, max_retries=0, stream_idle_s=0.2)
    forever = Pieces([ping] * 400, dict.fromkeys(range(400), 0.05))
    response, _, took = call(lambda r: event_stream(forever), connection)
    assert isinstance(response, ModelAPIError) and "within --timeout 0.5 s" in str(response)
    assert took < 10


def test_a_stream_past_the_size_limit_is_refused_and_not_retried():
    long = [chunk({"content": "x" * 1000}) for _ in range(100)]
    connection = Connection(stream=True, max_retries=2, max_response_mb=0.05)
    response, sent, _ = call(lambda r: event_stream(Pieces([sse(c, done=False) for c in long])),
                             connection)  # fmt: skip
    assert isinstance(response, ModelAPIError) and "--max-response-mb 0.05" in str(response)
    assert len(sent) == 1


def test_tool_call_deltas_are_joined_by_index():
    chunks = ChatChunks()
    deltas = [
        {"tool_calls": [{"index": 1, "id": "b", "function": {"name": "calc", "arguments": ""}}]},
        {
            "tool_calls": [
                {"index": 0, "id": "a", "function": {"name": "lookup", "arguments": '{"t'}}
            ]
        },
        {"tool_calls": [{"index": 1, "function": {"arguments": '{"e": 1}'}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": 'itle": "Paris"}'}}]},
    ]
    firsts = [chunks.add(ServerEvent("message", json.dumps(chunk(d)))) for d in deltas]
    chunks.add(ServerEvent("message", json.dumps(chunk(finish="tool_calls"))))
    chunks.add(ServerEvent("message", "[DONE]"))
    assert chunks.done and firsts == [True] * 4
    response, _, _ = call(
        lambda r: event_stream(sse(*(chunk(d) for d in deltas), chunk(finish="tool_calls")))
    )
    assert response.message.tool_calls == (
        ToolCall("a", "lookup", '{"title": "Paris"}'),
        ToolCall("b", "calc", '{"e": 1}'),
    )
    assert response.finish_reason == "tool_calls"


@pytest.mark.parametrize("data", ["{", "[1]", '{"choices": {}}', '{"choices": [{"delta": 3}]}'])
def test_a_chunk_that_is_not_a_chunk_is_refused(data):
    with pytest.raises(StreamEventError):
        ChatChunks().add(ServerEvent("message", data))


def test_a_reply_sent_whole_to_a_stream_request_is_read_within_the_timeout():
    whole = json.dumps({"choices": [{"message": {"content": "hi"}}], "usage": USAGE}).encode()

    def dribbled(request):
        return httpx.Response(200, json=None, stream=Pieces([whole[:10], whole[10:]], {1: 30}))

    connection = Connection(timeout_s=0.5, stream=True, max_retries=0)
    response, _, took = call(dribbled, connection)
    assert isinstance(response, ModelAPIError) and "within --timeout 0.5 s" in str(response)
    assert took < 10
