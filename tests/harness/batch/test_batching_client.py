"""The batching client against the fake Batch API: rounds, lines that fail or expire sent
again in the next round up to the retry limit, then the run's api_error; none lost."""

import asyncio

import httpx
import pytest

from loopbench.harness.fakes.batch_server import BatchScript, FakeBatchServer
from loopbench.harness.fakes.fake_server import Reply, default_responder
from loopbench.harness.models.batch_api import BatchApi
from loopbench.harness.models.batch_journal import BatchJournal
from loopbench.harness.models.batching import BATCH_RUN, BatchingClient, BatchSettings
from loopbench.harness.models.openai_compat import Connection, OpenAICompatClient
from loopbench.harness.models.types import Message, ModelAPIError, ModelRequest

FAST = BatchSettings(poll_s=0.001, gather_s=0.01)


def request(question: str) -> ModelRequest:
    return ModelRequest("fake", (Message("user", question),), system="Say 'Answer:'.")


async def ask(server, questions, retries=3, settings=FAST, transport=None):
    """Each question's reply or error, asked at once through one batching client."""
    http = OpenAICompatClient(server.base_url, "k", Connection(max_retries=retries))
    api = BatchApi(server.base_url, "k", transport=transport)
    async with http, BatchingClient(http, api, settings) as client:

        async def one(i, question):
            BATCH_RUN.set(f"run{i}")
            try:
                return await client.complete(request(question))
            except ModelAPIError as exc:
                return exc

        return await asyncio.gather(*(one(i, q) for i, q in enumerate(questions)))


QUESTIONS = [f"What is {n} + 1?" for n in range(5)]


def test_requests_go_as_one_batch_and_come_back_with_its_usage():
    with FakeBatchServer(script=BatchScript(pending_polls=3)) as server:
        replies = asyncio.run(ask(server, QUESTIONS))
        assert server.created == 1 and len(server.lines) == len(QUESTIONS)
        served = server.served
    assert all(r.message.content.endswith("Answer: 84") for r in replies)
    assert all(r.batched and not r.from_cache for r in replies)
    assert sum(r.usage.input_tokens for r in replies) == served.prompt_tokens
    assert sum(r.usage.output_tokens for r in replies) == served.completion_tokens


def test_an_expired_batch_is_sent_again_in_the_next_round():
    with FakeBatchServer(script=BatchScript(expire=1)) as server:
        replies = asyncio.run(ask(server, QUESTIONS))
        assert server.created == 2
        assert server.served.requests == len(QUESTIONS)  # answered once, in the second
    assert all(not isinstance(r, Exception) and r.batched for r in replies)


def test_lines_a_batch_failed_are_sent_again_and_none_is_lost():
    with FakeBatchServer(script=BatchScript(fail_lines=2)) as server:
        replies = asyncio.run(ask(server, QUESTIONS))
        assert server.created == 2
        assert server.batches["batch_2"].counts["total"] == 2
        assert server.served.requests == len(QUESTIONS)
    assert all(not isinstance(r, Exception) for r in replies)


def test_a_batch_that_failed_whole_is_sent_again():
    with FakeBatchServer(script=BatchScript(fail_batches=1)) as server:
        replies = asyncio.run(ask(server, QUESTIONS))
        assert server.created == 2
    assert all(not isinstance(r, Exception) for r in replies)


def test_requests_expired_past_the_retry_limit_are_the_runs_api_errors():
    with FakeBatchServer(script=BatchScript(expire=10)) as server:
        replies = asyncio.run(ask(server, QUESTIONS, retries=1))
        assert server.created == 2  # the first try and one retry
        assert server.served.requests == 0
    assert all(isinstance(r, ModelAPIError) for r in replies)
    assert all("batch_expired" in str(r) and "gave up after 2 batches" in str(r) for r in replies)


def test_a_status_not_retried_is_the_runs_api_error_at_once():
    def refusing(body):
        return (
            Reply(status=400)
            if "3 + 1" in body["messages"][-1]["content"]
            else default_responder(body)
        )

    with FakeBatchServer(responder=refusing) as server:
        replies = asyncio.run(ask(server, QUESTIONS))
        assert server.created == 1
    refused = [r for r in replies if isinstance(r, ModelAPIError)]
    assert len(refused) == 1 and refused[0].status == 400 and "HTTP 400" in str(refused[0])


def test_polls_that_keep_failing_end_in_api_errors_not_a_hang():
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/files"):
            return httpx.Response(200, json={"id": "file-1"})
        if request.method == "POST":
            return httpx.Response(200, json={"id": "batch_1", "status": "validating"})
        return httpx.Response(503, text="unavailable")

    with FakeBatchServer() as server:
        replies = asyncio.run(
            asyncio.wait_for(
                ask(server, QUESTIONS[:2], retries=2, transport=httpx.MockTransport(handler)), 30
            )
        )
    assert all(isinstance(r, ModelAPIError) and "HTTP 503" in str(r) for r in replies)


def test_the_journal_holds_a_batch_before_it_is_made(tmp_path):
    journal = tmp_path / "batches.jsonl"

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/files"):
            return httpx.Response(200, json={"id": "file-7"})
        return httpx.Response(400, json={"error": {"message": "no"}})

    settings = BatchSettings(poll_s=0.001, gather_s=0.01, journal=journal)
    with FakeBatchServer() as server:
        replies = asyncio.run(
            ask(server, QUESTIONS[:2], retries=0, settings=settings,
                transport=httpx.MockTransport(handler))
        )  # fmt: skip
    assert all(isinstance(r, ModelAPIError) for r in replies)
    sent = BatchJournal(journal).sent()
    assert {j.submission for j in sent.values()} == {"file-7"} and len(sent) == 2
    assert all(j.batch_id is None for j in sent.values())


@pytest.mark.parametrize("cut", [True, False])
def test_a_journal_cut_short_is_read_to_its_last_whole_line(tmp_path, cut):
    journal = BatchJournal(tmp_path / "batches.jsonl")
    journal.submitting("file-1", {"a": ("run", "d1")})
    journal.created("file-1", "batch_1")
    if cut:
        with journal.path.open("a") as f:
            f.write('{"state": "submitting", "input_')
    sent = journal.sent()
    assert sent["d1"].batch_id == "batch_1" and sent["d1"].custom_id == "a"


def test_a_batch_journaled_as_submitting_is_found_among_the_endpoints_batches(tmp_path):
    """Killed between making the batch and journaling its id: the resumed client finds the
    batch made of the journaled file, and reads it rather than sending again."""
    journal = tmp_path / "batches.jsonl"
    settings = BatchSettings(poll_s=0.001, gather_s=0.01, journal=journal)
    with FakeBatchServer() as server:
        first = asyncio.run(ask(server, QUESTIONS, settings=settings))
        lines = journal.read_text().splitlines()
        journal.write_text("".join(f"{line}\n" for line in lines if '"created"' not in line))
        again = asyncio.run(ask(server, QUESTIONS, settings=settings))
        assert server.created == 1 and len(server.lines) == len(QUESTIONS)
    assert [r.message for r in again] == [r.message for r in first]
    assert [r.usage for r in again] == [r.usage for r in first]
