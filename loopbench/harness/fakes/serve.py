"""A fake endpoint on loopback for a benchmark, a hand run or the docs' examples: scripted
replies (``loopbench.harness.fakes.fake_server``), or a scripted coder for a coding task set
(``loopbench.harness.fakes.code_responder``); speaking Anthropic's Messages API with --anthropic
(``loopbench.harness.fakes.anthropic_server``), its Message Batches beside it. ``loopbench
serve-fake`` starts it too.

    python -m loopbench.harness.fakes.serve --latency 0.05   # prints its base URL
    python -m loopbench.harness.fakes.serve --tasks coding   # a scripted coder for that set
    python -m loopbench.harness.fakes.serve --anthropic      # the Messages API, at
    ANTHROPIC_BASE_URL python -m loopbench.harness.fakes.serve --judge --false-pass 0.1  # a
    scripted judge (fakes/judge.py)
"""

from __future__ import annotations

import argparse
import sys
import threading
from dataclasses import dataclass

from loopbench.harness.fakes.anthropic_batch_server import AnthropicBatchServer
from loopbench.harness.fakes.anthropic_server import AnthropicFakeServer
from loopbench.harness.fakes.code_responder import CodeResponder
from loopbench.harness.fakes.fake_server import FakeServer, Responder, default_responder
from loopbench.harness.fakes.judge import ScriptedJudge
from loopbench.tasks.loading import load_taskset


@dataclass(frozen=True)
class FakeSettings:
    """What the fake answers, how, and where."""

    latency_s: float = 0.05
    port: int = 0
    """0 picks a free port."""
    tasks: str | None = None
    """A coding task set: answer its tasks as a scripted coder."""
    anthropic: bool = False
    """Speak Anthropic's Messages API instead of chat completions."""
    judge: bool = False
    """Answer as a scripted judge, erring at these rates (``loopbench.harness.fakes.judge``)."""
    false_pass: float = 0.0
    false_fail: float = 0.0
    seed: int = 0


def fake_server(settings: FakeSettings) -> FakeServer | AnthropicFakeServer:
    """The fake ``settings`` describe, not started."""
    responder: Responder = default_responder
    if settings.tasks:
        responder = CodeResponder(load_taskset(settings.tasks))
    if settings.judge:
        responder = ScriptedJudge(settings.false_pass, settings.false_fail, seed=settings.seed)
    server: FakeServer | AnthropicFakeServer = (
        AnthropicBatchServer(responder, latency_s=settings.latency_s)
        if settings.anthropic
        else FakeServer(responder, latency_s=settings.latency_s, keep_bodies=False)
    )
    server.port = settings.port
    return server


def serve_until_interrupted(server: FakeServer | AnthropicFakeServer, note: str = "") -> None:
    """Serve until Ctrl-C, having printed the base URL (and ``note`` on stderr)."""
    server.start()
    print(server.base_url, flush=True)
    if note:
        print(note, file=sys.stderr, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


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
        "--judge",
        action="store_true",
        help="answer as a scripted judge (loopbench/harness/fakes/judge.py)",
    )
    parser.add_argument("--false-pass", type=float, default=0.0, help="--judge: 1 - specificity")
    parser.add_argument("--false-fail", type=float, default=0.0, help="--judge: 1 - sensitivity")
    parser.add_argument("--seed", type=int, default=0, help="--judge: the seed of its errors")
    args = parser.parse_args()
    settings = FakeSettings(
        args.latency, args.port, args.tasks, args.anthropic, args.judge,
        args.false_pass, args.false_fail, args.seed,
    )  # fmt: skip
    serve_until_interrupted(fake_server(settings))


if __name__ == "__main__":
    main()
