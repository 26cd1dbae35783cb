import asyncio
import base64
import json
import time
from dataclasses import replace

import httpx
import pytest
from click.testing import CliRunner

from loopbench.harness.arms import parse_arms
from loopbench.harness.cli.main import main
from loopbench.harness.fakes.fake_server import FakeServer
from loopbench.harness.grid import Grid, run_grid
from loopbench.harness.models.counting import CountingClient
from loopbench.harness.models.openai_compat import (
    Connection,
    Hooks,
    OpenAICompatClient,
    RetryPolicy,
)
from loopbench.harness.models.types import (
    Message,
    ModelAPIError,
    ModelRequest,
    ToolCall,
    ToolSpec,
    Usage,
)
from loopbench.harness.results.reading import read_records
from loopbench.harness.results.store import ResultsFolder
from loopbench.harness.runner import RunSettings
from loopbench.harness.trace import Trace
from loopbench.tasks.loading import load_taskset
from tests.fakes.fault_server import FaultServer
from tests.secret_text import runs_of_eight

KEY = "sk-test-0123456789abcdefghij"


def completion(content="hi", tool_calls=None, finish="stop", usage=None):
    message = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "choices": [{"message": message, "finish_reason": finish}],
        "usage": usage if usage is not None else {"prompt_tokens": 10, "completion_tokens": 3},
    }


class Script:
    """A MockTransport handler that plays a list of responses and keeps the requests."""

    def __init__(self, *responses):
        self.responses = list(responses)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        item = self.responses.pop(0)
        if isinstance(item, Exception):
            raise item
        return item


def make_client(script, retries=3):
    delays: list[float] = []

    async def sleep(seconds):
        delays.append(seconds)

    client = OpenAICompatClient(
        "http://model.test/v1/",
        KEY,
        Connection(retry=RetryPolicy(max_retries=retries)),
        Hooks(httpx.MockTransport(script), sleep, seed=1),
    )
    return client, delays


REQUEST = ModelRequest(model="m", system="be brief", messages=(Message("user", "q"),))


def complete(client, request=REQUEST):
    return asyncio.run(client.complete(request))


def test_request_body_speaks_chat_completions():
    script = Script(*(httpx.Response(200, json=completion()) for _ in range(2)))
    client, _ = make_client(script)
    request = ModelRequest(
        model="m",
        system="sys",
        messages=(
            Message("user", "q"),
            Message("assistant", "", tool_calls=(ToolCall("c1", "lookup", '{"title": "X"}'),)),
            Message("tool", "entry text", tool_call_id="c1"),
        ),
        tools=(ToolSpec("lookup", "Look up.", {"type": "object"}),),
        max_output_tokens=50,
        stop=("\nObservation:",),
    )
    complete(client, request)
    sent = script.requests[0]
    assert sent.url == "http://model.test/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    body = json.loads(sent.content)
    assert body["messages"][0] == {"role": "system", "content": "sys"}
    assert body["messages"][2]["tool_calls"][0]["function"] == {
        "name": "lookup",
        "arguments": '{"title": "X"}',
    }
    assert body["messages"][2]["content"] is None
    assert body["messages"][3] == {"role": "tool", "content": "entry text", "tool_call_id": "c1"}
    assert body["tools"][0]["function"]["name"] == "lookup"
    assert (body["max_tokens"], body["stop"]) == (50, ["\nObservation:"])
    # Sampling settings go only when set: by default the endpoint's own apply.
    assert not {"temperature", "top_p", "seed"} & set(body)
    sampled = replace(request, temperature=0.7, top_p=0.9, seed=3)
    complete(client, sampled)
    body = json.loads(script.requests[1].content)
    assert (body["temperature"], body["top_p"], body["seed"]) == (0.7, 0.9, 3)


def test_reads_usage_cached_tokens_finish_reason_and_several_tool_calls():
    calls = [
        {"id": "a", "type": "function", "function": {"name": "lookup", "arguments": "{}"}},
        {
            "id": "b",
            "type": "function",
            "function": {"name": "calc", "arguments": {"expression": "1+1"}},
        },
    ]
    usage = {
        "prompt_tokens": 120,
        "completion_tokens": 7,
        "prompt_tokens_details": {"cached_tokens": 64},
    }
    client, _ = make_client(
        Script(httpx.Response(200, json=completion(None, calls, "length", usage)))
    )
    response = complete(client)
    assert [c.name for c in response.message.tool_calls] == ["lookup", "calc"]
    assert response.message.tool_calls[1].arguments == '{"expression": "1+1"}'
    assert response.truncated
    assert (
        response.usage.input_tokens,
        response.usage.output_tokens,
        response.usage.cached_tokens,
    ) == (120, 7, 64)


def test_retries_429_honouring_retry_after_then_succeeds():
    script = Script(
        httpx.Response(429, headers={"retry-after": "7"}, json={}),
        httpx.Response(503, json={}),
        httpx.Response(200, json=completion()),
    )
    client, delays = make_client(script)
    response = complete(client)
    assert response.retries == 2 and len(script.requests) == 3
    assert delays[0] == 7.0  # Retry-After wins over the shorter back-off
    assert 0.5 <= delays[1] <= 1.0  # attempt 1: base 0.5 * 2, jittered to between half and all


def test_retries_connect_and_read_errors():
    script = Script(
        httpx.ConnectError("refused"),
        httpx.ReadTimeout("slow"),
        httpx.Response(200, json=completion()),
    )
    client, delays = make_client(script)
    assert complete(client).retries == 2 and len(delays) == 2


def test_gives_up_after_max_retries():
    script = Script(*[httpx.Response(500, text="overloaded") for _ in range(3)])
    client, _ = make_client(script, retries=2)
    with pytest.raises(
        ModelAPIError, match=r"HTTP 500: overloaded \(gave up after 3 attempts\)"
    ) as info:
        complete(client)
    assert info.value.status == 500 and info.value.retries == 2


def test_client_errors_are_not_retried_and_the_key_is_redacted():
    script = Script(httpx.Response(401, text=f"bad key {KEY}"))
    client, delays = make_client(script)
    with pytest.raises(ModelAPIError) as info:
        complete(client)
    assert delays == [] and KEY not in str(info.value) and "[redacted]" in str(info.value)


def test_a_reply_that_is_not_a_completion_is_retried_then_an_api_error():
    script = Script(*[httpx.Response(200, json={"object": "error"}) for _ in range(3)])
    client, delays = make_client(script, retries=2)
    with pytest.raises(ModelAPIError, match=r"not a chat completion.*gave up after 3 attempts"):
        complete(client)
    assert len(script.requests) == 3 and len(delays) == 2


def test_a_malformed_reply_then_a_good_one_succeeds():
    script = Script(httpx.Response(200, text="{not json"), httpx.Response(200, json=completion()))
    client, _ = make_client(script)
    assert complete(client).retries == 1


def test_counting_wrapper_counts_calls_and_usage_on_the_error_path():
    script = Script(httpx.Response(200, json=completion()), httpx.Response(400, text="too long"))
    client, _ = make_client(script)
    trace = Trace()
    counted = CountingClient(client, trace)

    async def two_calls():
        await counted.complete(REQUEST)
        await counted.complete(REQUEST)

    with pytest.raises(ModelAPIError):
        asyncio.run(two_calls())
    assert (counted.calls, counted.failed_calls) == (2, 1)
    assert (counted.usage.input_tokens, counted.usage.output_tokens) == (10, 3)
    assert [event.kind for event in trace.events] == ["request", "response", "request", "api_error"]


def _without_usage():
    body = completion()
    del body["usage"]
    return body


def test_a_reply_without_usage_is_counted_as_missing_never_as_zero_tokens():
    script = Script(
        httpx.Response(200, json=_without_usage()), httpx.Response(200, json=completion())
    )
    client, _ = make_client(script)
    counted = CountingClient(client, Trace())
    asyncio.run(counted.complete(REQUEST))
    asyncio.run(counted.complete(REQUEST))
    usage = counted.usage
    assert (usage.missing, usage.input_tokens, usage.output_tokens) == (1, 10, 3)


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": -5, "completion_tokens": 3},
        {"prompt_tokens": 10, "completion_tokens": "many"},
        {"prompt_tokens": 10, "completion_tokens": 2.5},
        {
            "prompt_tokens": 10,
            "completion_tokens": 3,
            "prompt_tokens_details": {"cached_tokens": 11},
        },
    ],
)
def test_usage_that_cannot_be_true_is_a_response_error(usage):
    script = Script(httpx.Response(200, json=completion(usage=usage)))
    client, _ = make_client(script, retries=0)
    with pytest.raises(ModelAPIError, match="usage"):
        complete(client)


def test_usage_on_a_reply_without_choices_is_a_response_error():
    body = {"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 3}}
    client, _ = make_client(Script(httpx.Response(200, json=body)), retries=0)
    with pytest.raises(ModelAPIError, match="not a chat completion"):
        complete(client)


def test_timeout_bounds_the_whole_request_not_each_read():
    async def dribble(request):
        await asyncio.sleep(5)  # a server that never finishes its body in time
        return httpx.Response(200, json=completion())

    client = OpenAICompatClient(
        "http://model.test/v1",
        connection=Connection(0.05, retry=RetryPolicy(max_retries=1, base_delay_s=0.01)),
        hooks=Hooks(httpx.MockTransport(dribble)),
    )
    began = time.perf_counter()
    with pytest.raises(ModelAPIError, match=r"within --timeout 0.05 s.*gave up after 2"):
        complete(client)
    assert time.perf_counter() - began < 1


def test_a_retry_after_beyond_the_cap_stops_the_call_instead_of_retrying_early():
    script = Script(httpx.Response(429, headers={"retry-after": "3600"}, json={}))
    client, delays = make_client(script)
    with pytest.raises(ModelAPIError, match="retry after 3600 s, beyond the 30 s") as info:
        complete(client)
    assert delays == [] and info.value.status == 429


def test_the_key_is_redacted_before_error_text_is_cut_short():
    padding = "x" * 290  # puts the key across the 300-character cut
    script = Script(httpx.Response(401, text=f"{padding}Authorization: Bearer {KEY}"))
    client, _ = make_client(script)
    with pytest.raises(ModelAPIError) as info:
        complete(client)
    assert KEY[:8] not in str(info.value) and KEY[-8:] not in str(info.value)
    garbage = Script(*[httpx.Response(200, text=f"{padding}{KEY} oops") for _ in range(2)])
    client, _ = make_client(garbage, retries=1)
    with pytest.raises(ModelAPIError) as info:
        complete(client)
    assert KEY[:8] not in str(info.value)


def test_timeout_must_be_positive():
    result = CliRunner().invoke(main, ["run", "--arm", "direct", "--timeout", "0"])
    assert result.exit_code == 2 and "--timeout" in result.output


def test_content_given_as_a_list_of_parts_is_read_as_text():
    parts = [
        {"type": "text", "text": "8"},
        {"type": "refusal", "refusal": "not text"},
        {"type": "text", "text": "4"},
    ]
    client, _ = make_client(Script(httpx.Response(200, json=completion(parts))))
    assert complete(client).message.content == "84"


def _body(**message):
    return {"choices": [{"message": {"role": "assistant", **message}}]}


CALL = {"id": "c", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}


@pytest.mark.parametrize(
    ("body", "cause"),
    [
        ([completion()], "the body is a list of 1, not an object"),
        ({"choices": {"message": {}}}, "choices is an object, not a list"),
        ({"choices": ["hi"]}, "choices[0] is the text 'hi', not an object"),
        ({"choices": [{"message": ["hi"]}]}, "choices[0].message is a list of 1, not an object"),
        ({"choices": [{"text": "hi"}]}, "choices[0].message is missing or null"),
        (_body(content=84), "message.content is the number 84, not text or a list of parts"),
        (_body(content=["84"]), "message.content[0] is the text '84', not an object"),
        (_body(content=[{"type": "text"}]), "message.content[0].text is missing or null"),
        (_body(tool_calls=CALL), "message.tool_calls is an object, not a list"),
        (_body(tool_calls=["lookup"]), "message.tool_calls[0] is the text 'lookup'"),
        (_body(tool_calls=[{"id": "c"}]), "message.tool_calls[0].function is missing or null"),
        (
            _body(tool_calls=[{"function": {"arguments": "{}"}}]),
            "message.tool_calls[0].function.name is missing or null, not a tool's name",
        ),
        (
            _body(tool_calls=[{"function": {"name": "calc", "arguments": ["1+1"]}}]),
            "message.tool_calls[0].function.arguments is a list of 1, not JSON text",
        ),
        (_body(tool_calls=[{**CALL, "id": 7}]), "message.tool_calls[0].id is the number 7"),
        (
            {"choices": [{"message": {"content": "hi"}, "finish_reason": ["stop"]}]},
            "choices[0].finish_reason is a list of 1, not text",
        ),
        ({**completion(), "usage": [10, 3]}, "usage is a list of 2, not an object"),
        (
            {**completion(), "usage": {"prompt_tokens": 1, "prompt_tokens_details": "none"}},
            "usage.prompt_tokens_details is the text 'none', not an object",
        ),
    ],
)
def test_a_reply_of_the_wrong_shape_is_an_api_error_naming_what_is_wrong(body, cause):
    script = Script(*[httpx.Response(200, json=body) for _ in range(2)])
    client, _ = make_client(script, retries=1)
    with pytest.raises(ModelAPIError) as info:
        complete(client)
    message = str(info.value)
    assert f"not a chat completion ({cause}" in message and "gave up after 2 attempts" in message
    assert (info.value.status, info.value.retries, len(script.requests)) == (200, 1, 2)


def test_a_body_that_does_not_decode_is_a_retried_transport_failure():
    script = Script(
        httpx.Response(
            200, headers={"content-encoding": "gzip"}, stream=httpx.ByteStream(b"not gzip")
        ),
        httpx.Response(200, json=completion()),
    )
    client, _ = make_client(script)
    assert complete(client).retries == 1


@pytest.mark.parametrize(
    ("raw", "failure"),
    [
        (b"NOT HTTP\r\n\r\n", 'RemoteProtocolError: ClientResponseError: 400, message="Bad status'),
        (
            b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n",
            "ReadError: ClientPayloadError: Response payload is not completed",
        ),
        (b"", "ReadError: ServerDisconnectedError: Server disconnected"),
    ],
)
def test_a_reply_that_breaks_http_is_a_transport_failure_named_after_its_cause(raw, failure):
    async def reply(reader, writer):
        await reader.read(1)
        writer.write(raw)
        await writer.drain()
        writer.close()

    async def call():
        server = await asyncio.start_server(reply, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        retry = RetryPolicy(max_retries=1, base_delay_s=0.01)
        try:
            async with OpenAICompatClient(
                f"http://127.0.0.1:{port}/v1", connection=Connection(retry=retry)
            ) as client:
                await client.complete(REQUEST)
        finally:
            server.close()
            await server.wait_closed()

    with pytest.raises(ModelAPIError) as info:
        asyncio.run(call())
    assert failure in str(info.value) and "gave up after 2 attempts" in str(info.value)
    assert (info.value.status, info.value.retries) == (None, 1)


def test_a_429_halves_the_clients_concurrency_and_successes_raise_it_again():
    script = Script(
        httpx.Response(429, json={}),
        *[httpx.Response(200, json=completion()) for _ in range(40)],
    )
    client, _ = make_client(script)
    complete(client)
    assert (client.concurrency.cuts, client.concurrency.lowest) == (1, 32)
    for _ in range(39):
        complete(client)
    assert 32 < client.concurrency.limit <= 64


def test_the_run_command_takes_a_rate_limit_and_refuses_a_silly_one():
    result = CliRunner().invoke(main, ["run", "--arm", "direct", "--rate-limit", "0"])
    assert result.exit_code == 2 and "--rate-limit" in result.output


@pytest.mark.parametrize(
    "usage",
    [
        {"total_tokens": 100},
        {"completion_tokens": 5},
        {"prompt_tokens": 10},
        {"prompt_tokens": 10, "completion_tokens": None},
        {"prompt_tokens": None, "completion_tokens": 3, "total_tokens": 13},
    ],
)
def test_usage_without_input_or_output_tokens_is_missing_never_zero(usage):
    client, _ = make_client(Script(httpx.Response(200, json=completion(usage=usage))))
    assert complete(client).usage == Usage(missing=1)


def test_usage_without_cached_tokens_counts_none_cached():
    usage = {"prompt_tokens": 10, "completion_tokens": 3, "prompt_tokens_details": {}}
    client, _ = make_client(Script(httpx.Response(200, json=completion(usage=usage))))
    assert complete(client).usage == Usage(10, 3, 0)


def test_usage_in_whole_number_floats_is_read_as_whole_numbers():
    usage = {
        "prompt_tokens": 10.0,
        "completion_tokens": 3.0,
        "prompt_tokens_details": {"cached_tokens": 4.0},
    }
    client, _ = make_client(Script(httpx.Response(200, json=completion(usage=usage))))
    read = complete(client).usage
    assert read == Usage(10, 3, 4)
    assert all(type(n) is int for n in (read.input_tokens, read.output_tokens, read.cached_tokens))


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": True, "completion_tokens": 3},
        {"prompt_tokens": 10, "completion_tokens": -1.0},
        {"prompt_tokens": 10, "completion_tokens": float("inf")},
        {"prompt_tokens": "10", "completion_tokens": 3},
        {"completion_tokens": 2.5},
        {
            "prompt_tokens": 10,
            "completion_tokens": 3,
            "prompt_tokens_details": {"cached_tokens": "4"},
        },
        {
            "prompt_tokens": 10,
            "completion_tokens": 3,
            "prompt_tokens_details": {"cached_tokens": 0.5},
        },
    ],
)
def test_usage_of_the_wrong_kind_stays_a_response_error(usage):
    body = json.dumps(completion(usage=usage))  # json= would refuse the infinity
    client, _ = make_client(Script(httpx.Response(200, text=body)), retries=0)
    with pytest.raises(ModelAPIError, match="usage"):
        complete(client)


ODD_KEY = 'sk-proj/ab"cd\\ef/0123456789'


@pytest.mark.parametrize(
    "echo",
    [
        json.dumps({"error": f"bad key {ODD_KEY}"}),
        json.dumps({"error": f"bad key {ODD_KEY}"}).replace("/", "\\/"),
        f"bad key {ODD_KEY[:13]}...",
        f"bad key ...{ODD_KEY[12:]}",
        f"bad key {ODD_KEY[5:17]} and {json.dumps(ODD_KEY)[9:25]}",
    ],
)
def test_a_key_echoed_escaped_or_in_part_is_redacted(echo):
    script = Script(httpx.Response(401, text=echo))
    client = OpenAICompatClient(
        "http://model.test/v1", ODD_KEY, hooks=Hooks(httpx.MockTransport(script))
    )
    with pytest.raises(ModelAPIError) as info:
        complete(client)
    message = str(info.value)
    escaped = json.dumps(ODD_KEY)[1:-1]
    forms = (ODD_KEY, escaped, escaped.replace("/", "\\/"))
    assert "[redacted]" in message
    assert not [run for form in forms for run in runs_of_eight(form) if run in message]


def test_a_key_echoed_in_part_near_the_cut_is_redacted_whole():
    script = Script(httpx.Response(401, text=f"{'x' * 290}{KEY[4:20]}"))
    client, _ = make_client(script)
    with pytest.raises(ModelAPIError) as info:
        complete(client)
    message = str(info.value)
    assert "[redacted]" in message and KEY[4:11] not in message and KEY[13:20] not in message


USER_URL = "http://alice:hunter2@model.test/v1/"
BASIC = base64.b64encode(b"alice:hunter2").decode()


def test_credentials_in_the_base_url_are_sent_as_basic_auth_never_in_the_url():
    script = Script(httpx.Response(200, json=completion()))
    client = OpenAICompatClient(USER_URL, hooks=Hooks(httpx.MockTransport(script)))
    complete(client)
    sent = script.requests[0]
    assert str(sent.url) == "http://model.test/v1/chat/completions"
    assert sent.headers["authorization"] == f"Basic {BASIC}"
    assert client.base_url == "http://model.test/v1"
    assert "hunter2" not in repr(vars(client))


def test_an_api_key_wins_over_credentials_in_the_base_url():
    script = Script(httpx.Response(200, json=completion()))
    client = OpenAICompatClient(USER_URL, KEY, hooks=Hooks(httpx.MockTransport(script)))
    complete(client)
    sent = script.requests[0]
    assert str(sent.url) == "http://model.test/v1/chat/completions"
    assert sent.headers.get_list("authorization") == [f"Bearer {KEY}"]


def test_percent_escaped_credentials_are_sent_as_written():
    script = Script(httpx.Response(200, json=completion()))
    url = "http://al%20ice:p%40ss%3Aword@model.test/v1"
    complete(OpenAICompatClient(url, hooks=Hooks(httpx.MockTransport(script))))
    expected = base64.b64encode(b"al ice:p@ss:word").decode()
    assert script.requests[0].headers["authorization"] == f"Basic {expected}"


@pytest.mark.parametrize(
    "echo",
    [
        "who is alice:hunter2?",
        "password hunter2 refused",
        f"Authorization: Basic {BASIC}",
        f"half a header: Basic {BASIC[:10]}",
        json.dumps({"auth": "alice:hunter2"}),
    ],
)
def test_the_password_its_pair_and_its_base64_are_redacted_from_errors(echo):
    script = Script(*[httpx.Response(500, text=echo) for _ in range(2)])
    client = OpenAICompatClient(
        USER_URL,
        connection=Connection(retry=RetryPolicy(max_retries=1, base_delay_s=0.001)),
        hooks=Hooks(httpx.MockTransport(script)),
    )
    with pytest.raises(ModelAPIError) as info:
        complete(client)
    message = str(info.value)
    assert "hunter2" not in message and BASIC[:8] not in message and "[redacted]" in message


def test_credentials_in_the_url_and_a_key_reach_a_real_server():
    async def call(url, key):
        async with OpenAICompatClient(url, key) as client:
            return await client.complete(REQUEST)

    with FakeServer() as server:
        url = server.base_url.replace("http://", "http://alice:hunter2@")
        assert asyncio.run(call(url, KEY)).message.content == "84"
        assert asyncio.run(call(url, None)).message.content == "84"


@pytest.mark.parametrize(
    "failure",
    [ValueError(f"bad header value {KEY!r}"), httpx.InvalidURL("no"), TypeError("odd")],
)
def test_any_failure_of_the_transport_is_an_api_error_naming_it(failure):
    script = Script(failure, failure)
    client, _ = make_client(script)
    with pytest.raises(ModelAPIError) as info:
        complete(client)
    message = str(info.value)
    assert type(failure).__name__ in message and KEY not in message
    assert len(script.requests) == 1 and info.value.status is None


@pytest.mark.parametrize("key", ["sk-line\r\nbreak-0123", "sk-\u00e9t\u00e9-0123456"])
def test_a_key_the_real_transport_cannot_send_is_an_api_error(key):
    async def call(url):
        async with OpenAICompatClient(url, key, Connection(max_retries=0)) as client:
            return await client.complete(REQUEST)

    with FakeServer() as server, pytest.raises(ModelAPIError) as info:
        asyncio.run(call(server.base_url))
    assert "sk-" not in str(info.value) and server.served.requests == 0


REQUEST_BODY = {"model": "m", "messages": [{"role": "user", "content": "q"}]}


def test_a_restarted_loopback_server_waits_again():
    server = FaultServer({1: "hang", 2: "hang"}, hang_s=0.3)
    server.start()
    server.stop()
    with server:
        began = time.perf_counter()
        response = httpx.post(f"{server.base_url}/chat/completions", json=REQUEST_BODY)
        assert response.status_code == 504 and time.perf_counter() - began >= 0.25


@pytest.mark.parametrize("key", [None, KEY])
def test_run_with_credentials_in_the_base_url_records_no_password(tmp_path, key):
    out = tmp_path / "r"
    with FakeServer() as server:
        url = server.base_url.replace("http://", "http://alice:hunter2@")
        result = CliRunner().invoke(
            main,
            ["run", "--base-url", url, "--model", "m", "--arm", "direct", "--out", str(out)],
            env={"LOOPBENCH_API_KEY": key, "OPENAI_API_KEY": None},
            catch_exceptions=False,
        )
        assert result.exit_code == 0, result.output
        assert server.served.completions == 12
    records = read_records(out)
    assert len(records) == 12
    assert not [r.status for r in records if r.status in ("pattern_error", "api_error")]
    for path in out.rglob("*"):
        if path.is_file():
            text = path.read_bytes()
            assert b"hunter2" not in text and BASIC.encode() not in text, path
    assert "hunter2" not in result.output


def test_the_usage_an_unusable_reply_reported_is_counted_all_the_same():
    unusable = {"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 2}}
    script = Script(httpx.Response(200, json=unusable), httpx.Response(200, json=completion()))
    client, _ = make_client(script)
    response = complete(client)  # retried, then a good reply: both were billed
    assert (response.usage.input_tokens, response.usage.output_tokens) == (17, 5)
    failing = Script(*[httpx.Response(200, json=unusable) for _ in range(2)])
    client, _ = make_client(failing, retries=1)
    counted = CountingClient(client, Trace())
    with pytest.raises(ModelAPIError):
        asyncio.run(counted.complete(REQUEST))
    assert (counted.usage.input_tokens, counted.usage.output_tokens) == (14, 4)


def test_a_key_or_url_token_a_model_repeats_is_redacted_from_its_reply_and_tool_calls():
    token = "tok-0123456789ABCDEFGH"
    arguments = json.dumps(
        {"code": f"print('{KEY}', '{base64.b64encode(token.encode()).decode()}')"}
    )
    call = {"id": "c1", "type": "function", "function": {"name": "run", "arguments": arguments}}
    script = Script(
        httpx.Response(200, json=completion(f"the key is {KEY.upper()}, the token {token}", [call]))
    )
    client = OpenAICompatClient(
        f"http://{token}@model.test/v1", KEY, hooks=Hooks(httpx.MockTransport(script))
    )
    reply = complete(client).message
    assert reply.content == "the key is [redacted], the token [redacted]"
    code = json.loads(reply.tool_calls[0].arguments)["code"]
    # base64's last character also holds bits of what follows: left, like its padding.
    assert code.startswith("print('[redacted]', '[redacted]") and len(code) <= 36


def runs_on_one_slot(folder, runs, arm, reply_after_s):
    """``runs`` runs of ``arm`` (one per depot task) in flight at once, on a client of one
    request slot whose endpoint replies after ``reply_after_s``; how long they took."""

    async def answer(request):
        await asyncio.sleep(reply_after_s)
        return httpx.Response(200, json=completion("Paris"))

    async def scenario():
        taskset = load_taskset("depot")
        some = replace(taskset, tasks=taskset.tasks[:runs])
        client = OpenAICompatClient(
            "http://model.test/v1",
            connection=Connection(concurrency=1),
            hooks=Hooks(httpx.MockTransport(answer)),
        )
        grid = Grid(some, parse_arms([arm]), 1, "m")
        with ResultsFolder.open(folder, {"task_set": some.name, "model": "m"}) as opened:
            async with client:
                began = time.perf_counter()
                await run_grid(grid, client, opened, RunSettings(runs_in_flight=runs))
                return time.perf_counter() - began

    return asyncio.run(scenario())


def test_a_runs_latency_leaves_out_its_wait_for_a_request_slot(tmp_path):
    """Two runs in flight, one request slot: the second run waits for the first's reply
    before its own request is sent. The wait is loopbench's queue, not the run's latency."""
    took = runs_on_one_slot(tmp_path, 2, "direct", reply_after_s=0.3)
    latencies = sorted(record.latency_s for record in read_records(tmp_path))
    assert took >= 0.6  # one after the other: the second did wait
    assert len(latencies) == 2 and all(0.25 < latency < 0.5 for latency in latencies)


def test_a_step_timeout_does_not_count_the_wait_for_a_request_slot(tmp_path):
    """Four runs in flight, one request slot, calls of 0.2 s and a step timeout of 0.5 s:
    the last run waits 0.6 s for the slot, and its call still takes only 0.2 s."""
    runs_on_one_slot(tmp_path, 4, "direct:step_timeout_s=0.5", reply_after_s=0.2)
    assert [record.status for record in read_records(tmp_path)] == ["answered"] * 4
