"""A client for any OpenAI-compatible ``POST {base_url}/chat/completions`` endpoint.

Works against OpenAI, vLLM, Ollama, llama.cpp's server and LiteLLM proxies. Requests go
to aiohttp straight (``loopbench.harness.models.transport``): the endpoint, not the client, should
be what limits a run (``bench/overhead.py``). Tests inject an httpx transport
(``httpx.MockTransport``) instead. Retries, request slots, the time limit, the reply's
size bound and redaction are ``loopbench.harness.models.http_client``'s, shared with the Anthropic
client; the wire is ``loopbench.harness.models.wire``.

408, 409, 429, 5xx, transport failures and malformed 200 replies are retried within
``RetryPolicy``; other statuses are not, nor is a reply whose body is past
``Connection.max_response_mb`` once decompressed (the transport stops reading it there).

With ``Connection.stream`` (``--stream``) the request asks for server-sent events with
usage in the last chunk (``stream_options: {include_usage: true}``), read back into a
chat completion by ``loopbench.harness.models.openai_stream``.

A user name and password in the base URL (``http://user:password@host/v1``) are never
part of the URL requested or reported; without an API key they are sent as HTTP Basic
auth. The key, the user name and the password are redacted, in every form a server could
echo them (see ``loopbench.harness.redaction``), from every error text and from everything a reply
holds (its text and its tool calls) before anything else sees it.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from loopbench.harness.models.endpoint import shown_url
from loopbench.harness.models.http_client import (
    DEFAULT_CONNECTION,
    NO_HOOKS,
    RETRYABLE_STATUS,
    Connection,
    Credentials,
    Hooks,
    HttpClient,
    RetryPolicy,
    parse_retry_after,
)
from loopbench.harness.models.openai_stream import ChatChunks
from loopbench.harness.models.streamed import Accumulator
from loopbench.harness.models.transport import HttpReply
from loopbench.harness.models.types import ModelRequest, ModelResponse, Usage
from loopbench.harness.models.wire import (
    QUOTED,
    SentParts,
    parse_response,
    reported_usage,
    request_body,
)

#: What tests, benches and callers import from here, where the client once held them all.
__all__ = [
    "RETRYABLE_STATUS",
    "Connection",
    "Hooks",
    "OpenAICompatClient",
    "RetryPolicy",
    "parse_retry_after",
]


class OpenAICompatClient(HttpClient):
    """``ModelClient`` over HTTP. One instance serves every run of an experiment."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        connection: Connection = DEFAULT_CONNECTION,
        hooks: Hooks = NO_HOOKS,
    ) -> None:
        auth = Credentials.of(base_url, api_key, lambda key: ("authorization", f"Bearer {key}"))
        #: The endpoint without the user name and password it may embed: the one to report.
        self.base_url = auth.base_url
        headers = [("content-type", "application/json"), *auth.headers]
        #: Each message's and tool list's JSON, built once for all the requests repeating it.
        self._sent_parts = SentParts()
        super().__init__(
            self.base_url + "/chat/completions", headers, auth.secrets, connection, hooks
        )

    def wire_body(self, request: ModelRequest) -> dict[str, Any]:
        return request_body(request, self._sent_parts)

    def wire_stream_fields(self) -> dict[str, Any]:
        return {"stream": True, "stream_options": {"include_usage": True}}

    def wire_accumulator(self) -> Accumulator:
        return ChatChunks()

    def wire_reported_usage(self, body: bytes) -> Usage:
        return reported_usage(body)

    def wire_parse(self, reply: HttpReply, retries: int) -> ModelResponse:
        return parse_response(reply, retries=retries, redact=self._redact)

    def wire_error(self, reply: HttpReply) -> str:
        said = self._redact(reply.opening(QUOTED))[:300]
        hint = missing_v1_hint(self.base_url) if reply.status == 404 else ""
        return f"{said}; {hint}" if hint else said


def missing_v1_hint(base_url: str) -> str:
    """What a 404 at ``{base_url}/chat/completions`` most often means: a base URL without
    its ``/v1`` (OpenAI, llama.cpp, vLLM and Ollama serve chat completions at
    /v1/chat/completions). Empty when the URL's path already ends in a version."""
    shown = shown_url(base_url).rstrip("/")
    path = urlsplit(shown).path
    if re.search(r"/v\d+\w*$", path):
        return ""
    example = "" if "?" in shown else f" (--base-url {shown}/v1)"
    return f"nothing is served at {path}/chat/completions: add /v1 to the base URL{example}"
