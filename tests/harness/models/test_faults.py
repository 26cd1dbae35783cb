"""Every fault an endpoint can throw, end to end through ``loopbench run``.

One grid runs react on one task per fault, plus clean tasks, all at once against a
fault server that fails the second call of each fault's run (and every retry of it),
so the first call's usage is there to be counted. A second grid, fault-free, is the
reference the clean runs must still equal.

Nothing here depends on how fast the machine is: the timeout is far above what a served
call takes on a busy machine, so only the faults that never finish reach it, and a hang
outlasts the timeout many times over, so what cuts a reply is never in doubt.
"""

import json
import re
import threading
import time
from dataclasses import dataclass

import httpx
import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.fakes.fake_server import question_index
from loopbench.harness.results.reading import read_records
from loopbench.harness.results.store import iter_traces
from tests.fakes.fault_server import FAULTS, FaultServer

SECRET = "sk-test-secret-never-written-0002"
TIMEOUT = 5.0
#: How long a hang (or a dribble) lasts unless cut: a reply that was not cut would take
#: this long, many times the timeout.
HANG_S = 60.0
MAX_RETRIES = 1
MAX_BACKOFF = 0.5  # the first back-off: RetryPolicy's base 0.5 s, jittered down
CLEAN = ["clean-1", "clean-2"]
GAVE_UP = f"(gave up after {MAX_RETRIES + 1} attempts)"


@dataclass(frozen=True)
class Expect:
    status: str
    #: Excerpts of the record's error; none means the record has no error.
    error: tuple[str, ...] = ()
    #: Requests the server saw for the faulted call: retried ones are tried again.
    attempts: int = 1
    turns: int = 2
    #: An excerpt of the failed tool result the model was shown, and read past.
    tool_result: str | None = None


def api_error(*error: str, attempts: int = MAX_RETRIES + 1) -> Expect:
    return Expect("api_error", error, attempts)


EXPECTED: dict[str, Expect] = {
    "429": api_error("HTTP 429: ", "rate limited", GAVE_UP),
    "429_retry_after": api_error("HTTP 429: ", GAVE_UP),
    "429_retry_after_date": api_error("HTTP 429: ", GAVE_UP),
    "500": api_error("HTTP 500: ", "internal server error", GAVE_UP),
    "502": api_error("HTTP 502: ", "bad gateway", GAVE_UP),
    "503": api_error("HTTP 503: ", "overloaded", GAVE_UP),
    "hang": api_error(f"no complete reply within --timeout {TIMEOUT:g} s {GAVE_UP}"),
    "dribble": api_error(f"no complete reply within --timeout {TIMEOUT:g} s {GAVE_UP}"),
    "reset": api_error("ReadError: ", "Connection reset by peer", GAVE_UP),
    "malformed_json": api_error("not a chat completion (the body is not JSON", GAVE_UP),
    "wrong_shape": api_error("(message.tool_calls is an object, not a list)", GAVE_UP),
    "no_usage": Expect("answered"),
    "length_tool_call": Expect("truncated", error=("hit the output-token limit", "were not run")),
    "arguments_not_json": Expect(
        "answered", turns=3, tool_result="the arguments to lookup are not valid JSON"
    ),
    "unknown_tool": Expect("answered", turns=3, tool_result="there is no tool named 'teleport'"),
    "content_parts": Expect("answered"),
    "context_overflow": api_error("HTTP 400: ", "maximum context length is 4096", attempts=1),
    "401": api_error("HTTP 401: ", "Incorrect API key provided: [redacted]", attempts=1),
}


def test_every_fault_is_expected():
    assert set(EXPECTED) == set(FAULTS)


def question(task_id):
    return f"What is 80 + 4? (case {task_id})"


def case_of(body):
    """The task a request belongs to, and how many replies its run has had."""
    messages = body["messages"]
    start = question_index(messages)
    turn = sum(m["role"] == "assistant" for m in messages[start:])
    return re.search(r"\(case (\S+)\)", messages[start]["content"])[1], turn


def fail_second_calls(n, body):
    task_id, turn = case_of(body)
    return task_id if task_id in FAULTS and turn == 1 else None


@dataclass
class Grid:
    records: dict  # task id -> RunRecord
    traces: dict  # run id -> events
    hits: dict  # task id -> the server's hits for that run
    output: str
    folder: object
    order: list  # task ids, in the order their runs were recorded (as each ended)


def run_grid(tmp, server):
    tasks = tmp / "tasks"
    tasks.mkdir()
    (tasks / "taskset.toml").write_text('name = "faults"\ntools = ["lookup", "calc"]\n')
    (tasks / "encyclopedia.json").write_text(json.dumps({"entries": {"Paris": "A city."}}))
    lines = [
        json.dumps({"id": t, "question": question(t), "expected": {"numbers": [84]}})
        for t in [*FAULTS, *CLEAN]
    ]
    (tasks / "tasks.jsonl").write_text("\n".join(lines) + "\n")
    out = tmp / "out"
    args = [
        *("run", "--tasks", str(tasks), "--arm", "react", "--model", "fake", "--quiet"),
        *("--base-url", server.base_url, "--out", str(out), "--concurrency", "32"),
        *("--timeout", str(TIMEOUT), "--max-retries", str(MAX_RETRIES)),
    ]
    result = CliRunner().invoke(
        main, args, env={"LOOPBENCH_API_KEY": SECRET}, catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    hits = {}
    for hit in server.hits:
        hits.setdefault(case_of(hit.body)[0], []).append(hit)
    records = read_records(out)
    return Grid(
        {r.task_id: r for r in records},
        {t["run_id"]: t["events"] for t in iter_traces(out)},
        hits,
        result.output,
        out,
        [r.task_id for r in records],
    )


@pytest.fixture(scope="module")
def faulty(tmp_path_factory):
    with FaultServer(fail_second_calls, retry_after_s=1, dribble_s=0.1, hang_s=HANG_S) as server:
        return run_grid(tmp_path_factory.mktemp("faulty"), server)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    with FaultServer() as server:
        return run_grid(tmp_path_factory.mktemp("reference"), server)


def served(hits, key):
    return sum(h.usage[key] for h in hits if h.usage is not None)


def cached(hits):
    return sum(h.usage["prompt_tokens_details"]["cached_tokens"] for h in hits if h.usage)


@pytest.mark.parametrize("fault", FAULTS)
def test_a_fault_ends_its_run_as_recorded_with_usage_and_bounded_retries(faulty, fault):
    expect = EXPECTED[fault]
    record, hits = faulty.records[fault], faulty.hits[fault]
    assert record.status == expect.status, record.error
    if expect.error:
        for excerpt in expect.error:
            assert excerpt in (record.error or ""), record.error
    else:
        assert record.error is None
    # Retries are bounded, and the record, the trace and the server agree on them.
    assert [h.fault for h in hits].count(fault) == expect.attempts
    assert record.turns == expect.turns
    assert len(hits) == record.turns + record.retries == expect.turns + expect.attempts - 1
    events = faulty.traces[record.run_id]
    retried = sum(e["response"]["retries"] for e in events if e["kind"] == "response")
    for e in events:
        if e["kind"] == "api_error":
            given_up = re.search(r"gave up after (\d+) attempts", e["error"])
            retried += int(given_up[1]) - 1 if given_up else 0
    assert retried == record.retries
    assert sum(e["kind"] == "request" for e in events) == record.turns
    # Usage so far is counted: the calls served with usage, and no more.
    assert record.tokens_in == served(hits, "prompt_tokens") > 0
    assert record.tokens_out == served(hits, "completion_tokens") > 0
    assert record.tokens_cached == cached(hits)
    assert record.usage_missing == (fault == "no_usage")
    if expect.tool_result:
        [failed] = [e for e in events if e["kind"] == "tool_call" and not e["ok"]]
        assert expect.tool_result in failed["result"]
    if expect.status == "answered":
        assert (record.answer, record.correct) == ("84", True)


def test_clean_runs_in_the_same_grid_are_unaffected(faulty, reference):
    def summary(record):
        return (
            record.status,
            record.correct,
            record.turns,
            record.retries,
            record.tokens_in,
            record.tokens_out,
            record.tokens_cached,
            record.usage_missing,
        )

    assert {r.status for r in reference.records.values()} == {"answered"}
    for task_id in CLEAN:
        assert summary(faulty.records[task_id]) == summary(reference.records[task_id])
        assert [h.fault for h in faulty.hits[task_id]] == [None, None]
        # Not held up by a hung neighbour: recorded while it still waits out its attempts.
        for hung in ("hang", "dribble"):
            assert faulty.order.index(task_id) < faulty.order.index(hung)
    assert len(faulty.records) == len(FAULTS) + len(CLEAN)


@pytest.mark.parametrize("fault", ["429_retry_after", "429_retry_after_date"])
def test_a_retry_after_is_honoured_in_seconds_and_as_an_http_date(faulty, fault):
    first, retry = [h for h in faulty.hits[fault] if h.fault == fault]
    # The back-off alone would retry within MAX_BACKOFF; the server asked for at least 1 s.
    assert first.retry_not_before - first.at >= 1 > MAX_BACKOFF
    assert retry.at >= first.retry_not_before


@pytest.mark.parametrize("fault", ["hang", "dribble"])
def test_a_reply_that_never_finishes_is_cut_at_the_timeout(faulty, fault):
    # The dribble sends a byte every 0.1 s, so no read ever waits TIMEOUT: only the
    # limit on the whole request can stop it, and the body would take far longer.
    record = faulty.records[fault]
    attempts = MAX_RETRIES + 1
    assert f"no complete reply within --timeout {TIMEOUT:g} s" in (record.error or "")
    # Each attempt waited the whole timeout, and none the hang's end (a 504, or a reset).
    assert attempts * TIMEOUT - 0.01 <= record.latency_s < HANG_S
    assert all(h.usage is None for h in faulty.hits[fault] if h.fault == fault)


def test_a_truncated_tool_call_is_never_dispatched(faulty):
    record = faulty.records["length_tool_call"]
    events = faulty.traces[record.run_id]
    assert [e["step"] for e in events if e["kind"] == "tool_call"] == [1]
    assert record.tool_calls == 1


def test_the_key_an_endpoint_echoes_is_written_nowhere(faulty):
    assert SECRET not in faulty.output
    for file in faulty.folder.iterdir():
        assert SECRET not in file.read_text(), file


@pytest.mark.parametrize("fault", ["hang", "dribble"])
def test_the_server_stops_at_once_with_a_reply_in_progress(fault):
    body = {"model": "m", "messages": [{"role": "user", "content": question("clean-1")}]}
    server = FaultServer({1: fault}, dribble_s=0.05, hang_s=HANG_S).start()
    outcome = []

    def call():
        try:
            reply = httpx.post(
                f"{server.base_url}/chat/completions", json=body, timeout=30, trust_env=False
            )
            outcome.append(reply.status_code)
        except httpx.HTTPError as exc:  # the dribble is cut with a reset
            outcome.append(type(exc).__name__)

    caller = threading.Thread(target=call)
    caller.start()
    while not server.hits:
        time.sleep(0.01)
    began = time.perf_counter()
    server.stop()
    caller.join(timeout=HANG_S / 2)
    # Ended by the stop, not by the reply's own end, HANG_S after it began.
    assert not caller.is_alive() and time.perf_counter() - began < HANG_S / 2
    assert outcome == [{"hang": 504, "dribble": "ReadError"}[fault]]
    assert server.hits[0].usage is None


def test_a_script_naming_no_fault_is_refused():
    with pytest.raises(ValueError, match="one of: 429, 429_retry_after"):
        FaultServer({1: "418"})
