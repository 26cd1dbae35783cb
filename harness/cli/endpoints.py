"""Where ``loopbench run`` sends its requests: each model's endpoints (several for one
model are its replicas), the embedded model's server for the length of a run, and the
HTTP clients, one per endpoint."""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Iterator
from dataclasses import dataclass

import click

from harness.cli.errors import BadInput
from harness.experiment import ModelEntry
from harness.models.local import MODEL_NAME, LocalModelError, LocalServer, model_file
from harness.models.openai_compat import OpenAICompatClient, RetryPolicy
from harness.models.settings import (
    LOCAL,
    Endpoint,
    EndpointNotConfigured,
    resolve_endpoint,
    wants_local_model,
)


def resolve_endpoints(
    wanted: list[ModelEntry], base_urls: tuple[str, ...], key_env: str, chat_format: str
) -> tuple[bool, list[Endpoint]]:
    """Each model's endpoints (several for one model are its replicas), and whether it is
    the embedded model (which runs alone)."""
    if len(wanted) <= 1:
        entry = wanted[0] if wanted else ModelEntry(name="-")
        model = entry.name if wanted else None
        urls: list[str | None] = [entry.base_url] if entry.base_url else [*base_urls] or [None]
        if wants_local_model(urls[0], model):
            model_file()  # says how to install the extra before anything is written
            return True, [Endpoint(f"llama.cpp on loopback ({chat_format})", MODEL_NAME)]
        return False, [resolve_endpoint(url, model, entry.api_key_env or key_env) for url in urls]
    names = [entry.name for entry in wanted]
    if len(base_urls) > 1 and len(base_urls) != len(wanted):
        raise EndpointNotConfigured(
            f"{len(base_urls)} --base-url for {len(wanted)} --model: give one for every "
            "model, or one per model in the same order (replicas, several --base-url of "
            "one model, are for a grid of one --model)"
        )
    if LOCAL in names:
        raise EndpointNotConfigured("--model local runs the embedded model alone; drop it")
    if len(set(names)) < len(names):
        raise EndpointNotConfigured(f"a model is named twice in {', '.join(names)}")
    shared = base_urls[0] if len(base_urls) == 1 else None
    return False, [
        resolve_endpoint(
            entry.base_url or (base_urls[i] if len(base_urls) > 1 else shared),
            entry.name,
            entry.api_key_env or key_env,
        )
        for i, entry in enumerate(wanted)
    ]


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


@dataclass(frozen=True)
class Connection:
    """How the HTTP client talks to the endpoint."""

    timeout: float
    max_retries: int
    rate_limit: float | None


async def open_clients(
    stack: contextlib.AsyncExitStack,
    endpoints: list[Endpoint],
    connection: Connection,
    concurrency: int,
) -> dict[str, list[OpenAICompatClient]]:
    """An HTTP client per endpoint, by model (several for one model are its replicas),
    closed with ``stack``."""
    clients: dict[str, list[OpenAICompatClient]] = {}
    for endpoint in endpoints:
        clients.setdefault(endpoint.model, []).append(
            await stack.enter_async_context(
                OpenAICompatClient(
                    endpoint.base_url,
                    endpoint.api_key,
                    timeout_s=connection.timeout,
                    max_concurrency=concurrency,
                    retry=RetryPolicy(max_retries=connection.max_retries),
                    rate_limit=connection.rate_limit,
                )
            )
        )
    return clients


def throttle_notes(clients: dict[str, list[OpenAICompatClient]]) -> list[str]:
    """A note for each endpoint that answered 429 and had its concurrency cut."""
    return [
        f"note: {model}'s endpoint answered 429; concurrency was halved {used.concurrency.cuts} "
        f"times, to {used.concurrency.lowest} at the lowest (pass --rate-limit to pace it)"
        for model, replicas in clients.items()
        for used in replicas
        if used.concurrency.cuts
    ]
