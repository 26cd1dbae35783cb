"""What a run's trace costs: kept while the run is live, written once, and read back.

A react run of TURNS calls (a look-up each turn but the last, which answers) is run against a
scripted model, through the counting client, so every request, response and tool call is
traced as on the runner's path; the tool answers with ENTRY characters, so the requests
grow as a real run's do. Three figures, in CPU microseconds a run of this process (best of
ROUNDS, so that other work on the machine counts as little as it can):

- live: the pattern's run with its trace (the scripted model and the tool included);
- write: the trace as the JSON line ``traces.jsonl`` holds;
- read: that line read back as the failure rules and the report read it.

    .venv/bin/python bench/trace_cost.py
    .venv/bin/python bench/trace_cost.py --turns 20 --entry 4000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Callable

from pydantic import BaseModel

from loopbench.harness.arms import parse_arms
from loopbench.harness.events import parse_events
from loopbench.harness.models.counting import CountingClient
from loopbench.harness.models.scripted import Reply, ScriptedModel, tool_reply
from loopbench.harness.patterns.base import RunContext
from loopbench.harness.report.failure_traces import RunTrace
from loopbench.harness.report.html._conversation import conversation
from loopbench.harness.tools import Tool, ToolSet
from loopbench.harness.trace import Trace


class Title(BaseModel):
    title: str


def run_once(turns: int, entry: str) -> Trace:
    replies: list[Reply] = [
        tool_reply(("lookup", {"title": f"Entry {i}"})) for i in range(turns - 1)
    ]
    replies.append("The answer is 42.")
    trace = Trace()
    tools = ToolSet([Tool("lookup", "Look up an entry.", Title, lambda args: entry)])
    client = CountingClient(ScriptedModel(replies), trace)
    ctx = RunContext("How many years passed?", client, "fake", tools, trace)
    pattern = parse_arms([f"react:max_steps={turns},max_tokens=100000000"])[0].build()
    outcome = asyncio.run(pattern.run(ctx))
    assert outcome.status == "answered", outcome.status
    return trace


def best(fn: Callable[[], object], rounds: int, runs: int) -> float:
    """CPU microseconds a call of ``fn`` (this process only: other work on the machine
    does not count), the best of ``rounds`` rounds of ``runs`` calls."""
    times = []
    for _ in range(rounds):
        began = time.process_time()
        for _ in range(runs):
            fn()
        times.append((time.process_time() - began) / runs)
    return 1e6 * min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description="loopbench trace cost")
    parser.add_argument("--turns", type=int, default=8)
    parser.add_argument("--entry", type=int, default=1500, help="characters a look-up returns")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    entry = "x" * args.entry
    trace = run_once(args.turns, entry)
    line = json.dumps({"run_id": "r", "events": trace.to_json()})
    print(f"react, {args.turns} turns, {args.entry}-character entries: {len(line):,} bytes")
    live = best(lambda: run_once(args.turns, entry), args.rounds, args.runs)
    write = best(
        lambda: json.dumps({"run_id": "r", "events": trace.to_json()}), args.rounds, args.runs
    )

    def read() -> None:
        events = parse_events(json.loads(line)["events"])
        RunTrace.of(events)
        conversation(events)

    read_us = best(read, args.rounds, args.runs)
    print(f"live   {live:9.0f} us a run")
    print(f"write  {write:9.0f} us a run")
    print(f"read   {read_us:9.0f} us a run")


if __name__ == "__main__":
    main()
