import asyncio
import json

import httpx
import pytest

from loopbench.harness.models.anthropic_stream import MessageEvents
from loopbench.harness.models.sse import ServerEvent
from loopbench.harness.models.streamed import StreamEventError, StreamLimits
from loopbench.harness.models.transport import HttpxPost, ReplyTooLarge


def event(data: dict) -> ServerEvent:
    return ServerEvent(data["type"], json.dumps(data))


START = {
    "type": "message_start",
    "message": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": "claude-x",
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 120,
            "output_tokens": 1,
            "cache_read_input_tokens": 100,
            "cache_creation_input_tokens": 20,
        },
    },
}


def block_start(index: int, block: dict) -> dict:
    return {"type": "content_block_start", "index": index, "content_block": block}


def delta(index: int, **fields: str) -> dict:
    return {"type": "content_block_delta", "index": index, "delta": fields}


def stop(index: int) -> dict:
    return {"type": "content_block_stop", "index": index}


END = [
    {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use", "stop_sequence": None},
        "usage": {"output_tokens": 42},
    },
    {"type": "message_stop"},
]

TOOL_LOOP = [
    START,
    {"type": "ping"},
    block_start(0, {"type": "thinking", "thinking": ""}),
    delta(0, type="thinking_delta", thinking="Look it "),
    delta(0, type="thinking_delta", thinking="up."),
    delta(0, type="signature_delta", signature="sig=="),
    stop(0),
    block_start(1, {"type": "text", "text": ""}),
    delta(1, type="text_delta", text="Let me "),
    delta(1, type="text_delta", text="check."),
    stop(1),
    block_start(2, {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {}}),
    delta(2, type="input_json_delta", partial_json=""),
    delta(2, type="input_json_delta", partial_json='{"title": '),
    delta(2, type="input_json_delta", partial_json='"Paris"}'),
    stop(2),
    *END,
]


def accumulate(events: list[dict]) -> tuple[MessageEvents, list[bool]]:
    messages = MessageEvents()
    firsts = [messages.add(event(data)) for data in events]
    return messages, firsts


def test_a_tool_loop_stream_is_the_message_sent_whole():
    messages, firsts = accumulate(TOOL_LOOP)
    assert messages.done
    assert json.loads(messages.body()) == {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [
            {"type": "thinking", "thinking": "Look it up.", "signature": "sig=="},
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"title": "Paris"}},
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 120,
            "output_tokens": 42,
            "cache_read_input_tokens": 100,
            "cache_creation_input_tokens": 20,
        },
    }
    # The first token is the first text, not the thinking before it.
    assert firsts.index(True) == TOOL_LOOP.index(delta(1, type="text_delta", text="Let me "))


def test_a_tool_call_with_no_input_has_an_empty_object():
    events = [START, block_start(0, {"type": "tool_use", "id": "t", "name": "now", "input": {}}),
              stop(0), *END]  # fmt: skip
    messages, firsts = accumulate(events)
    assert json.loads(messages.body())["content"][0]["input"] == {}
    assert firsts[1] is True


def test_a_stream_cut_short_holds_the_usage_reported_so_far():
    messages, _ = accumulate(TOOL_LOOP[:9])
    assert not messages.done
    body = json.loads(messages.body())
    assert body["usage"] == START["message"]["usage"]
    assert body["content"][1] == {"type": "text", "text": "Let me "}


def test_message_delta_usage_replaces_the_counts_it_repeats():
    final = {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
             "usage": {"input_tokens": 130, "output_tokens": 5}}  # fmt: skip
    messages, _ = accumulate([START, final, {"type": "message_stop"}])
    usage = json.loads(messages.body())["usage"]
    assert (usage["input_tokens"], usage["output_tokens"]) == (130, 5)
    assert usage["cache_read_input_tokens"] == 100


def test_unknown_event_and_delta_types_are_skipped():
    events = [START, {"type": "brand_new"}, block_start(0, {"type": "text", "text": ""}),
              delta(0, type="citations_delta", citation="x"), stop(0), *END]  # fmt: skip
    messages, _ = accumulate(events)
    assert messages.done and json.loads(messages.body())["content"] == [
        {"type": "text", "text": ""}
    ]


@pytest.mark.parametrize(
    ("events", "says"),
    [
        ([START, {"type": "error", "error": {"type": "overloaded_error"}}], "overloaded_error"),
        ([START, delta(3, type="text_delta", text="x")], "never started"),
        ([block_start(0, {"type": "text", "text": ""})], "before message_start"),
        ([START, START], "twice"),
        (
            [
                START,
                block_start(0, {"type": "tool_use", "id": "t", "name": "f", "input": {}}),
                delta(0, type="input_json_delta", partial_json='{"a": '),
                stop(0),
                {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
                {"type": "message_stop"},
            ],
            "not JSON",
        ),
    ],
)
def test_what_is_not_the_stream_of_a_message_is_refused(events, says):
    messages = MessageEvents()
    with pytest.raises(StreamEventError, match=says):
        for data in events:
            messages.add(event(data))


def test_a_tool_call_cut_by_max_tokens_is_kept_with_an_empty_input():
    events = [START, block_start(0, {"type": "tool_use", "id": "t", "name": "f", "input": {}}),
              delta(0, type="input_json_delta", partial_json='{"a": '), stop(0),
              {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}},
              {"type": "message_stop"}]  # fmt: skip
    messages, _ = accumulate(events)
    assert json.loads(messages.body())["content"][0]["input"] == {}


def test_a_body_that_is_not_json_is_refused():
    with pytest.raises(StreamEventError, match="not JSON"):
        MessageEvents().add(ServerEvent("message_start", "{"))


def sse(events: list[dict]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


class Pieces(httpx.AsyncByteStream):
    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces

    async def __aiter__(self):
        for piece in self.pieces:
            yield piece


def post_stream(body: bytes | list[bytes], max_body_bytes: int = 1 << 20):
    """``body`` (whole, or in pieces) as a Messages stream through the httpx transport,
    into MessageEvents."""

    def answer(request):
        headers = {"content-type": "text/event-stream"}
        if isinstance(body, bytes):
            return httpx.Response(200, headers=headers, content=body)
        return httpx.Response(200, headers=headers, stream=Pieces(body))

    async def scenario():
        post = HttpxPost(httpx.MockTransport(answer), 10.0, max_body_bytes)
        limits = StreamLimits(total_s=10.0, idle_s=10.0)
        try:
            return await post.post_stream(
                "http://x/v1/messages", [], b"{}", MessageEvents(), limits
            )
        finally:
            await post.aclose()

    return asyncio.run(scenario())


def test_the_transport_reads_a_messages_stream_through_the_accumulator_it_is_given():
    reply = post_stream(sse(TOOL_LOOP))
    expected, _ = accumulate(TOOL_LOOP)
    assert reply.status == 200 and reply.body == expected.body()
    assert reply.ttft_s is not None


def test_a_stream_past_the_size_limit_keeps_the_usage_it_reported():
    long = [delta(0, type="text_delta", text="x" * 1000) for _ in range(50)]
    events = [START, block_start(0, {"type": "text", "text": ""}), *long]
    with pytest.raises(ReplyTooLarge) as raised:
        post_stream([sse([event]) for event in events], max_body_bytes=20_000)
    assert json.loads(raised.value.partial)["usage"] == START["message"]["usage"]
