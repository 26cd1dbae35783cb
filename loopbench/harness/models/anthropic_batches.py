"""Anthropic's Message Batches, as ``--batch`` speaks them
(``loopbench.harness.models.batch_wire``): the requests posted at once (``POST
/v1/messages/batches``, each ``{custom_id, params}``, ``params`` a Messages API request), the batch
polled (``GET /v1/messages/batches/{id}``) until its ``processing_status`` is ``ended``, and its
results read from its ``results_url``, one JSON line a request: ``{custom_id, result: {type, message
| error}}`` with ``type`` ``succeeded``, ``errored``, ``canceled`` or ``expired``.

Headers are the Messages API's: ``x-api-key`` and ``anthropic-version``. A
``results_url`` on another host than the endpoint's is not followed, so the key is never
sent there: the results are read from the batch's own path on the endpoint instead.

An errored line's error type is read as the status the Messages API gives it
(``invalid_request_error`` a 400, not retried; ``api_error`` a 500 and
``overloaded_error`` a 529, retried); an expired or cancelled line was never answered.

Nothing is sent before the batch is made, so a submission's key is made here (``sub_``
and a random id) and only journaled. A run killed between making a batch and journaling
its id finds it among the endpoint's batches (``GET /v1/messages/batches``, newest first)
by when it was made and how many requests it holds; one that has ended must hold the
journaled line's custom id, else it is not the one.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import httpx

from loopbench.harness.models.anthropic_wire import ANTHROPIC_VERSION
from loopbench.harness.models.batch_journal import Journaled
from loopbench.harness.models.batch_wire import BatchHttp, LineResult, text_field
from loopbench.harness.models.http_client import Credentials
from loopbench.harness.redaction import Redactor

#: The status of each error type an errored line may give, as the Messages API answers it.
ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
#: How far apart a batch's ``created_at`` and its journaled ``submitted_at`` may be (clocks
#: differ) for the batch to be taken as the one made of a submission.
SKEW_S = 900.0


class AnthropicBatches(BatchHttp):
    """The Message Batches of one Anthropic endpoint."""

    #: Anthropic's most requests in one batch.
    max_lines = 100_000
    journal_key = "submission"

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        timeout_s: float = 120.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        auth = Credentials.of(base_url, api_key, lambda key: ("x-api-key", key))
        redact = Redactor(auth.secrets.texts, auth.secrets.pairs)
        self._base = auth.base_url.rstrip("/").removesuffix("/v1") + "/v1"
        headers = {"anthropic-version": ANTHROPIC_VERSION, **dict(auth.headers)}
        super().__init__(self._base, headers, redact, timeout_s, transport)

    def line(self, custom_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return {"custom_id": custom_id, "params": body}

    async def prepare(self, lines: list[dict[str, Any]]) -> str:
        return f"sub_{uuid.uuid4().hex}"

    async def create(self, key: str, lines: list[dict[str, Any]], window: str) -> str:
        """The id of a new batch of ``lines`` (its window is the API's own, 24 hours)."""
        made = await self._call("create the batch", "POST", "/messages/batches",
                                json={"requests": lines})  # fmt: skip
        return text_field(made, "id")

    async def retrieve(self, batch_id: str) -> dict[str, Any]:
        """The batch as the endpoint reports it now (``processing_status`` always text)."""
        what = f"poll the batch {batch_id}"
        batch = await self._call(what, "GET", f"/messages/batches/{batch_id}")
        text_field(batch, "processing_status")
        return batch

    def ended(self, batch: dict[str, Any]) -> str | None:
        return "ended" if batch.get("processing_status") == "ended" else None

    async def made_of(self, found: Journaled, known: frozenset[str]) -> str | None:
        """The batch of as many requests as the submission held, made nearest the time it
        was journaled and not known to be another's; an ended one only if its results
        hold the journaled line."""
        listed = await self._call("list the batches", "GET", "/messages/batches",
                                  params={"limit": 100})  # fmt: skip
        submitted = _time(found.submitted_at)
        near: list[tuple[float, dict[str, Any]]] = []
        for batch in listed.get("data") or []:
            made = _time(batch.get("created_at")) if isinstance(batch, dict) else None
            if made is None or submitted is None or _total(batch) != found.lines:
                continue
            # guard: anthropic-found-batch-not-anothers
            if batch.get("id") in known:
                continue
            if abs(made - submitted) <= SKEW_S:
                near.append((abs(made - submitted), batch))
        for _, batch in sorted(near, key=lambda pair: pair[0]):
            # guard: anthropic-found-batch-holds-the-request
            if self.ended(batch) is None or found.custom_id in await self.results(batch):
                return text_field(batch, "id")
        return None

    async def results(self, batch: dict[str, Any]) -> dict[str, LineResult]:
        """Each line of the batch's results, by custom id."""
        batch_id = text_field(batch, "id")
        url = batch.get("results_url")
        # guard: anthropic-results-url-same-host
        if not isinstance(url, str) or not _same_origin(url, self._base):
            url = f"/messages/batches/{batch_id}/results"
        rows = await self._jsonl(f"read the results of the batch {batch_id}", url)
        return {str(row.get("custom_id")): _line(row.get("result")) for row in rows}


def _line(result: object) -> LineResult:
    """A result line's ``result`` as the batching client reads it."""
    if not isinstance(result, dict):
        return LineResult(None, None, "no result")
    kind = result.get("type")
    if kind == "succeeded":
        return LineResult(200, result.get("message"))
    if kind == "errored":
        error = result.get("error")
        # The API's error response, ``{type: "error", error: {type, message}}``.
        inner = error.get("error") if isinstance(error, dict) else None
        said = inner if isinstance(inner, dict) else error if isinstance(error, dict) else {}
        type_ = str(said.get("type"))
        # An invalid request is not retried: read as the status the Messages API gives it.
        # guard: anthropic-errored-type-as-status
        status = ERROR_STATUS.get(type_)
        return LineResult(status, error, f"errored: {type_}: {said.get('message')}")
    return LineResult(None, None, f"{kind}: not answered")


def _total(batch: dict[str, Any]) -> int:
    counts = batch.get("request_counts")
    if not isinstance(counts, dict):
        return -1
    return sum(n for n in counts.values() if isinstance(n, int))


def _time(text: object) -> float | None:
    try:
        when = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None
    return when.timestamp() if when.tzinfo is not None else None


def _same_origin(url: str, base: str) -> bool:
    """Whether ``url`` is on the endpoint's own scheme, host and port."""
    given, own = urlsplit(url), urlsplit(base)
    return (given.scheme, given.hostname, given.port) == (own.scheme, own.hostname, own.port)
