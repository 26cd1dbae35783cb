"""``history=window:N`` end to end against a loopback fake endpoint that bills what it is
sent: no request holds more than N steps in full, the records' tokens are what it billed,
and ``history=full`` sends today's requests byte for byte."""

import json
from typing import Any

import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.fakes.fake_server import FakeServer, Reply, question_index
from loopbench.harness.results.reading import read_records

TITLES = ["Nile", "Danube", "Paris", "Kilimanjaro", "Mount Everest"]
#: The question's message opens with the question; older steps follow it a line each.
OLDER = "Step "
#: What the fake thinks aloud each step: full replay re-sends it, an older step's line does not.
THOUGHT = "I have not found it yet, so I look the next entry up and compare. " * 4


def steps_taken(messages: list[dict[str, Any]]) -> int:
    """Steps the run has taken: those sent in full, and those sent as a line."""
    start = question_index(messages)
    in_full = sum(m["role"] == "assistant" for m in messages[start:])
    older = str(messages[start]["content"]).splitlines()
    return in_full + sum(line.startswith(OLDER) for line in older)


def five_lookups(body: dict[str, Any]) -> Reply:
    """A model that looks five entries up, one a step, then answers: the native tool loop
    with tool calls, the text loop in Thought/Action form."""
    done = steps_taken(body["messages"])
    title = TITLES[done] if done < len(TITLES) else None
    if body.get("tools"):
        if title is None:
            return Reply("84")
        arguments = json.dumps({"title": title})
        call = {"id": f"call_{done}", "type": "function",
                "function": {"name": "lookup", "arguments": arguments}}  # fmt: skip
        return Reply(THOUGHT, tool_calls=[call], finish_reason="tool_calls")
    action = f"lookup[{title}]" if title else "finish[84]"
    return Reply(f"Thought: {THOUGHT}\nAction: {action}")


def run(server, out, *arms, tasks=2):
    argv = ["run", "--base-url", server.base_url, "--model", "fake", "--limit", str(tasks)]
    argv += [a for arm in arms for a in ("--arm", arm)]
    return CliRunner().invoke(main, [*argv, "--out", str(out), "--quiet"])


def in_full(body: dict[str, Any]) -> tuple[int, int]:
    """Steps a request sends in full: its tool results (native) or Observation blocks
    (text), counted after the run's question (the text loop's worked example before it
    has its own)."""
    messages = body["messages"]
    own = messages[question_index(messages) :]
    tools = sum(m["role"] == "tool" for m in own)
    observations = sum(str(m["content"] or "").startswith("Observation:") for m in own)
    return tools, observations


@pytest.mark.parametrize("pattern", ["react", "react_text"])
def test_a_window_of_two_sends_two_steps_in_full_and_bills_what_was_sent(tmp_path, pattern):
    with FakeServer(five_lookups) as server:
        result = run(server, tmp_path / "r", f"{pattern}:history=window:2")
        assert result.exit_code == 0, result.output
        bodies, served = server.served.bodies, server.served
    records = read_records(tmp_path / "r")
    assert {r.arm for r in records} == {f"{pattern}:history=window:2"}
    assert {r.turns for r in records} == {6} and len(bodies) == 12
    lines = []
    for body in bodies:
        tools, observations = in_full(body)
        assert tools + observations <= 2
        messages = body["messages"]
        question = str(messages[question_index(messages)]["content"])
        older = [line for line in question.splitlines() if line.startswith(OLDER)]
        assert len(older) == max(0, steps_taken(messages) - 2)
        lines.append(len(older))
    assert sorted(lines) == sorted([0, 0, 0, 1, 2, 3] * 2)  # five look-ups, the answer: a task
    assert sum(r.tokens_in for r in records) == served.prompt_tokens
    assert sum(r.tokens_out for r in records) == served.completion_tokens
    assert sum(r.tokens_cached for r in records) == served.cached_tokens
    assert all(r.options["history"] == "window:2" for r in records)


@pytest.mark.parametrize("pattern", ["react", "react_text"])
def test_full_history_sends_todays_requests_byte_for_byte(tmp_path, pattern):
    sent = []
    for arm in (pattern, f"{pattern}:history=full"):
        with FakeServer(five_lookups) as server:
            assert run(server, tmp_path / arm, arm).exit_code == 0
            sent.append(json.dumps(server.served.bodies, sort_keys=True))
    assert sent[0] == sent[1]


@pytest.mark.parametrize("pattern", ["react", "react_text"])
def test_a_grid_of_full_and_window_shows_both_costs(tmp_path, pattern):
    with FakeServer(five_lookups) as server:
        result = run(server, tmp_path / "r", f"{pattern}:history=full|window:2")
        assert result.exit_code == 0, result.output
    records = read_records(tmp_path / "r")
    full, window = f"{pattern}:history=full", f"{pattern}:history=window:2"
    spent = dict.fromkeys((full, window), 0)
    for record in records:
        spent[record.arm] += record.tokens_in
    # Compaction re-sends less than full replay once a run passes the window.
    assert 0 < spent[window] < spent[full]
    assert f"| {full} " in result.output and f"| {window} " in result.output


@pytest.mark.parametrize("value", ["window:0", "window:x", "partial"])
def test_a_bad_history_is_one_line_naming_the_arm_and_exit_2(tmp_path, value):
    with FakeServer(five_lookups) as server:
        result = run(server, tmp_path / "r", f"react:history={value}")
        assert server.served.requests == 0
    assert result.exit_code == 2
    said = [line for line in result.output.splitlines() if f"react:history={value}" in line]
    assert len(said) == 1 and "write full, or window:N" in said[0]
    assert "Traceback" not in result.output
