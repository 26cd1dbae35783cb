"""``loopbench serve-local``: the embedded model on loopback, until Ctrl-C."""

from __future__ import annotations

import signal
import sys
import threading

import click

from loopbench.harness.cli.errors import Command
from loopbench.harness.models.local import CHAT_FORMATS, MODEL_NAME, LocalServer


# guard: paths-serve-local-port-1
@click.command("serve-local", cls=Command)
@click.option(
    "--chat-format",
    type=click.Choice(CHAT_FORMATS),
    default="chatml",
    show_default=True,
    help="llama.cpp chat format (chatml-function-calling parses "
    "tool calls but drops tool results from the prompt).",
)
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    help="Port on 127.0.0.1 (1 to 65535); a free one by default.",
)
def serve_local_command(chat_format: str, port: int | None) -> None:
    """Serve the embedded model on an OpenAI-compatible API and print its base URL."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    server = LocalServer(chat_format, port=port).start()
    try:
        click.echo(server.base_url)
        click.echo(f"model name: {MODEL_NAME}; stop with Ctrl-C", err=True)
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
