"""Where a run's requests go: each model's endpoints (several for one model are its
replicas), and one HTTP client per endpoint, opened the same way wherever the runs are
made (this process, or a Ray worker reading its keys from its own environment); the
embedded model's server for the length of a run when no endpoint is configured, and the
line saying which model at which URL serves the run, said before the first request."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence

from loopbench.harness.config import ModelEntry, RunConfig
from loopbench.harness.models.anthropic import AnthropicClient
from loopbench.harness.models.anthropic_batches import AnthropicBatches
from loopbench.harness.models.anthropic_endpoint import (
    ANTHROPIC,
    OPENAI,
    Provider,
    chosen_provider,
    resolve_anthropic,
)
from loopbench.harness.models.batch_api import BatchApi
from loopbench.harness.models.batching import BatchingClient, BatchSettings
from loopbench.harness.models.endpoint import (
    LOCAL,
    MODEL_ENV,
    Endpoint,
    EndpointNotConfigured,
    resolve_endpoint,
    shown_url,
    why_local_model,
)
from loopbench.harness.models.http_client import HttpClient
from loopbench.harness.models.local import MODEL_NAME, LocalServer, model_file
from loopbench.harness.models.openai_compat import Connection, OpenAICompatClient

#: The endpoint the embedded model stands for until its server is up.
LOCAL_ENDPOINT = "llama.cpp on loopback"
#: How the embedded model is named in the line that says it serves the run.
EMBEDDED = "the embedded model (SmolLM2-135M-Instruct on llama.cpp, {chat_format})"


def resolve_endpoints(config: RunConfig) -> tuple[bool, list[Endpoint]]:
    """Each model's endpoints (several for one model are its replicas), and whether it is
    the embedded model (which runs alone): the one resolution ``loopbench run``, Ray
    workers and a script (docs/ray.md) make, from the config and the environment
    (``loopbench.harness.models.endpoint``: flags and files, then LOOPBENCH_*, then OPENAI_*)."""
    wanted, base_urls, key_env = config.models, config.base_urls, config.api_key_env
    given = [*base_urls, *(entry.base_url for entry in wanted if entry.base_url is not None)]
    # guard: endpoints-blank-base-url-config
    if any(not url.strip() for url in given):
        # Read as unset, it would send the run to the environment's endpoint, or the
        # embedded model.
        raise EndpointNotConfigured(
            "a base URL is empty (--base-url, base_urls or a model's base_url): give one "
            "like https://api.openai.com/v1, or leave it out"
        )
    if any(not entry.name.strip() for entry in wanted):
        raise EndpointNotConfigured(
            "a model's name is blank (--model or a model's name): give the name the "
            "endpoint serves (e.g. gpt-4o-mini)"
        )
    if len(wanted) <= 1:
        entry = wanted[0] if wanted else ModelEntry(name="-")
        model = entry.name if wanted else None
        urls: list[str | None] = [entry.base_url] if entry.base_url else [*base_urls] or [None]
        provider = chosen_provider(
            entry.provider or config.provider, model or os.environ.get(MODEL_ENV), urls[0]
        )
        if provider == ANTHROPIC and (model or os.environ.get(MODEL_ENV)) == LOCAL:
            raise EndpointNotConfigured(
                "--model local is the embedded model, not one Anthropic serves: drop "
                "--provider anthropic (and unset ANTHROPIC_BASE_URL), or name a Claude model"
            )
        if provider == OPENAI and (why := why_local_model(urls[0], model)):
            model_file()  # says how to install the extra before anything is written
            where = f"{LOCAL_ENDPOINT} ({config.local_chat_format})"
            return True, [Endpoint(where, MODEL_NAME, source=why)]
        key_env = entry.api_key_env or key_env
        return False, [_resolve(url, model, key_env, provider) for url in urls]
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
    endpoints = []
    for i, entry in enumerate(wanted):
        url = entry.base_url or (base_urls[i] if len(base_urls) > 1 else shared)
        provider = chosen_provider(entry.provider or config.provider, entry.name, url)
        endpoints.append(_resolve(url, entry.name, entry.api_key_env or key_env, provider))
    return False, endpoints


def _resolve(url: str | None, model: str | None, key_env: str, provider: Provider) -> Endpoint:
    """One endpoint, in the API it speaks."""
    if provider == ANTHROPIC:
        return resolve_anthropic(url, model, key_env)
    return resolve_endpoint(url, model, key_env)


def serving_line(endpoints: Sequence[Endpoint], embedded: str = "") -> str:
    """Which model at which URL serves a run, and why there, in one line: each model with
    its replicas' URLs (never their credentials or query strings) and where they were
    found; ``embedded`` describes the embedded model, when it is the one."""
    models: dict[str, list[Endpoint]] = {}
    for endpoint in endpoints:
        models.setdefault(endpoint.model, []).append(endpoint)
    said = []
    for model, replicas in models.items():
        urls = ", ".join(dict.fromkeys(shown_url(e.base_url) for e in replicas))
        sources = ", ".join(dict.fromkeys(e.source for e in replicas))
        named = f"{embedded} {model}" if embedded else model
        api = ", Anthropic's Messages API" if replicas[0].provider == ANTHROPIC else ""
        said.append(f"{named} at {urls} ({sources}{api})")
    return "serving this run: " + "; ".join(said)


def connection(config: RunConfig, concurrency: int) -> Connection:
    """How each client talks to its endpoint; ``concurrency``: its requests at once."""
    return Connection(
        config.timeout_s,
        config.max_retries,
        config.rate_limit,
        concurrency,
        max_response_mb=config.max_response_mb,
        stream=config.stream,
        stream_idle_s=config.stream_idle_s,
    )


async def open_clients(
    stack: contextlib.AsyncExitStack,
    endpoints: list[Endpoint],
    how: Connection,
    batch: BatchSettings | None = None,
) -> dict[str, list[HttpClient | BatchingClient]]:
    """An HTTP client per endpoint, in the API it speaks, by model (several for one model
    are its replicas), closed with ``stack``; with ``batch``, each through its endpoint's
    batch API, OpenAI's or Anthropic's (``loopbench.harness.models.batching``)."""
    clients: dict[str, list[HttpClient | BatchingClient]] = {}
    for endpoint in endpoints:
        kind = AnthropicClient if endpoint.provider == ANTHROPIC else OpenAICompatClient
        http = await stack.enter_async_context(kind(endpoint.base_url, endpoint.api_key, how))
        client: HttpClient | BatchingClient = http
        if batch is not None:
            wire = AnthropicBatches if endpoint.provider == ANTHROPIC else BatchApi
            api = wire(endpoint.base_url, endpoint.api_key, how.timeout_s)
            client = await stack.enter_async_context(BatchingClient(http, api, batch))
        clients.setdefault(endpoint.model, []).append(client)
    return clients


def throttle_notes(clients: dict[str, list[HttpClient | BatchingClient]]) -> list[str]:
    """A note for each endpoint that answered 429 and had its concurrency cut."""
    return [
        f"note: {model}'s endpoint answered 429; concurrency was halved {used.concurrency.cuts} "
        f"times, to {used.concurrency.lowest} at the lowest (pass --rate-limit to pace it)"
        for model, replicas in clients.items()
        for used in replicas
        if used.concurrency.cuts
    ]


@contextlib.contextmanager
def serving(
    local: bool, chat_format: str, endpoints: list[Endpoint], say: Callable[[str], None]
) -> Iterator[list[Endpoint]]:
    """The endpoints to use, said (``say``); for the embedded model, a server that lives as
    long as the run, said (with its URL and why it runs) before it starts.

    SIGTERM becomes an ordinary exit while it runs, so the server is stopped on every
    way out (success, error, Ctrl-C, SIGTERM).
    """
    if not local:
        say(serving_line(endpoints))
        yield endpoints
        return
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    try:
        server = LocalServer(chat_format)
        served = [Endpoint(server.base_url, MODEL_NAME, source=endpoints[0].source)]
        embedded = EMBEDDED.format(chat_format=chat_format)
        say(f"{serving_line(served, embedded)}; starting it ...")
        server.start()
        try:
            yield served
        finally:
            server.stop()
    finally:
        signal.signal(signal.SIGTERM, previous)
