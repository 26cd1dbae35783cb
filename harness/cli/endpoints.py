"""The embedded model's server for the length of a run (``loopbench run`` with no endpoint
configured); the endpoints themselves are ``harness.endpoints``'."""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Iterator

import click

from harness.cli.errors import BadInput
from harness.models.local import MODEL_NAME, LocalModelError, LocalServer
from harness.models.settings import (
    Endpoint,
)


@contextlib.contextmanager
def serving(
    local: bool, chat_format: str, endpoints: list[Endpoint], quiet: bool
) -> Iterator[list[Endpoint]]:
    """The endpoints to use; for the embedded model, a server that lives as long as the run.

    SIGTERM becomes an ordinary exit while it runs, so the server is stopped on every
    way out (success, error, Ctrl-C, SIGTERM).
    """
    if not local:
        yield endpoints
        return
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    try:
        if not quiet:
            click.echo("starting the embedded model (SmolLM2-135M on llama.cpp) ...", err=True)
        try:
            server = LocalServer(chat_format).start()
        except LocalModelError as exc:
            raise BadInput(str(exc)) from None
        try:
            yield [Endpoint(server.base_url, MODEL_NAME)]
        finally:
            server.stop()
    finally:
        signal.signal(signal.SIGTERM, previous)
