"""The response cache: a re-run replays what was paid for and sends nothing."""

import asyncio
import json

import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.fakes.fake_server import FakeServer, Reply
from loopbench.harness.models.cache import (
    CachingClient,
    ResponseCache,
    canonical_request,
    request_key,
)
from loopbench.harness.models.scripted import ScriptedModel
from loopbench.harness.models.types import Message, ModelRequest
from loopbench.harness.results.reading import read_records

ARMS = ["direct", "react_text", "self_consistency:samples=3", "best_of_n:n=2"]
#: What differs between two runs of the same grid whatever the cache does.
PER_RUN = {"run_id", "experiment_id", "started_at", "latency_s", "cache_hits"}
PER_RUN |= {"cost_from_cache_usd", "retries"}


def run_grid(out, server, cache, *extra):
    args = ["run", "--model", "fake", "--quiet", "--out", str(out), "--repeats", "2"]
    args += ["--base-url", server.base_url, "--cache", str(cache), *extra]
    for arm in ARMS:
        args += ["--arm", arm]
    return CliRunner().invoke(main, args)


def comparable(folder):
    records = sorted(read_records(folder), key=lambda r: (r.arm, r.task_id, r.repeat))
    return [r.model_dump(exclude=PER_RUN) for r in records]


def test_a_cached_rerun_sends_no_request_and_gives_the_same_records(tmp_path):
    with FakeServer() as server:
        first = run_grid(tmp_path / "a", server, tmp_path / "cache")
        sent = server.served.requests
        again = run_grid(tmp_path / "b", server, tmp_path / "cache")
        assert server.served.requests == sent  # not one request more
    assert first.exit_code == 0 and again.exit_code == 0, again.output
    assert comparable(tmp_path / "a") == comparable(tmp_path / "b")
    replayed = read_records(tmp_path / "b")
    assert sum(r.cache_hits for r in replayed) == sum(r.turns for r in replayed) == sent
    assert "Response cache: " in again.output and "replayed, not sent" in again.output
    trace = json.loads((tmp_path / "b" / "traces.jsonl").read_text().splitlines()[0])
    responses = [e for e in trace["events"] if e["kind"] == "response"]
    assert responses and all(e["response"]["from_cache"] for e in responses)


def test_repeats_and_identical_requests_in_one_run_stay_independent_samples(tmp_path):
    async def scenario(tmp):
        cache = ResponseCache(tmp)
        request = ModelRequest("m", (Message("user", "q"),), temperature=0.7)
        model = ScriptedModel(["a", "b", "c"])
        first = CachingClient(model, cache, "direct#0")
        replies = [(await first.complete(request)).message.content for _ in range(2)]
        other_repeat = CachingClient(model, cache, "direct#1")
        replies.append((await other_repeat.complete(request)).message.content)
        replay = CachingClient(ScriptedModel([]), cache, "direct#0")
        replayed = [(await replay.complete(request)).message.content for _ in range(2)]
        stats = cache.stats()
        cache.close()
        return replies, replayed, stats

    replies, replayed, stats = asyncio.run(scenario(tmp_path))
    assert replies == ["a", "b", "c"] and replayed == ["a", "b"]
    assert (stats["entries"], stats["hits"]) == (3, 2)


def test_the_key_covers_every_part_of_the_request():
    base = ModelRequest("m", (Message("user", "q"),), system="s", temperature=0.0)
    variants = [
        ModelRequest("m2", base.messages, system="s", temperature=0.0),
        ModelRequest("m", (Message("user", "q2"),), system="s", temperature=0.0),
        ModelRequest("m", base.messages, system="s2", temperature=0.0),
        ModelRequest("m", base.messages, system="s", temperature=0.5),
        ModelRequest("m", base.messages, system="s", temperature=0.0, max_output_tokens=5),
        ModelRequest("m", base.messages, system="s", temperature=0.0, stop=("x",)),
        ModelRequest("m", base.messages, system="s", temperature=0.0, tool_choice="lookup"),
    ]
    key = request_key(canonical_request(base, "a#0", 0))
    keys = {request_key(canonical_request(v, "a#0", 0)) for v in variants}
    assert key not in keys and len(keys) == len(variants)
    assert request_key(canonical_request(base, "a#1", 0)) != key  # another repeat
    assert request_key(canonical_request(base, "b#0", 0)) != key  # another arm
    assert request_key(canonical_request(base, "a#0", 1)) != key  # the same request again


def test_cache_debug_says_what_differed_from_the_nearest_cached_request(tmp_path):
    with FakeServer() as server:
        assert run_grid(tmp_path / "a", server, tmp_path / "cache").exit_code == 0
        args = ["run", "--model", "fake", "--quiet", "--out", str(tmp_path / "b")]
        args += ["--base-url", server.base_url, "--cache", str(tmp_path / "cache")]
        args += ["--cache-debug", "--arm", "direct:max_output_tokens=50"]
        result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "cache miss: nearest cached request differs in: max_output_tokens" in result.output


def test_cache_stats_and_clear(tmp_path):
    with FakeServer() as server:
        assert run_grid(tmp_path / "a", server, tmp_path / "cache").exit_code == 0
        sent = server.served.requests
    stats = CliRunner().invoke(main, ["cache", "stats", str(tmp_path / "cache")])
    assert stats.exit_code == 0 and f"{sent} responses, replayed 0 times" in stats.output
    cleared = CliRunner().invoke(main, ["cache", "clear", str(tmp_path / "cache")])
    assert cleared.exit_code == 0 and f"removed {sent} responses" in cleared.output
    after = CliRunner().invoke(main, ["cache", "stats", str(tmp_path / "cache")])
    assert "0 responses" in after.output


@pytest.mark.parametrize("make", ["file", "missing", "garbage"])
def test_an_unusable_cache_is_bad_input(tmp_path, make):
    target = tmp_path / "c"
    if make == "file":
        target.write_text("x")
        command = ["run", "--arm", "direct", "--model", "fake", "--cache", str(target)]
        command += ["--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "r")]
    elif make == "missing":
        command = ["cache", "stats", str(target)]
    else:
        target.mkdir()
        (target / "responses.sqlite").write_text("not a database at all" * 100)
        command = ["cache", "stats", str(target)]
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert str(target) in result.output


def test_two_arms_sending_the_same_request_do_not_share_a_sample(tmp_path):
    calls = {"n": 0}

    def varying(body):
        calls["n"] += 1
        return Reply(content=f"answer {calls['n']}")

    with FakeServer(varying) as server:
        args = ["run", "--model", "fake", "--quiet", "--base-url", server.base_url]
        args += ["--cache", str(tmp_path / "c"), "--concurrency", "8", "--repeats", "2"]
        args += ["--arm", "direct", "--arm", "direct:max_steps=3"]  # the same requests
        first = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "a")])
        sent = server.served.requests
        again = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "b")])
        assert server.served.requests == sent
    assert first.exit_code == 0 and again.exit_code == 0
    answers = [r.answer for r in read_records(tmp_path / "a")]
    assert len(set(answers)) == len(answers) == sent  # every run its own sample
    assert comparable(tmp_path / "a") == comparable(tmp_path / "b")
