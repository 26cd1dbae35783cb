"""A fake endpoint on loopback for a benchmark or a hand run: scripted replies
(``harness.fakes.fake_server``), or a scripted coder for a coding task set
(``harness.fakes.code_responder``); speaking Anthropic's Messages API with --anthropic
(``harness.fakes.anthropic_server``), its Message Batches beside it.

    python -m harness.fakes.serve --latency 0.05   # prints its base URL
    python -m harness.fakes.serve --tasks coding   # a scripted coder for that set
    python -m harness.fakes.serve --anthropic      # the Messages API, at ANTHROPIC_BASE_URL
    python -m harness.fakes.serve --judge --false-pass 0.1  # a scripted judge (fakes/judge.py)
"""

from __future__ import annotations

import argparse
import threading

from harness.fakes.anthropic_batch_server import AnthropicBatchServer
from harness.fakes.anthropic_server import AnthropicFakeServer
from harness.fakes.code_responder import CodeResponder
from harness.fakes.fake_server import FakeServer, Responder, default_responder
from harness.fakes.judge import ScriptedJudge
from tasks.loading import load_taskset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.05, help="seconds before each reply")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument(
        "--tasks",
        help="a coding task set: answer its tasks as a scripted coder (see code_responder)",
    )
    parser.add_argument(
        "--anthropic",
        action="store_true",
        help="speak Anthropic's Messages API (POST /v1/messages) instead of chat completions",
    )
    parser.add_argument(
        "--judge", action="store_true", help="answer as a scripted judge (harness/fakes/judge.py)"
    )
    parser.add_argument("--false-pass", type=float, default=0.0, help="--judge: 1 - specificity")
    parser.add_argument("--false-fail", type=float, default=0.0, help="--judge: 1 - sensitivity")
    parser.add_argument("--seed", type=int, default=0, help="--judge: the seed of its errors")
    args = parser.parse_args()
    responder: Responder = default_responder
    if args.tasks:
        responder = CodeResponder(load_taskset(args.tasks))
    if args.judge:
        responder = ScriptedJudge(args.false_pass, args.false_fail, seed=args.seed)
    server: FakeServer | AnthropicFakeServer = (
        AnthropicBatchServer(responder, latency_s=args.latency)
        if args.anthropic
        else FakeServer(responder, latency_s=args.latency, keep_bodies=False)
    )
    server.port = args.port
    server.start()
    print(server.base_url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
