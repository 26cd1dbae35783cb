"""The batching client on Anthropic's Message Batches (the loopback fake): one batch a
round, errored lines retried by their error's type, expired and cancelled ones sent
again, a results_url on another host not followed, a batch found again after a kill."""

import asyncio
import json

import httpx
import pytest

from loopbench.harness.api import Experiment
from loopbench.harness.fakes.anthropic_batch_server import AnthropicBatchServer, BatchScript
from loopbench.harness.fakes.anthropic_server import THINKING
from loopbench.harness.fakes.fake_server import Reply, default_responder
from loopbench.harness.models.anthropic import AnthropicClient
from loopbench.harness.models.anthropic_batches import AnthropicBatches
from loopbench.harness.models.batch_journal import BatchJournal
from loopbench.harness.models.batching import BATCH_RUN, BatchingClient, BatchSettings, _digest
from loopbench.harness.models.http_client import Connection
from loopbench.harness.models.types import Message, ModelAPIError, ModelRequest
from loopbench.harness.results.reading import read_records
from tests.harness.test_anthropic_runs import Thinking

KEY = "sk-ant-client-0123456789abcdefghij"
FAST = BatchSettings(poll_s=0.001, gather_s=0.01)
QUESTIONS = [f"What is {n} + 1?" for n in range(5)]


def request(question: str) -> ModelRequest:
    return ModelRequest("claude-fake", (Message("user", question),), system="Say 'Answer:'.")


async def ask(server, questions, retries=3, settings=FAST, transport=None, most=None):
    """Each question's reply or error, asked at once through one batching client (``most``
    lines a batch at most, if given)."""
    http = AnthropicClient(server.base_url, KEY, Connection(max_retries=retries))
    api = AnthropicBatches(server.base_url, KEY, transport=transport)
    if most is not None:
        api.max_lines = most
    async with http, BatchingClient(http, api, settings) as client:

        async def one(i, question):
            BATCH_RUN.set(f"run{i}")
            try:
                return await client.complete(request(question))
            except ModelAPIError as exc:
                return exc

        return await asyncio.gather(*(one(i, q) for i, q in enumerate(questions)))


def test_requests_go_as_one_message_batch_and_come_back_with_its_usage():
    with AnthropicBatchServer(api_key=KEY, script=BatchScript(pending_polls=3)) as server:
        replies = asyncio.run(ask(server, QUESTIONS))
        assert server.created == 1 and len(server.lines) == len(QUESTIONS)
        assert server.batches["msgbatch_0001"].polls == 4
        served = server.served
    assert all(r.message.content.endswith("Answer: 84") for r in replies)
    assert all(r.batched and not r.from_cache for r in replies)
    assert sum(r.usage.input_tokens for r in replies) == served.input_tokens
    assert sum(r.usage.output_tokens for r in replies) == served.output_tokens


def test_a_round_of_more_requests_than_a_batch_holds_goes_as_several_batches():
    with AnthropicBatchServer(api_key=KEY) as server:
        replies = asyncio.run(ask(server, QUESTIONS, most=2))
        sizes = [len(b.requests) for b in server.batches.values()]
    assert sizes == [2, 2, 1]
    assert all(not isinstance(r, Exception) and r.retries == 0 for r in replies)


@pytest.mark.parametrize(
    "script",
    [BatchScript(expire=1), BatchScript(cancel=1), BatchScript(expire_lines=2, fail_lines=2)],
    ids=["expired", "cancelled", "partly-failed"],
)
def test_requests_a_batch_did_not_answer_are_sent_again_and_none_is_lost(script):
    with AnthropicBatchServer(api_key=KEY, script=script) as server:
        replies = asyncio.run(ask(server, QUESTIONS))
        assert server.created == 2
        assert server.served.requests == len(QUESTIONS)  # each answered once
        first = server.batches["msgbatch_0001"]
        assert first.status == "ended"  # a cancelled one was "canceling" on a poll first
        assert (first.cancel_initiated_at is not None) == bool(script.cancel)
    assert all(not isinstance(r, Exception) and r.batched for r in replies)


def test_requests_expired_past_the_retry_limit_are_the_runs_api_errors():
    with AnthropicBatchServer(api_key=KEY, script=BatchScript(expire=10)) as server:
        replies = asyncio.run(ask(server, QUESTIONS, retries=1))
        assert server.created == 2 and server.served.requests == 0
    assert all(isinstance(r, ModelAPIError) for r in replies)
    assert all("expired" in str(r) and "gave up after 2 batches" in str(r) for r in replies)


def test_an_invalid_request_errored_in_a_batch_is_the_runs_api_error_at_once():
    def refusing(body):
        asked = body["messages"][-1]["content"]
        return Reply(status=400) if "3 + 1" in asked else default_responder(body)

    with AnthropicBatchServer(responder=refusing, script=BatchScript()) as server:
        replies = asyncio.run(ask(server, QUESTIONS))
        assert server.created == 1
    refused = [r for r in replies if isinstance(r, ModelAPIError)]
    assert len(refused) == 1 and refused[0].status == 400
    assert "errored: invalid_request_error" in str(refused[0])


def test_a_results_url_on_another_host_is_not_followed_nor_sent_the_key():
    with AnthropicBatchServer() as elsewhere:
        script = BatchScript(results_host=f"http://localhost:{elsewhere.port}")
        with AnthropicBatchServer(api_key=KEY, script=script) as server:
            replies = asyncio.run(ask(server, QUESTIONS[:2]))
        assert elsewhere.batch_keys == []  # never asked, so never given the key
    assert all(not isinstance(r, Exception) for r in replies)


def test_a_failing_call_is_said_without_the_key():
    def echoing(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, text=f"bad key {request.headers['x-api-key']}")

    with AnthropicBatchServer() as server:
        replies = asyncio.run(
            ask(server, QUESTIONS[:2], retries=0, transport=httpx.MockTransport(echoing))
        )
    assert all(isinstance(r, ModelAPIError) and "HTTP 401" in str(r) for r in replies)
    assert all(KEY not in str(r) for r in replies)


def unjournal_created(journal):
    """The journal as if the kill came between making the batch and journaling its id."""
    lines = journal.read_text().splitlines()
    journal.write_text("".join(f"{line}\n" for line in lines if '"created"' not in line))


def test_a_batch_never_journaled_as_made_is_found_among_the_endpoints_batches(tmp_path):
    journal = tmp_path / "batches.jsonl"
    settings = BatchSettings(poll_s=0.001, gather_s=0.01, journal=journal)
    with AnthropicBatchServer(api_key=KEY) as server:
        first = asyncio.run(ask(server, QUESTIONS, settings=settings))
        unjournal_created(journal)
        again = asyncio.run(ask(server, QUESTIONS, settings=settings))
        assert server.created == 1 and len(server.lines) == len(QUESTIONS)
    assert [r.message for r in again] == [r.message for r in first]
    assert [r.usage for r in again] == [r.usage for r in first]


def test_an_ended_batch_that_does_not_hold_the_journaled_requests_is_not_taken(tmp_path):
    """A batch of as many requests made at that time, but not of these: sent afresh."""
    journal = tmp_path / "batches.jsonl"
    settings = BatchSettings(poll_s=0.001, gather_s=0.01, journal=journal)
    with AnthropicBatchServer(api_key=KEY) as server:
        asyncio.run(ask(server, QUESTIONS, settings=settings))
        unjournal_created(journal)
        entries = [json.loads(line) for line in journal.read_text().splitlines()]
        for entry in entries:
            if entry["state"] == "submitting":
                entry["requests"] = {f"other-{c}": v for c, v in entry["requests"].items()}
        journal.write_text("".join(json.dumps(e) + "\n" for e in entries))
        assert all(j.batch_id is None for j in BatchJournal(journal).sent().values())
        replies = asyncio.run(ask(server, QUESTIONS, settings=settings))
        assert server.created == 2 and server.served.requests == 2 * len(QUESTIONS)
    # Sent afresh at once, not first awaited from the other batch and then sent again.
    assert all(not isinstance(r, Exception) and r.retries == 0 for r in replies)


def test_thinking_comes_back_from_a_batch_and_goes_back_within_a_tool_loop(tmp_path):
    """The fake errors a request whose tool loop lost its signed thinking block, so every
    run answered means each batched reply's thinking was kept and sent back."""

    async def grid(url):
        http = AnthropicClient(url, KEY)
        api = AnthropicBatches(url, KEY)
        settings = BatchSettings(poll_s=0.005, gather_s=0.05)
        async with http, BatchingClient(http, api, settings) as client:
            experiment = Experiment("depot", ["react", "rewoo"], limit=2, out=tmp_path / "o")
            await experiment.run_async(Thinking(client))

    with AnthropicBatchServer(api_key=KEY) as server:
        asyncio.run(grid(server.base_url))
        bodies = [line["params"] for line in server.lines]
    records = read_records(tmp_path / "o")
    assert {r.status for r in records} == {"answered"}
    assert all(r.batched_calls == r.turns for r in records)
    assert any(r.pattern == "react" and r.turns > 1 for r in records)
    later = [b for b in bodies if "thinking" in b and len(b["messages"]) > 1]
    sent_back = [
        block
        for body in later
        for turn in body["messages"]
        if turn["role"] == "assistant" and isinstance(turn["content"], list)
        for block in turn["content"]
        if block.get("type") == "thinking"
    ]
    assert sent_back and all(block["thinking"] == THINKING for block in sent_back)


def test_a_batch_journaled_as_another_submissions_is_not_taken_for_one_never_made(tmp_path):
    """Journaled: a pending batch of two requests, made; and a submission of two others
    that was never made. The pending batch is as large and as recent, but it is known to
    be the other's: the two requests are sent afresh, not awaited from it."""
    journal = BatchJournal(tmp_path / "batches.jsonl")
    script = BatchScript(pending_polls=10**9)
    with AnthropicBatchServer(api_key=KEY, script=script) as server:

        async def pending_batch():
            async with AnthropicBatches(server.base_url, KEY) as api:
                lines = [api.line(c, {"model": "m", "max_tokens": 9}) for c in ("a", "b")]
                return await api.create("sub_other", lines, "24h")

        made = asyncio.run(pending_batch())
        journal.submitting("sub_other", {"a": ("x", "da"), "b": ("y", "db")}, "submission")
        journal.created("sub_other", made, "submission")
        http = AnthropicClient(server.base_url, KEY)
        held = {
            f"line-{i}": (f"run{i}", digest(f"run{i}", http.wire_body(request(q))))
            for i, q in enumerate(QUESTIONS[:2])
        }
        journal.submitting("sub_never_made", held, "submission")
        script.pending_polls = 0
        settings = BatchSettings(poll_s=0.001, gather_s=0.01, journal=journal.path)
        replies = asyncio.run(ask(server, QUESTIONS[:2], settings=settings))
        assert server.created == 2 and server.batches[made].polls == 0
    assert all(not isinstance(r, Exception) and r.retries == 0 for r in replies)


def digest(run, body):
    """The digest the batching client gives a run's first request of this body."""
    same = _digest(run + "\n" + json.dumps(body, sort_keys=True))
    return _digest(f"{same}#0")
