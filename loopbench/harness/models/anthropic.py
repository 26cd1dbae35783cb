"""A client for Anthropic's Messages API, ``POST {base_url}/v1/messages``, spoken natively.

The wire is ``loopbench.harness.models.anthropic_wire``; retries, request slots, the time limit,
the reply's size bound and redaction are ``loopbench.harness.models.http_client``'s, as for the
OpenAI-compatible client. Beyond that client's retried statuses, 529 (the API is
overloaded) is retried too, and it halves the requests in flight as a 429 does. A retry
waits what ``retry-after`` asks; a 429 that gives none waits until the limit it hit is
reset (``anthropic-ratelimit-*-reset`` where ``-remaining`` is 0).

The key goes in ``x-api-key``; a base URL may end in ``/v1`` or not (the SDKs' own
``ANTHROPIC_BASE_URL`` does not). A user name and password in it are sent as Basic auth
when there is no key, and never reported, as for the other client.

With ``Connection.stream`` (``--stream``) the request asks ``stream: true`` and the
Messages events are built back into the whole message by
``loopbench.harness.models.anthropic_stream``, then read as an unstreamed one: its usage is
``message_start``'s (input and both cache counts) with ``message_delta``'s (output) over
it. Time to first token is the first text or tool call; thinking does not count, as an
OpenAI-style endpoint's reasoning does not.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from loopbench.harness.models.anthropic_stream import MessageEvents
from loopbench.harness.models.anthropic_wire import (
    ANTHROPIC_VERSION,
    error_text,
    parse_response,
    parse_usage,
    request_body,
)
from loopbench.harness.models.http_client import (
    DEFAULT_CONNECTION,
    NO_HOOKS,
    RETRYABLE_STATUS,
    Connection,
    Credentials,
    Hooks,
    HttpClient,
)
from loopbench.harness.models.streamed import Accumulator
from loopbench.harness.models.transport import HttpReply
from loopbench.harness.models.types import ModelRequest, ModelResponse, Usage
from loopbench.harness.models.wire import reported_usage

#: Anthropic's "overloaded": retried, and it halves the requests in flight.
OVERLOADED = 529
#: The limits a 429 may have hit, each with ``-remaining`` and ``-reset`` headers.
RATE_LIMITS = ("requests", "tokens", "input-tokens", "output-tokens")


def messages_url(base_url: str) -> str:
    """Where requests go: ``{base}/v1/messages``, whether or not the base ends in /v1."""
    return base_url.removesuffix("/v1") + "/v1/messages"


def reset_wait(headers: Mapping[str, str]) -> float | None:
    """Seconds until the latest reset of the limits used up (``anthropic-ratelimit-X-reset``,
    an RFC 3339 time, where ``anthropic-ratelimit-X-remaining`` is 0); None if none is."""
    waits = []
    for limit in RATE_LIMITS:
        prefix = f"anthropic-ratelimit-{limit}"
        if headers.get(f"{prefix}-remaining", "").strip() != "0":
            continue
        try:
            when = datetime.fromisoformat(headers.get(f"{prefix}-reset", "").strip())
        except ValueError:
            continue
        if when.tzinfo is not None:
            waits.append(max(0.0, when.timestamp() - datetime.now(when.tzinfo).timestamp()))
    return max(waits, default=None)


class AnthropicClient(HttpClient):
    """``ModelClient`` over Anthropic's Messages API. One instance serves every run of an
    experiment."""

    # guard: anthropic-overloaded-retried
    retryable = RETRYABLE_STATUS | {OVERLOADED}
    throttling = frozenset({429, OVERLOADED})

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        connection: Connection = DEFAULT_CONNECTION,
        hooks: Hooks = NO_HOOKS,
    ) -> None:
        auth = Credentials.of(base_url, api_key, lambda key: ("x-api-key", key))
        #: The endpoint without the user name and password it may embed: the one to report.
        self.base_url = auth.base_url
        headers = [
            ("content-type", "application/json"),
            ("anthropic-version", ANTHROPIC_VERSION),
            *auth.headers,
        ]
        super().__init__(messages_url(self.base_url), headers, auth.secrets, connection, hooks)

    def wire_body(self, request: ModelRequest) -> dict[str, Any]:
        return request_body(request)

    def wire_stream_fields(self) -> dict[str, Any]:
        return {"stream": True}

    def wire_accumulator(self) -> Accumulator:
        return MessageEvents()

    def wire_reported_usage(self, body: bytes) -> Usage:
        return reported_usage(body, parse_usage)

    def wire_parse(self, reply: HttpReply, retries: int) -> ModelResponse:
        return parse_response(reply, retries=retries, redact=self._redact)

    def wire_error(self, reply: HttpReply) -> str:
        return error_text(reply, self._redact)

    def wire_retry_after(self, headers: Mapping[str, str]) -> float | None:
        given = super().wire_retry_after(headers)
        # guard: anthropic-429-waits-for-reset
        return given if given is not None else reset_wait(headers)
