"""The embedded model's server for the length of a run (``loopbench run`` with no endpoint
configured), and the line saying which model at which URL serves the run, printed before
the first request; the endpoints themselves are ``harness.endpoints``'."""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Iterator

import click

from harness.cli.errors import BadInput
from harness.endpoints import serving_line
from harness.models.local import MODEL_NAME, LocalModelError, LocalServer
from harness.models.settings import Endpoint

#: How the embedded model is named in the line that says it serves the run.
EMBEDDED = "the embedded model (SmolLM2-135M-Instruct on llama.cpp, {chat_format})"


@contextlib.contextmanager
def serving(local: bool, chat_format: str, endpoints: list[Endpoint]) -> Iterator[list[Endpoint]]:
    """The endpoints to use, said on stderr; for the embedded model, a server that lives as
    long as the run, said (with its URL and why it runs) before it starts.

    SIGTERM becomes an ordinary exit while it runs, so the server is stopped on every
    way out (success, error, Ctrl-C, SIGTERM).
    """
    if not local:
        click.echo(serving_line(endpoints), err=True)
        yield endpoints
        return
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    try:
        try:
            server = LocalServer(chat_format)
            served = [Endpoint(server.base_url, MODEL_NAME, source=endpoints[0].source)]
            embedded = EMBEDDED.format(chat_format=chat_format)
            click.echo(f"{serving_line(served, embedded)}; starting it ...", err=True)
            server.start()
        except LocalModelError as exc:
            raise BadInput(str(exc)) from None
        try:
            yield served
        finally:
            server.stop()
    finally:
        signal.signal(signal.SIGTERM, previous)
