"""``loopbench serve-fake``: the scripted endpoint the docs' examples are checked against, on
loopback, until Ctrl-C (``loopbench.harness.fakes.serve``; ``python -m
loopbench.harness.fakes.serve`` too)."""

from __future__ import annotations

import signal
import sys

import click

from loopbench.harness.cli.bundles import bundled
from loopbench.harness.cli.errors import Command, Finite
from loopbench.harness.fakes.serve import FakeSettings, fake_server, serve_until_interrupted


@click.command("serve-fake", cls=Command)
@click.option(
    "--latency",
    "latency_s",
    type=Finite(0, 60),
    default=0.05,
    show_default=True,
    help="Seconds before each reply (0 to 60).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    help="Port on 127.0.0.1 (1 to 65535); 0, the default, picks a free one.",
)
@click.option(
    "--tasks",
    help="A coding task set (e.g. coding): answer its tasks as a scripted coder, wrong at "
    "first and fixed when shown a failing test (docs/coding.md).",
)
@click.option(
    "--anthropic",
    is_flag=True,
    help="Speak Anthropic's Messages API (POST /v1/messages) instead of chat completions.",
)
@click.option("--judge", is_flag=True, help="Answer as a scripted judge (docs/judge.md).")
@click.option(
    "--false-pass",
    type=Finite(0, 1),
    default=0.0,
    show_default=True,
    help="--judge: the share of wrong answers it passes.",
)
@click.option(
    "--false-fail",
    type=Finite(0, 1),
    default=0.0,
    show_default=True,
    help="--judge: the share of right answers it fails.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="--judge: its errors' seed.")
@bundled("settings", FakeSettings)
def serve_fake_command(settings: FakeSettings) -> None:
    """Serve a scripted OpenAI-compatible endpoint on loopback and print its base URL.

    It drives every shipped pattern to an answer under the model name ``fake`` (any name
    is answered; ``GET /v1/models`` lists ``fake``), with no model and no key: the endpoint
    the docs' examples are checked against. Stop it with Ctrl-C.
    """
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    note = "model name: fake (any name is answered); stop with Ctrl-C"
    serve_until_interrupted(fake_server(settings), note)
