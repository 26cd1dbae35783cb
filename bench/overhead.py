"""The harness's own overhead, side by side: loopbench, bare aiohttp clients and, when
given, Inspect AI, against one fake endpoint with a fixed latency.

The endpoint runs in a process of its own on loopback and answers every request after
LATENCY seconds, as a tool-calling model that looks something up ``--tool-turns`` times
and then answers, so a react run makes tool-turns + 1 calls. It times what it serves:
each client's calls per second are counted there, from its first request to its last
reply (the serving window), the same way for every client, so a client's start-up is
not counted. Each client runs in a process of its own, at the same concurrency C:

- **bare POSTs**: the least a client can do: C aiohttp coroutines posting the same
  number of calls one at a time and reading each reply's JSON; nothing waits on
  anything else, so the endpoint is always full.
- **bare conversations**: the same calls as conversations: C coroutines, each posting a
  conversation, appending the tool results and posting again until the model answers.
  No pattern, grading, records or retries.
- **loopbench**: ``loopbench run --arm react --concurrency C`` as a person types it,
  writing its results folder (records and traces); C requests in flight at most and
  twice as many runs.
- **Inspect AI** (``--inspect PYTHON``, a Python with ``inspect_ai`` installed): a task
  of the same samples, ``use_tools`` + ``generate`` with one lookup tool, through its
  OpenAI provider with ``--max-connections C``.

Rounds alternate the clients so that the machine's noise falls on each alike. Then
loopbench's CPU per call is measured in this process (``run_grid`` on the same grid,
after a warm-up), beside the bare conversations' CPU per call.

    .venv/bin/python bench/overhead.py                            # C=16, 64 and 256, 3 rounds
    .venv/bin/python bench/overhead.py --inspect /tmp/inspect-venv/bin/python
    .venv/bin/python bench/overhead.py --concurrency 64 --samples 400 --rounds 5

Every client shares this machine's two cores with the endpoint, as the targets assume.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
LOOPBENCH = Path(sys.executable).parent / "loopbench"


# --- the endpoint -------------------------------------------------------------------


def serve(latency: float, tool_turns: int) -> None:
    """A tool-calling model on loopback; GET /window reports and resets what it served."""
    from aiohttp import web

    window: dict[str, float] = {"calls": 0, "first": 0.0, "last": 0.0}

    def reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
        turns = sum(m.get("role") == "assistant" for m in messages)
        if turns < tool_turns:
            call = {
                "id": f"call_{turns}",
                "type": "function",
                "function": {"name": "lookup", "arguments": '{"title": "Paris"}'},
            }
            return {"role": "assistant", "content": None, "tool_calls": [call]}
        return {"role": "assistant", "content": "84"}

    async def complete(request: web.Request) -> web.Response:
        arrived = time.perf_counter()
        body = await request.json()
        await asyncio.sleep(latency)
        message = reply(body["messages"])
        prompt = sum(len(m.get("content") or "") for m in body["messages"]) // 4 + 1
        if not window["calls"]:
            window["first"] = arrived
        window["calls"] += 1
        window["last"] = time.perf_counter()
        return web.json_response(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": body.get("model", "fake"),
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": "tool_calls" if "tool_calls" in message else "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": 4,
                    "total_tokens": prompt + 4,
                },
            }
        )

    async def report(request: web.Request) -> web.Response:
        seen = dict(window)
        window.update(calls=0, first=0.0, last=0.0)
        return web.json_response(seen)

    app = web.Application()
    app.router.add_post("/v1/chat/completions", complete)
    app.router.add_get("/window", report)

    async def main() -> None:
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        print(f"http://127.0.0.1:{runner.addresses[0][1]}/v1", flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


@contextlib.contextmanager
def endpoint(latency: float, tool_turns: int) -> Iterator[str]:
    """This file's endpoint in a process of its own, for as long as it is used: its base URL."""
    command = [sys.executable, str(HERE), "--serve", "--latency", str(latency)]
    server = subprocess.Popen(
        [*command, "--tool-turns", str(tool_turns)], stdout=subprocess.PIPE, text=True
    )
    assert server.stdout is not None
    try:
        yield server.stdout.readline().strip()
    finally:
        server.terminate()
        server.wait()


def served(base_url: str) -> dict[str, float]:
    """What the endpoint served since it was last asked, and resets it."""
    import urllib.request

    with urllib.request.urlopen(base_url.removesuffix("/v1") + "/window") as reply:
        seen: dict[str, float] = json.load(reply)
    return seen


# --- the bare client ----------------------------------------------------------------


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Look up an entry by its title.",
            "parameters": {
                "type": "object",
                "properties": {"title": {"type": "string"}},
                "required": ["title"],
            },
        },
    }
]


async def bare(
    base_url: str, samples: int, turns: int, concurrency: int, conversations: bool
) -> None:
    """``samples`` conversations of ``turns`` calls, or as many single POSTs, by
    ``concurrency`` coroutines."""
    import aiohttp

    url = base_url + "/chat/completions"
    left = iter(range(samples if conversations else samples * turns))
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:

        async def post(messages: list[dict[str, Any]]) -> dict[str, Any]:
            body = {"model": "fake", "messages": messages, "tools": TOOLS}
            async with session.post(url, json=body) as response:
                message: dict[str, Any] = (await response.json())["choices"][0]["message"]
            return message

        async def worker() -> None:
            for sample in left:
                messages = [{"role": "user", "content": f"Question {sample}: how many?"}]
                message = await post(messages)
                while conversations and message.get("tool_calls"):
                    messages.append(message)
                    for call in message["tool_calls"]:
                        messages.append(
                            {"role": "tool", "tool_call_id": call["id"], "content": "Paris."}
                        )
                    message = await post(messages)

        await asyncio.gather(*(worker() for _ in range(concurrency)))


# --- the clients as processes -------------------------------------------------------

INSPECT_TASK = '''
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import tool


@tool
def lookup():
    async def execute(title: str) -> str:
        """Look up an entry by its title.

        Args:
            title: The entry's title.
        """
        return "Paris."

    return execute


@task
def bench():
    samples = [Sample(input=f"Question {i}: how many years apart?", target="84")
               for i in range({n})]
    return Task(dataset=samples, solver=[use_tools([lookup()]), generate()], scorer=includes())
'''


CLIENTS = ("bare POSTs", "bare conversations", "loopbench", "Inspect AI")


def run_client(client: str, base_url: str, args: argparse.Namespace, concurrency: int) -> None:
    environment = os.environ | {"OPENAI_API_KEY": "fake"}
    with tempfile.TemporaryDirectory() as tmp:
        if client.startswith("bare"):
            command = [sys.executable, str(HERE), "--bare", base_url, "--samples"]
            command += [str(args.samples), "--tool-turns", str(args.tool_turns)]
            command += ["--concurrency", str(concurrency)]
            command += ["--conversations"] if client == "bare conversations" else []
        elif client == "loopbench":
            repeats = -(-args.samples // 12)  # the depot set's 12 tasks
            command = [str(LOOPBENCH), "run", "--arm", "react", "--repeats", str(repeats)]
            command += ["--concurrency", str(concurrency), "--base-url", base_url]
            command += ["--model", "fake", "--out", f"{tmp}/results", "--quiet"]
        else:
            Path(tmp, "task.py").write_text(INSPECT_TASK.replace("{n}", str(args.samples)))
            command = [args.inspect, "-m", "inspect_ai", "eval", "task.py", "--model"]
            command += ["openai/fake", "--model-base-url", base_url, "-M", "responses_api=false"]
            command += ["--max-connections", str(concurrency)]
            command += ["--log-dir", f"{tmp}/logs", "--display", "none"]
        done = subprocess.run(command, capture_output=True, text=True, env=environment, cwd=tmp)
        if done.returncode:
            sys.exit(f"{client} failed ({done.returncode}): {done.stderr[-2000:]}")


def calls_per_second(seen: dict[str, float]) -> float:
    return seen["calls"] / (seen["last"] - seen["first"])


# --- loopbench's CPU per call, in this process --------------------------------------


async def loopbench_grids(base_url: str, samples: int, concurrency: int, out: Path) -> float:
    """The react grid on the depot set at ``concurrency`` requests in flight, written to
    ``out``: a warm-up repeat, then ``samples`` runs; the CPU seconds of the second."""
    from loopbench.harness.arms import parse_arms
    from loopbench.harness.grid import Grid, run_grid
    from loopbench.harness.models.openai_compat import Connection, OpenAICompatClient
    from loopbench.harness.results.store import ResultsFolder
    from loopbench.harness.runner import RunSettings
    from loopbench.tasks.loading import load_taskset

    taskset = load_taskset("depot")
    arms = parse_arms(["react"])
    repeats = -(-samples // len(taskset.tasks))
    settings = RunSettings(2 * concurrency)  # as `loopbench run --concurrency C` does
    with ResultsFolder.open(out, {"task_set": taskset.name, "model": "fake"}) as folder:
        connection = Connection(concurrency=concurrency)
        async with OpenAICompatClient(base_url, connection=connection) as client:
            # A warm-up repeat opens connections and fills caches before the clock starts.
            await run_grid(Grid(taskset, arms, 1, "fake"), client, folder, settings)
            cpu = time.process_time()
            await run_grid(Grid(taskset, arms, repeats + 1, "fake"), client, folder, settings)
            return time.process_time() - cpu


async def loopbench_cpu(base_url: str, samples: int, concurrency: int) -> float:
    from loopbench.harness.results.reading import read_records

    with tempfile.TemporaryDirectory() as tmp:
        cpu = await loopbench_grids(base_url, samples, concurrency, Path(tmp))
        made = sum(r.turns for r in read_records(tmp) if r.repeat >= 1)
    return 1000 * cpu / made


def bare_cpu(base_url: str, args: argparse.Namespace, concurrency: int) -> float:
    turns = args.tool_turns + 1
    asyncio.run(bare(base_url, concurrency, turns, concurrency, True))  # a warm-up
    served(base_url)
    cpu = time.process_time()
    asyncio.run(bare(base_url, args.samples, turns, concurrency, True))
    return 1000 * (time.process_time() - cpu) / served(base_url)["calls"]


def compare(rates: dict[str, list[float]], ours: str, theirs: str, unit: str) -> str:
    ratios = [a / b for a, b in zip(rates[ours], rates[theirs], strict=True)]
    shown = [f"{100 * r:.1f}%" if unit == "%" else f"{r:.1f}x" for r in ratios]
    middle = statistics.median(ratios)
    median = f"{100 * middle:.1f}%" if unit == "%" else f"{middle:.1f}x"
    return f"  {ours} / {theirs}, round by round: {', '.join(shown)}  (median {median})"


def main() -> None:
    parser = argparse.ArgumentParser(description="loopbench's overhead, side by side")
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--tool-turns", type=int, default=3, help="lookups before the answer")
    parser.add_argument("--concurrency", type=int, nargs="*", default=[16, 64, 256])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--inspect", help="a Python with inspect_ai installed")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--bare", metavar="BASE_URL", help=argparse.SUPPRESS)
    parser.add_argument("--conversations", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve(args.latency, args.tool_turns)
    turns = args.tool_turns + 1
    if args.bare:
        concurrency = args.concurrency[0]
        return asyncio.run(bare(args.bare, args.samples, turns, concurrency, args.conversations))

    clients = [c for c in CLIENTS if c != "Inspect AI" or args.inspect]
    with endpoint(args.latency, args.tool_turns) as base_url:
        calls = args.samples * turns
        print(
            f"react, {args.samples} samples x {turns} calls, endpoint latency "
            f"{args.latency * 1000:.0f} ms, {args.rounds} rounds; calls/s in the serving window"
        )
        for concurrency in args.concurrency:
            rates: dict[str, list[float]] = {client: [] for client in clients}
            for _ in range(args.rounds):
                for client in clients:
                    served(base_url)
                    run_client(client, base_url, args, concurrency)
                    seen = served(base_url)
                    if seen["calls"] < calls:
                        sys.exit(f"{client} made {seen['calls']:.0f} calls, not {calls}")
                    rates[client].append(calls_per_second(seen))
            ideal = concurrency / args.latency
            load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
            print(f"\nconcurrency {concurrency} (ideal {ideal:.0f} calls/s; load {load})")
            for client in clients:
                got = ", ".join(f"{rate:.0f}" for rate in rates[client])
                median = statistics.median(rates[client])
                print(f"  {client:<19} {got:<22} median {median:.0f}")
            print(compare(rates, "loopbench", "bare POSTs", "%"))
            print(compare(rates, "loopbench", "bare conversations", "%"))
            if args.inspect:
                print(compare(rates, "loopbench", "Inspect AI", "x"))
            own = asyncio.run(loopbench_cpu(base_url, args.samples, concurrency))
            served(base_url)
            least = bare_cpu(base_url, args, concurrency)
            print(
                f"  CPU per call in the client's process: loopbench {own:.2f} ms, bare "
                f"conversations {least:.2f} ms, loopbench's own {own - least:.2f} ms"
            )


if __name__ == "__main__":
    main()
