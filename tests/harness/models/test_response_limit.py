"""The limit on a reply's body: counted once decompressed and while it is read, so a
compression bomb costs the limit and no more, through either transport."""

from __future__ import annotations

import asyncio
import gzip
import json
import tracemalloc
import zlib

import httpx
import pytest

from loopbench.harness.models.bounded_body import MIB, BodyTooLarge, BoundedBody
from loopbench.harness.models.openai_compat import Connection, Hooks, OpenAICompatClient
from loopbench.harness.models.types import Message, ModelAPIError, ModelRequest
from tests.fakes.fault_server import FaultServer, bomb

REQUEST = ModelRequest("m", (Message("user", "hi"),))
ONE_MIB = Connection(max_response_mb=1, max_retries=2)
LIMIT_HIT = "is more than 1 MiB once decompressed, the most a reply may hold"


class Chunks(httpx.AsyncByteStream):
    """A body as a network sends it: in chunks, read only when asked for."""

    def __init__(self, data: bytes, size: int = 1 << 16) -> None:
        self.data, self.size, self.sent = data, size, 0

    async def __aiter__(self):
        for start in range(0, len(self.data), self.size):
            self.sent += self.size
            yield self.data[start : start + self.size]


def completion(content: str) -> bytes:
    message = {"role": "assistant", "content": content}
    return json.dumps({"choices": [{"message": message, "finish_reason": "stop"}]}).encode()


def call_through_httpx(respond, connection=ONE_MIB):
    seen = []

    def handler(request):
        seen.append(request)
        return respond(request)

    async def call():
        hooks = Hooks(transport=httpx.MockTransport(handler), sleep=lambda s: asyncio.sleep(0))
        async with OpenAICompatClient("http://x/v1", "k", connection, hooks) as client:
            return await client.complete(REQUEST)

    return asyncio.run(call()), seen


def failure_through_httpx(respond):
    with pytest.raises(ModelAPIError) as caught:
        call_through_httpx(respond)
    return caught.value


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_a_bomb_through_httpx_is_an_api_error_not_retried_and_read_no_further(encoding):
    body = bomb(encoding, 64 * MIB)
    streams = []

    def respond(request):
        streams.append(Chunks(body))
        return httpx.Response(200, headers={"content-encoding": encoding}, stream=streams[-1])

    error = failure_through_httpx(respond)
    assert LIMIT_HIT in str(error) and "--max-response-mb 1" in str(error)
    assert (error.status, error.retries, len(streams)) == (200, 0, 1)
    assert streams[0].sent < len(body)  # the rest was never read


@pytest.mark.parametrize("fault", ["gzip_bomb", "deflate_bomb", "huge_body", "huge_error"])
def test_a_bomb_or_a_huge_body_through_aiohttp_is_an_api_error_not_retried(fault):
    async def call():
        async with OpenAICompatClient(server.base_url, connection=ONE_MIB) as client:
            return await client.complete(REQUEST)

    with FaultServer({1: fault}, bomb_bytes=64 * MIB) as server:
        with pytest.raises(ModelAPIError, match=LIMIT_HIT) as caught:
            asyncio.run(call())
        assert len(server.hits) == 1
    assert caught.value.status == (500 if fault == "huge_error" else 200)


@pytest.mark.parametrize("encoding", ["gzip_bomb", "deflate_bomb"])
def test_a_compressed_reply_under_the_limit_is_read_whole_through_aiohttp(encoding):
    async def call():
        async with OpenAICompatClient(server.base_url, connection=ONE_MIB) as client:
            return await client.complete(REQUEST)

    with FaultServer({1: encoding}, bomb_bytes=MIB - 1) as server:
        response = asyncio.run(call())
    # All of it but the completion's own few hundred bytes of JSON is the filler.
    assert set(response.message.content) == {"a"}
    assert MIB - 400 < len(response.message.content) < MIB


def test_a_compressed_reply_is_asked_for_and_decoded_through_httpx():
    data = completion("84")

    def respond(request):
        assert request.headers["accept-encoding"] == "gzip, deflate"
        return httpx.Response(
            200, headers={"content-encoding": "gzip"}, stream=Chunks(gzip.compress(data), 7)
        )

    response, _ = call_through_httpx(respond)
    assert response.message.content == "84"


def test_a_declared_length_past_the_limit_is_refused_before_the_body_is_read():
    stream = Chunks(b"x" * (2 * MIB))
    error = failure_through_httpx(
        lambda request: httpx.Response(200, headers={"content-length": str(2 * MIB)}, stream=stream)
    )
    assert LIMIT_HIT in str(error) and stream.sent == 0


def test_received_bytes_count_too_even_when_they_inflate_to_nothing():
    empty_members = gzip.compress(b"") * (2 * MIB // 20 + 1)

    def respond(request):
        return httpx.Response(
            200, headers={"content-encoding": "gzip"}, stream=Chunks(empty_members)
        )

    assert LIMIT_HIT in str(failure_through_httpx(respond))


def test_a_body_built_whole_by_a_handler_is_bounded_too():
    body = completion("a" * (2 * MIB))
    assert LIMIT_HIT in str(
        failure_through_httpx(lambda request: httpx.Response(200, content=body))
    )


def test_an_encoding_not_asked_for_is_the_endpoints_failure():
    def respond(request):
        return httpx.Response(200, headers={"content-encoding": "br"}, stream=Chunks(b"\x8b"))

    error = failure_through_httpx(respond)
    assert "DecodingError: the body is encoded as 'br', which was not asked for" in str(error)


def test_no_step_of_inflating_a_bomb_holds_more_than_the_limit():
    body = BoundedBody("gzip", MIB)
    data = bomb("gzip", 256 * MIB)
    tracemalloc.start()
    try:
        with pytest.raises(BodyTooLarge):
            for start in range(0, len(data), 1 << 16):
                body.feed(data[start : start + (1 << 16)])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 3 * MIB


def test_several_gzip_members_and_a_deflate_body_without_its_header_decode():
    members = BoundedBody("gzip", MIB)
    members.feed(gzip.compress(b"ab") + gzip.compress(b"cd"))
    raw = zlib.compressobj(6, zlib.DEFLATED, -15)
    headerless = BoundedBody("deflate", MIB)
    headerless.feed(raw.compress(b"ef") + raw.flush())
    assert (members.finish(), headerless.finish()) == (b"abcd", b"ef")


@pytest.mark.parametrize("size", [0, -1, float("nan")])
def test_a_limit_that_is_not_a_size_is_refused(size):
    with pytest.raises(ValueError, match="give a size above 0"):
        OpenAICompatClient("http://x/v1", connection=Connection(max_response_mb=size))
