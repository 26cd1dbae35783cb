"""The embedded local model on this machine: speed, seconds per run, and how often it parses.

    .venv/bin/python bench/local_model.py                           # tokens per second
    .venv/bin/python bench/local_model.py --results results/demo    # + per-arm figures
    .venv/bin/python bench/local_model.py --results DIR --plot out.png

Prompt speed: prompts of about 600 tokens, each new (nothing cached), one output token.
Generation speed: a short prompt and up to 200 output tokens. Each is the median of
three requests to a freshly started server, with nothing else running on it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from pathlib import Path

from loopbench.harness.models.local import MODEL_NAME, LocalServer
from loopbench.harness.models.openai_compat import Connection, OpenAICompatClient
from loopbench.harness.models.types import Message, ModelRequest
from loopbench.harness.report.plots import plot_outcomes
from loopbench.harness.report.table import summarize
from loopbench.harness.results.frames import records_frame
from loopbench.harness.results.reading import read_records

FILLER = "The depot keeps a ledger of every truck, its route, its driver and the hours it ran. "


async def timed(client: OpenAICompatClient, prompt: str, max_tokens: int) -> tuple[float, int, int]:
    request = ModelRequest(MODEL_NAME, (Message("user", prompt),), max_output_tokens=max_tokens)
    began = time.perf_counter()
    response = await client.complete(request)
    elapsed = time.perf_counter() - began
    return elapsed, response.usage.input_tokens, response.usage.output_tokens


async def speeds(base_url: str) -> dict[str, float]:
    async with OpenAICompatClient(base_url, connection=Connection(timeout_s=300)) as client:
        await timed(client, "Say hello.", 4)  # load the weights into memory first
        prompt_rates, generation_rates = [], []
        for i in range(3):
            seconds, tokens_in, _ = await timed(client, f"Note {i}. " + FILLER * 34, 1)
            prompt_rates.append(tokens_in / seconds)
            story = f"Write a long story ({i}) about a lighthouse keeper and a storm."
            seconds, _, tokens_out = await timed(client, story, 200)
            generation_rates.append(tokens_out / seconds)
    return {
        "prompt_tokens_per_s": statistics.median(prompt_rates),
        "generation_tokens_per_s": statistics.median(generation_rates),
    }


def per_arm(results: Path) -> str:
    frame = records_frame(read_records(results))
    lines = [
        "| arm | runs | s per run (mean) | p50 s | turns | turns parsed |",
        "|---|---|---|---|---|---|",
    ]
    for arm, runs in frame.groupby("arm"):
        turns = int(runs["turns"].sum())
        parsed = 1 - runs["parse_failures"].sum() / turns if turns else float("nan")
        lines.append(
            f"| {arm} | {len(runs)} | {runs['latency_s'].mean():.2f} | "
            f"{runs['latency_s'].median():.2f} | {runs['turns'].mean():.1f} | {parsed:.0%} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description="the embedded model's speed on this machine")
    parser.add_argument("--results", type=Path, help="a results folder from the local model")
    parser.add_argument("--plot", type=Path, help="write a plot of how runs ended, per arm")
    parser.add_argument("--no-speed", action="store_true", help="skip the tokens-per-second test")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores; model: {MODEL_NAME} on llama.cpp")
    if not args.no_speed:
        with LocalServer() as server:
            got = asyncio.run(speeds(server.base_url))
        print(
            f"prompt: {got['prompt_tokens_per_s']:.0f} tokens/s; "
            f"generation: {got['generation_tokens_per_s']:.0f} tokens/s"
        )
    if args.results:
        print(per_arm(args.results))
    if args.plot and args.results:
        summary = summarize(records_frame(read_records(args.results)))
        plot_outcomes(summary, args.plot, f"How runs ended: depot questions, {MODEL_NAME}")
        print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
