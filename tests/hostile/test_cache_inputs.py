"""Hostile response caches (``run --cache DIR``): damaged, truncated, another program's,
of the wrong shape, failing mid-run, shared by two processes. None may end a run as
pattern_error: each is refused with one line and exit 2 before any request, or bypassed
with one warning while the runs go on against the endpoint; ``cache stats`` agrees with
the records, and a file that is not a loopbench cache is never changed."""

import asyncio
import json
import random
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import closing

import pytest
from aiohttp import web
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.fakes.fake_server import FakeServer, Reply, default_responder
from loopbench.harness.models.cache import CACHE_FILE, ResponseCache, canonical_request, request_key
from loopbench.harness.models.cache_file import SCHEMA, CacheError, open_cache_file
from loopbench.harness.models.types import Message, ModelRequest, ModelResponse
from loopbench.harness.results.reading import read_records

ARMS = ["--arm", "direct", "--arm", "react_text"]


def run(server, out, cache, *extra):
    args = ["run", "--model", "fake", "--quiet", "--base-url", server.base_url]
    args += ["--out", str(out), "--cache", str(cache), "--repeats", "2", *ARMS, *extra]
    return CliRunner().invoke(main, args)


def stats(cache):
    return CliRunner().invoke(main, ["cache", "stats", str(cache)])


def replays(cache):
    """The replays ``cache stats`` reports."""
    shown = stats(cache)
    assert shown.exit_code == 0, shown.output
    return int(shown.output.split("replayed ")[1].split(" times")[0])


def lines(output):
    return [line for line in output.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def made_cache(tmp_path_factory):
    """A cache a run filled: the file each damage starts from."""
    folder = tmp_path_factory.mktemp("made")
    with FakeServer() as server:
        assert run(server, folder / "out", folder / "cache").exit_code == 0
    return (folder / "cache" / CACHE_FILE).read_bytes()


def _garbled(good: bytes, start: int) -> bytes:
    noise = random.Random(7)
    return good[:start] + bytes(noise.randrange(256) for _ in range(len(good) - start))


def _foreign(path, schema):
    with closing(sqlite3.connect(path)) as db:
        db.executescript(schema)
        db.commit()


def damage(kind, good, path):
    """Write the hostile file ``kind`` at ``path``."""
    page = int.from_bytes(good[16:18], "big")
    if kind == "garbled after the header":
        path.write_bytes(_garbled(good, 100))
    elif kind == "garbled after the first page":
        path.write_bytes(_garbled(good, page))
    elif kind == "free-page list garbled":  # quick_check's finding, not an error raised
        path.write_bytes(good[:32] + (len(good) // page + 7).to_bytes(4, "big") + good[36:])
    elif kind == "truncated":
        path.write_bytes(good[: len(good) // 2])
    elif kind == "truncated within the header":
        path.write_bytes(good[:50])
    elif kind == "foreign schema":
        _foreign(path, "CREATE TABLE people (name TEXT); INSERT INTO people VALUES ('ada');")
    elif kind == "responses table of the wrong shape":
        _foreign(path, "CREATE TABLE responses (key TEXT PRIMARY KEY, response TEXT);")
    elif kind == "responses beside another program's tables":
        _foreign(
            path,
            "CREATE TABLE responses (key TEXT PRIMARY KEY, request TEXT NOT NULL, "
            "response TEXT NOT NULL, hits INTEGER NOT NULL DEFAULT 0); "
            "CREATE TABLE people (name TEXT);",
        )


DAMAGES = [
    "garbled after the header",
    "garbled after the first page",
    "free-page list garbled",
    "truncated",
    "truncated within the header",
    "foreign schema",
    "responses table of the wrong shape",
    "responses beside another program's tables",
]


@pytest.mark.parametrize("kind", DAMAGES)
def test_an_unusable_cache_is_refused_before_any_request_and_left_as_it_was(
    tmp_path, made_cache, kind
):
    cache = tmp_path / "cache"
    cache.mkdir()
    damage(kind, made_cache, cache / CACHE_FILE)
    before = (cache / CACHE_FILE).read_bytes()
    with FakeServer() as server:
        result = run(server, tmp_path / "out", cache)
        assert server.served.requests == 0
    assert result.exit_code == 2, result.output
    assert not (tmp_path / "out" / "runs.jsonl").exists()
    for command in (["run"], ["cache", "stats"], ["cache", "clear"]):
        if command != ["run"]:
            result = CliRunner().invoke(main, [*command, str(cache)])
        assert result.exit_code == 2, (command, result.output)
        (said,) = lines(result.output)
        assert str(cache / CACHE_FILE) in said and "not a usable response cache" in said
        assert (cache / CACHE_FILE).read_bytes() == before, command  # never changed


def test_a_cache_failing_mid_run_is_bypassed_with_one_warning(tmp_path):
    cache = tmp_path / "cache"

    def dropping(body):
        """Another program drops the cache's table while the first run waits."""
        if not dropped:
            with closing(sqlite3.connect(cache / CACHE_FILE)) as db:
                db.execute("DROP TABLE responses")
                db.commit()
            dropped.append(True)
        return default_responder(body)

    dropped: list[bool] = []
    with FakeServer(dropping) as server:
        result = run(server, tmp_path / "out", cache)
        sent = server.served.requests
    assert result.exit_code == 0, result.output
    warnings = [line for line in lines(result.stderr) if "response cache" in line]
    assert len(warnings) == 1 and "bypassed" in warnings[0], result.stderr
    records = read_records(tmp_path / "out")
    tasks = {r.task_id for r in records}
    assert len({(r.arm, r.task_id, r.repeat) for r in records}) == len(records) == 4 * len(tasks)
    assert not [r for r in records if r.status == "pattern_error"]
    assert all(r.status == "answered" for r in records)
    assert sum(r.turns for r in records) == sent and sum(r.cache_hits for r in records) == 0
    refused = stats(cache)  # the table is gone: said so, on one line
    assert refused.exit_code == 2 and len(lines(refused.output)) == 1


@pytest.mark.parametrize("use", ["get", "put", "nearest_difference"])
def test_each_use_of_a_cache_failing_mid_run_bypasses_it_with_one_warning(tmp_path, use):
    said: list[str] = []
    cache = ResponseCache(tmp_path, said.append)
    request = canonical_request(ModelRequest("m", (Message("user", "q"),)), "direct#0", 0)
    key = request_key(request)
    cache.put(key, request, ModelResponse(Message("assistant", "a")))
    with closing(sqlite3.connect(tmp_path / CACHE_FILE)) as db:
        db.execute("DROP TABLE responses")
        db.commit()
    calls = {
        "get": lambda: cache.get(key),
        "put": lambda: cache.put(key, request, ModelResponse(Message("assistant", "b"))),
        "nearest_difference": lambda: cache.nearest_difference(request),
    }
    calls[use]()
    assert cache.get(key) is None and cache.nearest_difference(request) == "the cache is bypassed"
    cache.put(key, request, ModelResponse(Message("assistant", "c")))
    cache.close()
    assert len(said) == 1 and "no such table: responses" in said[0] and "bypassed" in said[0]


def test_damaged_rows_are_misses_sent_again_and_stored_anew(tmp_path):
    cache = tmp_path / "cache"
    with FakeServer() as server:
        assert run(server, tmp_path / "a", cache).exit_code == 0
        sent = server.served.requests
        with closing(sqlite3.connect(cache / CACHE_FILE)) as db:
            keys = [row[0] for row in db.execute("SELECT key FROM responses ORDER BY key")]
            wrong_types = json.dumps(
                {
                    "message": {
                        "role": "assistant",
                        "content": 5,
                        "tool_calls": [],
                        "tool_call_id": None,
                    },
                    "finish_reason": "stop",
                    "usage": {"input_tokens": 1},
                }
            )
            # JSON of the wrong types or shape, nested past Python's recursion limit, and
            # bytes that are not UTF-8
            damages = [wrong_types, b"\xff\xfe not utf-8", "[1, 2]", "[" * 100_000]
            for n, key in enumerate(keys):
                damaged = damages[n % len(damages)]
                db.execute(
                    "UPDATE responses SET response = CAST(? AS TEXT), request = CAST(? AS TEXT) "
                    "WHERE key = ?",
                    (damaged, damaged, key),
                )
            db.commit()
        again = run(server, tmp_path / "b", cache, "--cache-debug")  # compares with them
        assert server.served.requests == 2 * sent  # every damaged row sent again
        replayed = run(server, tmp_path / "c", cache)
        assert server.served.requests == 2 * sent  # stored anew, so replayed now
    assert again.exit_code == 0 and replayed.exit_code == 0, again.output
    assert "warning" not in again.output and "cache miss: nearest cached" in again.output
    for out in ("b", "c"):
        assert all(r.status == "answered" for r in read_records(tmp_path / out))
    assert sum(r.cache_hits for r in read_records(tmp_path / "b")) == 0
    assert sum(r.cache_hits for r in read_records(tmp_path / "c")) == sent == replays(cache)


def test_retry_errors_reruns_the_runs_an_older_cache_fault_ended(tmp_path):
    out = tmp_path / "out"
    with FakeServer() as server:
        assert run(server, out, tmp_path / "first").exit_code == 0
        runs = out / "runs.jsonl"
        written = [json.loads(line) for line in runs.read_text().splitlines()]
        faults = [
            "DatabaseError: database disk image is malformed",
            "OperationalError: no such column: hits",
        ]
        for n, record in enumerate(written[:6]):  # as older releases recorded a failing cache
            record.update(status="pattern_error", error=faults[n % 2], correct=None, answer=None)
        bug = "AttributeError: 'NoneType' object has no attribute 'strip'"
        written[6].update(status="pattern_error", error=bug, correct=None, answer=None)
        runs.write_text("".join(json.dumps(r) + "\n" for r in written))
        sent = server.served.requests
        assert run(server, out, tmp_path / "second").exit_code == 0
        assert server.served.requests == sent  # not without --retry-errors
        retried = run(server, out, tmp_path / "second", "--retry-errors")
    assert retried.exit_code == 0, retried.output
    records = read_records(out)
    assert len(records) == len(written)
    errors = [r.error for r in records if r.status == "pattern_error"]
    assert errors == [bug]  # a pattern's bug is not the cache's: left as recorded
    superseded = read_records(out, superseded=True)
    assert sorted(r.run_id for r in superseded) == sorted(r["run_id"] for r in written[:6])


class TwinServer(FakeServer):
    """Answers a request only once its twin from the other process has arrived too, so
    that both processes miss the cache and both send (a race made certain); each reply
    is its own sample, as a real endpoint's texts and tool-call ids are."""

    def __init__(self) -> None:
        super().__init__(self._sample, keep_bodies=False)
        self.arrived: dict[str, int] = {}
        self.samples = 0

    def _sample(self, body):
        self.samples += 1
        return Reply(content=f"84 (sample {self.samples})")

    async def handle(self, request: web.Request) -> web.StreamResponse:
        text = json.dumps(await request.json(), sort_keys=True)  # aiohttp keeps the body
        self.arrived[text] = self.arrived.get(text, 0) + 1
        deadline = time.monotonic() + 30
        while self.arrived[text] < 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        return await super().handle(request)


def both_or_neither(processes, timeout_s=300):
    """The processes' outputs once both have ended, or as soon as one has failed: the
    other would wait out the server's deadline for every twin it sends."""
    deadline = time.monotonic() + timeout_s
    while any(p.poll() is None for p in processes) and time.monotonic() < deadline:
        if any(p.returncode not in (None, 0) for p in processes):
            break
        time.sleep(0.05)
    for process in processes:
        if process.poll() is None:
            process.kill()
    return [p.communicate() for p in processes]


def test_two_processes_sharing_a_cache_count_as_replayed_only_what_they_did_not_send(tmp_path):
    cache = tmp_path / "cache"
    with TwinServer() as server:
        command = [
            sys.executable,
            "-m",
            "loopbench.harness.cli",
            "run",
            "--model",
            "fake",
            "--quiet",
        ]
        command += ["--base-url", server.base_url, "--cache", str(cache), "--arm", "direct"]
        commands = [[*command, "--concurrency", "1", "--out", str(tmp_path / n)] for n in "ab"]
        processes = [
            subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for c in commands
        ]
        outputs = both_or_neither(processes)
        sent = server.served.requests
    assert [p.returncode for p in processes] == [0, 0], outputs
    records = read_records(tmp_path / "a") + read_records(tmp_path / "b")
    assert not [r for r in records if r.status == "pattern_error"]
    assert sum(r.turns - r.cache_hits for r in records) == sent  # sent is counted as sent
    assert sum(r.cache_hits for r in records) == replays(cache) == 0
    with FakeServer() as server:  # a third run replays what was stored, and says so
        third = run(server, tmp_path / "c", cache, "--repeats", "1")
        assert third.exit_code == 0
    replayed = read_records(tmp_path / "c")
    assert sum(r.cache_hits for r in replayed) == replays(cache) > 0
    assert not [r for r in replayed if r.status == "pattern_error"]
    shutil.rmtree(tmp_path / "c")


def holding_a_write(path):
    """Another process's connection in the midst of making the file: a write transaction
    that has created the table and not yet committed. A new connection wanting to make
    the file a WAL database then waits on a lock whose holder waits on its own: SQLite
    answers "database is locked" at once instead of waiting (two grids starting together
    on one new cache folder)."""
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN")
    holder.execute(SCHEMA)
    return holder


def test_a_cache_another_process_is_making_is_waited_for_not_refused(tmp_path):
    holder = holding_a_write(tmp_path / CACHE_FILE)
    commit = threading.Timer(0.3, holder.execute, ["COMMIT"])
    commit.start()
    began = time.monotonic()
    cache = ResponseCache(tmp_path)  # waits for the other opening rather than refusing
    assert time.monotonic() - began >= 0.25
    commit.join()
    holder.close()
    request = canonical_request(ModelRequest("m", (Message("user", "q"),)), "direct#0", 0)
    cache.put(request_key(request), request, ModelResponse(Message("assistant", "84")))
    assert cache.get(request_key(request)) is not None and cache.stats()["entries"] == 1


def test_a_cache_locked_beyond_the_patience_is_refused_as_locked_not_damaged(tmp_path):
    path = tmp_path / CACHE_FILE
    holder = holding_a_write(path)
    began = time.monotonic()
    with pytest.raises(CacheError) as refused:
        open_cache_file(path, create=True, patience_s=0.5)
    assert 0.1 < time.monotonic() - began < 5  # tried again within the patience, then no more
    said = str(refused.value)
    assert str(path) in said and "locked by another process" in said
    assert "remove the file" not in said  # a lock is not damage: the file is left as it is
    holder.execute("COMMIT")
    holder.close()
    assert ResponseCache(tmp_path).stats()["entries"] == 0
