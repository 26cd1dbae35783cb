"""Where the model lives: base URL, model name and the API key's variable, by flag or env."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

BASE_URL_ENV = "LOOPBENCH_BASE_URL"
MODEL_ENV = "LOOPBENCH_MODEL"
DEFAULT_KEY_ENV = "LOOPBENCH_API_KEY"
FALLBACK_KEY_ENV = "OPENAI_API_KEY"


LOCAL = "local"


class EndpointNotConfigured(Exception):
    pass


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    model: str
    #: Never printed or recorded: excluded from repr, and records store only base_url and model.
    api_key: str | None = field(default=None, repr=False)


def wants_local_model(base_url: str | None, model: str | None) -> bool:
    """No endpoint configured at all, or ``--model local``: run the embedded model."""
    model = model or os.environ.get(MODEL_ENV)
    if model == LOCAL:
        if base_url or os.environ.get(BASE_URL_ENV):
            raise EndpointNotConfigured(
                "--model local starts the embedded model on loopback; drop --base-url "
                f"(and unset {BASE_URL_ENV}) or name the model that endpoint serves"
            )
        return True
    return not (base_url or os.environ.get(BASE_URL_ENV) or model)


def resolve_endpoint(
    base_url: str | None, model: str | None, api_key_env: str = DEFAULT_KEY_ENV
) -> Endpoint:
    base_url = base_url or os.environ.get(BASE_URL_ENV)
    model = model or os.environ.get(MODEL_ENV)
    missing = []
    if not base_url:
        missing.append(f"--base-url or {BASE_URL_ENV} (e.g. https://api.openai.com/v1)")
    if not model:
        missing.append(f"--model or {MODEL_ENV} (e.g. gpt-4o-mini)")
    if missing:
        raise EndpointNotConfigured(
            "no model endpoint is configured. Set "
            + " and ".join(missing)
            + f"; put the API key in {DEFAULT_KEY_ENV} or {FALLBACK_KEY_ENV}"
            " (or name another variable with --api-key-env). Or set neither to run the "
            "embedded local model."
        )
    assert base_url and model
    key = os.environ.get(api_key_env) or os.environ.get(FALLBACK_KEY_ENV) or None
    return Endpoint(base_url=base_url, model=model, api_key=key)


def without_credentials(base_url: str) -> str:
    """The URL with any user name and password it embeds removed: safe to record."""
    parts = urlsplit(base_url)
    if not (parts.username or parts.password):
        return base_url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit(parts._replace(netloc=netloc))
