"""Where the model lives: base URL, model name and the API key's variable, by flag or env.

A base URL is read from ``--base-url`` (or an experiment file), then LOOPBENCH_BASE_URL,
then OPENAI_BASE_URL, the variable the openai SDK, Inspect AI and LiteLLM read; a key
from the variable ``--api-key-env`` names (LOOPBENCH_API_KEY), then OPENAI_API_KEY. A
URL found in OPENAI_BASE_URL takes its key from OPENAI_API_KEY first: a key kept for
another endpoint is not sent to it. The embedded model runs only when none of these
names an endpoint or a model (``why_local_model``), or with ``--model local``.

A base URL or key that no request could carry is refused here, in one line that never
shows the key or a user name or password the URL embeds. The URL is read strictly: a user
name or password holding ``/``, ``?``, ``#`` or ``@`` must be percent-encoded, as
otherwise where the credentials end, and so which host is meant, is a guess.

``protecting`` makes the process hold the endpoints' secrets (``loopbench.harness.redaction``), so
every writer redacts them.
"""

from __future__ import annotations

import base64
import contextlib
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit, urlunsplit

from loopbench.harness.errors import BadInput
from loopbench.harness.models.model_list import listed_models
from loopbench.harness.redaction import protected

BASE_URL_ENV = "LOOPBENCH_BASE_URL"
OPENAI_BASE_URL_ENV = "OPENAI_BASE_URL"
#: Where a base URL is read when no flag or file gives one, the first set first.
BASE_URL_ENVS = (BASE_URL_ENV, OPENAI_BASE_URL_ENV)
MODEL_ENV = "LOOPBENCH_MODEL"
DEFAULT_KEY_ENV = "LOOPBENCH_API_KEY"
FALLBACK_KEY_ENV = "OPENAI_API_KEY"


LOCAL = "local"
#: Where a base URL given by ``--base-url`` or an experiment file is said to come from.
GIVEN = "--base-url"


class EndpointNotConfigured(BadInput):
    pass


@dataclass(frozen=True)
class Endpoint:
    #: As given: it may embed a user name and password, which the client sends as Basic auth.
    base_url: str
    model: str
    #: Never printed or recorded: excluded from repr, and records store only base_url and model.
    api_key: str | None = field(default=None, repr=False)
    #: Where base_url was found (``--base-url``, or the variable that held it), as said on
    #: stderr before the first request.
    source: str = GIVEN
    #: The API it speaks: ``openai`` (chat completions) or ``anthropic`` (Messages).
    provider: str = "openai"

    def __repr__(self) -> str:
        return f"Endpoint(base_url={without_credentials(self.base_url)!r}, model={self.model!r})"


def environment_base_url() -> tuple[str, str] | None:
    """The base URL the environment names, and the variable that holds it: the first of
    ``BASE_URL_ENVS`` set (an empty one counts as unset, as a shell's ``export X=``)."""
    # guard: endpoints-openai-base-url-read
    for name in BASE_URL_ENVS:
        if value := os.environ.get(name):
            return value, name
    return None


#: Why the embedded model serves a run, as said on stderr before it starts.
ASKED_FOR_LOCAL = f"--model {LOCAL}"
NOTHING_CONFIGURED = (
    f"no endpoint is configured: no --base-url, {BASE_URL_ENV}, {OPENAI_BASE_URL_ENV}, "
    f"--model or {MODEL_ENV}"
)


def why_local_model(base_url: str | None, model: str | None) -> str | None:
    """Why the embedded model runs, or None when an endpoint is to be used: no endpoint
    configured anywhere (no base URL, no model, by flag, file or variable), or ``--model
    local``."""
    model = model or os.environ.get(MODEL_ENV)
    if model == LOCAL:
        if base_url or os.environ.get(BASE_URL_ENV):
            raise EndpointNotConfigured(
                "--model local starts the embedded model on loopback; drop --base-url "
                f"(and unset {BASE_URL_ENV}) or name the model that endpoint serves"
            )
        # Asked for by name: OPENAI_BASE_URL, which other tools read too, stands aside.
        return ASKED_FOR_LOCAL
    if base_url or environment_base_url() or model:
        return None
    return NOTHING_CONFIGURED


def resolve_endpoint(
    base_url: str | None, model: str | None, api_key_env: str = DEFAULT_KEY_ENV
) -> Endpoint:
    source = GIVEN
    if not base_url and (found := environment_base_url()):
        base_url, source = found
    model = model or os.environ.get(MODEL_ENV)
    if base_url:
        check_base_url(base_url, source)
    if base_url and not model and source == OPENAI_BASE_URL_ENV:
        model, source = _only_listed_model(base_url, api_key_env)
    if base_url and not model:
        raise EndpointNotConfigured(
            f"the endpoint {shown_url(base_url)!r} ({source}) needs the name of the model it "
            f"serves: set --model or {MODEL_ENV} (e.g. gpt-4o-mini), or give --model local "
            "to run the embedded model instead"
        )
    if not base_url:
        raise EndpointNotConfigured(
            f"no endpoint is configured{f' for the model {model!r}' if model else ''}: set "
            "--base-url, "
            f"{BASE_URL_ENV} or {OPENAI_BASE_URL_ENV} (e.g. https://api.openai.com/v1); put "
            f"the API key in {DEFAULT_KEY_ENV} or {FALLBACK_KEY_ENV} (or name another "
            "variable with --api-key-env). Or set none of them, and no --model, to run the "
            "embedded local model."
        )
    assert model
    key_env, key = _key(api_key_env, source.partition(";")[0])
    check_key(key_env, key)
    return Endpoint(base_url=base_url, model=model, api_key=key, source=source)


#: Where the model's name was found when OPENAI_BASE_URL's endpoint lists only one.
ONLY_LISTED = f"{OPENAI_BASE_URL_ENV}; the one model its /models lists"


def _only_listed_model(base_url: str, api_key_env: str) -> tuple[str | None, str]:
    """The model an endpoint found in OPENAI_BASE_URL serves when it lists exactly one at
    ``GET /models``, and where the run is said to find it; else no model (the name is then
    asked for as before)."""
    key_env, key = _key(api_key_env, OPENAI_BASE_URL_ENV)
    check_key(key_env, key)
    user, password = credentials(base_url)
    headers = {}
    if key:
        headers["authorization"] = f"Bearer {key}"
    elif user is not None:  # as the client sends them: HTTP Basic
        pair = base64.b64encode(f"{user}:{password}".encode()).decode()
        headers["authorization"] = f"Basic {pair}"
    listed = listed_models(without_credentials(base_url), headers)
    # guard: only-one-listed-model-taken
    if listed is not None and len(listed) == 1:
        return listed[0], ONLY_LISTED
    return None, OPENAI_BASE_URL_ENV


def check_key(key_env: str, key: str | None) -> None:
    """Refuse a key no header could carry, naming its variable, never the key."""
    if key is not None and not all("!" <= c <= "~" for c in key):
        at = next(i for i, c in enumerate(key) if not "!" <= c <= "~")
        raise EndpointNotConfigured(
            f"the API key in {key_env} has a character an HTTP header cannot carry (a space, "
            f"a line break or other control character, or a non-ASCII letter) at position "
            f"{at + 1} of {len(key)}; set {key_env} to the key alone"
        )


def _key(api_key_env: str, source: str) -> tuple[str, str | None]:
    """The variable the key is read from, and the key (None when none is set): the one
    ``api_key_env`` names, then OPENAI_API_KEY; OPENAI_API_KEY first for a URL found in
    OPENAI_BASE_URL, unless another variable was named."""
    order = [api_key_env, FALLBACK_KEY_ENV]
    if source == OPENAI_BASE_URL_ENV and api_key_env == DEFAULT_KEY_ENV:
        order.reverse()
    key_env = next((name for name in order if os.environ.get(name)), order[-1])
    return key_env, os.environ.get(key_env) or None


def check_base_url(base_url: str, source: str = GIVEN) -> None:
    """Refuse a base URL no request could go to, naming it without its credentials."""
    fix = "give one like https://api.openai.com/v1 or http://127.0.0.1:8000/v1"
    authority = _authority(base_url)
    # guard: secrets-does-not-end-credentials
    if authority.count("@") > 1 or "@" in base_url.partition("://")[2][len(authority) :]:
        raise EndpointNotConfigured(
            f"the base URL ({source}) has an '@' that does not end its "
            "user name and password: percent-encode a '/', '?', '#' or '@' in them (%2F, "
            "%3F, %23, %40). The URL is not shown, as it may hold a password"
        )
    shown = f"the base URL {shown_url(base_url)!r} ({source})"
    try:
        parts = urlsplit(base_url)
    except ValueError as exc:
        raise EndpointNotConfigured(f"{shown} is not a URL ({exc}); {fix}") from None
    if parts.scheme not in ("http", "https"):
        raise EndpointNotConfigured(f"{shown} is not an http or https URL; {fix}")
    if not parts.hostname:
        raise EndpointNotConfigured(f"{shown} names no host; {fix}")
    port = _netloc_host(parts.netloc).rpartition("]")[2].partition(":")[2]
    if port and not (port.isdigit() and 1 <= int(port) <= 65535):
        raise EndpointNotConfigured(
            f"{shown}: its port {port!r} is not a number from 1 to 65535; {fix}"
        )
    import httpx  # here: a command that only reads the environment's secrets starts faster

    try:
        httpx.URL(base_url)
    except httpx.InvalidURL as exc:
        cause = str(exc)
        for secret in (parts.username, parts.password, *credentials(base_url), parts.query):
            cause = cause.replace(secret, "[redacted]") if secret else cause
        raise EndpointNotConfigured(f"{shown} is not a URL ({cause}); {fix}") from None


def credentials(base_url: str) -> tuple[str | None, str]:
    """The user name and password a URL embeds (``http://user:password@host``), unescaped."""
    userinfo, at, _ = _authority(base_url).rpartition("@")
    if not at:
        return None, ""
    user, _, password = userinfo.partition(":")
    return unquote(user), unquote(password)


def _authority(url: str) -> str:
    """What stands between ``scheme://`` and the first ``/``, ``?`` or ``#`` after it."""
    return re.split("[/?#]", url.partition("://")[2], maxsplit=1)[0]


Secrets = tuple[list[str | None], list[tuple[str, str]]]


def secrets_of(urls: Iterable[str | None], keys: Iterable[str | None]) -> Secrets:
    """These keys and the user names and passwords these URLs embed, as secrets and
    ``(user, password)`` pairs for ``loopbench.harness.redaction``."""
    found: list[str | None] = list(keys)
    pairs = []
    for url in urls:
        user, password = credentials(url or "")
        if user is not None:
            found += [user, password]
            pairs.append((user, password))
    return found, pairs


def environment_secrets() -> Secrets:
    """The keys and URL credentials the usual variables hold, for a command that reads no
    endpoint but may still print or write what one sent."""
    return secrets_of(
        [os.environ.get(name) for name in (*BASE_URL_ENVS, "ANTHROPIC_BASE_URL")],
        [os.environ.get(name) for name in (DEFAULT_KEY_ENV, FALLBACK_KEY_ENV, "ANTHROPIC_API_KEY")],
    )


@contextlib.contextmanager
def protecting(endpoints: Iterable[Endpoint]) -> Iterator[None]:
    """Within it, every writer redacts these endpoints' keys and URL credentials."""
    endpoints = list(endpoints)
    with protected(*secrets_of([e.base_url for e in endpoints], [e.api_key for e in endpoints])):
        yield


def without_credentials(base_url: str) -> str:
    """The URL with any user name and password it embeds removed, and no trailing slash:
    safe to record, and the same endpoint whether or not it was written with the slash."""
    try:
        parts = urlsplit(base_url)
    except ValueError:  # a URL that does not parse: cut what could be credentials by hand
        scheme, sep, rest = base_url.partition("://")
        netloc = _authority(base_url)
        return f"{scheme}{sep}{_netloc_host(netloc)}{rest[len(netloc) :]}".rstrip("/")
    netloc = _netloc_host(parts.netloc)
    return urlunsplit(parts._replace(netloc=netloc, path=parts.path.rstrip("/")))


def shown_url(base_url: str) -> str:
    """The URL as said to a person: without credentials, and without its query string and
    fragment (``?...`` marks one was there), where a key may be passed too."""
    safe = without_credentials(base_url)
    cut = re.split("[?#]", safe, maxsplit=1)
    return cut[0] + ("?..." if len(cut) > 1 else "")


def _netloc_host(netloc: str) -> str:
    """``host[:port]`` of a URL's network location, as written (an IPv6 host keeps its
    brackets), without ``user:password@``."""
    return netloc.rpartition("@")[2]
