"""Which API a model is spoken to in, and where Anthropic's is, with which key.

The provider is ``--provider`` (``provider`` in an experiment file, or a model entry's),
else ``anthropic`` for a model written ``anthropic/claude-...``, or when
ANTHROPIC_BASE_URL is set and no OpenAI-style base URL is (no ``--base-url``,
LOOPBENCH_BASE_URL or OPENAI_BASE_URL); else ``openai``, every endpoint before this.

Anthropic's base URL is the one given, else ANTHROPIC_BASE_URL, else
``https://api.anthropic.com``. Its key is the variable ``--api-key-env`` names when one is
named; else ANTHROPIC_API_KEY, but only for the URL that key is for (ANTHROPIC_BASE_URL's,
or Anthropic's own when that is unset): a key kept for Anthropic is never sent to another
host. A URL given by ``--base-url`` (a proxy of the same API) takes LOOPBENCH_API_KEY.
"""

from __future__ import annotations

import os
from typing import Literal

from loopbench.harness.models.anthropic_wire import MODEL_PREFIX
from loopbench.harness.models.endpoint import (
    DEFAULT_KEY_ENV,
    GIVEN,
    Endpoint,
    EndpointNotConfigured,
    check_base_url,
    check_key,
    environment_base_url,
    shown_url,
    without_credentials,
)

Provider = Literal["openai", "anthropic"]
OPENAI: Provider = "openai"
ANTHROPIC: Provider = "anthropic"
BASE_URL_ENV = "ANTHROPIC_BASE_URL"
KEY_ENV = "ANTHROPIC_API_KEY"
DEFAULT_URL = "https://api.anthropic.com"
#: Where the base URL is said to come from when none was given or set.
DEFAULT_SOURCE = "Anthropic's API, the default"


def chosen_provider(provider: Provider | None, model: str | None, base_url: str | None) -> Provider:
    """The API a model is spoken to in (see the module's docstring)."""
    if provider is not None:
        return provider
    if model is not None and model.startswith(MODEL_PREFIX):
        return ANTHROPIC
    # guard: anthropic-base-url-chooses-provider
    if not base_url and environment_base_url() is None and os.environ.get(BASE_URL_ENV):
        return ANTHROPIC
    return OPENAI


def resolve_anthropic(
    base_url: str | None, model: str | None, api_key_env: str = DEFAULT_KEY_ENV
) -> Endpoint:
    """Anthropic's endpoint for ``model``: its URL and key (see the module's docstring)."""
    source = GIVEN
    if not base_url:
        base_url, source = (
            (os.environ[BASE_URL_ENV], BASE_URL_ENV)
            if os.environ.get(BASE_URL_ENV)
            else (DEFAULT_URL, DEFAULT_SOURCE)
        )
    check_base_url(base_url, source)
    if not model:
        raise EndpointNotConfigured(
            f"the Anthropic endpoint {shown_url(base_url)!r} ({source}) needs the name of the "
            "model it serves: set --model (e.g. claude-sonnet-4-5)"
        )
    if api_key_env != DEFAULT_KEY_ENV:
        order = [api_key_env]  # named: the key meant for this URL
    # guard: anthropic-key-only-its-own-url
    elif _same(base_url, _keys_url()):
        order = [KEY_ENV, DEFAULT_KEY_ENV] if source == GIVEN else [KEY_ENV]
    else:  # a URL given that is not the one ANTHROPIC_API_KEY is for
        order = [DEFAULT_KEY_ENV]
    key_env = next((name for name in order if os.environ.get(name)), order[0])
    key = os.environ.get(key_env) or None
    check_key(key_env, key)
    return Endpoint(base_url, model, api_key=key, source=source, provider=ANTHROPIC)


def _keys_url() -> str:
    """The URL ANTHROPIC_API_KEY is for."""
    return os.environ.get(BASE_URL_ENV) or DEFAULT_URL


def _same(url: str, other: str) -> bool:
    """Whether two base URLs are one endpoint (credentials, case of the host, a trailing
    slash and ``/v1`` aside)."""

    def plain(u: str) -> str:
        return without_credentials(u).removesuffix("/v1").lower()

    return plain(url) == plain(other)
