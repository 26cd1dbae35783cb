"""What ``--batch`` asks of an endpoint's batch API, whichever API it is: one gather, submit,
poll and hand-back loop (``loopbench.harness.models.batching``) over two wires, OpenAI's Batch API
(``loopbench.harness.models.batch_api``) and Anthropic's Message Batches
(``loopbench.harness.models.anthropic_batches``).

A batch goes in two steps so that what it holds is journaled before it is made:
``prepare`` gives the submission's key (OpenAI's uploaded file; for Anthropic, made here,
as nothing is sent until the batch is made), then ``create`` makes the batch. A batch
polled (``retrieve``) is done once ``ended`` gives its end state; ``results`` then gives
each line's ``LineResult``, whatever the wire says.

Every failure of a call on the way (a status, a transport failure, a body that is not the
object asked for) is a ``BatchApiFailure`` naming the step, its text redacted of the
endpoint's secrets, never another exception.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, Self

import httpx

from loopbench.harness.models.types import ModelAPIError
from loopbench.harness.redaction import Redactor

if TYPE_CHECKING:
    from loopbench.harness.models.batch_journal import Journaled


class BatchApiFailure(ModelAPIError):
    """A call to the batch API itself failed (not a request the batch holds)."""


@dataclass(frozen=True)
class LineResult:
    """How a batch answered one of its lines."""

    status: int | None
    """The HTTP status the request was answered with (for Anthropic's errored lines, the
    status of the error's type); None when it was never answered (expired, cancelled)."""
    body: Any = None
    """The reply: the message or chat completion on a 200, else what the error said."""
    error: str | None = None
    """What the batch API said went wrong with the line, if it said."""


class BatchWire(Protocol):
    """One batch API, as the batching client speaks it."""

    #: The most lines one batch may hold.
    max_lines: int
    #: The name the journal gives the submission's key (``batches.jsonl``).
    journal_key: str

    def line(self, custom_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """One request of the batch, as the API takes it."""
        ...

    async def prepare(self, lines: list[dict[str, Any]]) -> str:
        """The key of a submission of ``lines``, journaled before the batch is made."""
        ...

    async def create(self, key: str, lines: list[dict[str, Any]], window: str) -> str:
        """The id of a new batch of the submission's lines."""
        ...

    async def retrieve(self, batch_id: str) -> dict[str, Any]:
        """The batch as the endpoint reports it now."""
        ...

    def ended(self, batch: dict[str, Any]) -> str | None:
        """The batch's end state once it is done; None while it is pending."""
        ...

    async def made_of(self, found: Journaled, known: frozenset[str]) -> str | None:
        """The batch made of a journaled submission whose batch id was never journaled
        (killed between making it and journaling it), if one was; never one of ``known``,
        the batches known to hold other submissions."""
        ...

    async def results(self, batch: dict[str, Any]) -> dict[str, LineResult]:
        """Each answered line's result, by custom id, of a batch that is done."""
        ...

    async def aclose(self) -> None: ...


class BatchHttp:
    """The HTTP calls of a batch API: its base URL, headers and secrets to redact."""

    def __init__(
        self,
        base_url: str,
        headers: dict[str, str],
        redact: Redactor,
        timeout_s: float,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._redact = redact
        self._http = httpx.AsyncClient(
            base_url=base_url, headers=headers, timeout=timeout_s, transport=transport
        )

    async def _call(self, what: str, method: str, path: str, **how: Any) -> dict[str, Any]:
        response = await self._send(what, method, path, **how)
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise BatchApiFailure(f"could not {what}: the reply is not a JSON object", 200)
        return body

    async def _send(self, what: str, method: str, path: str, **how: Any) -> httpx.Response:
        try:
            response = await self._http.request(method, path, **how)
        except httpx.HTTPError as exc:
            failure = f"could not {what}: {type(exc).__name__}: {exc}"
            raise BatchApiFailure(self._redact(failure)) from None
        if response.status_code >= 300:
            said = self._redact(response.text[:300])
            failure = f"could not {what}: HTTP {response.status_code}: {said}"
            raise BatchApiFailure(self._redact(failure), response.status_code)
        return response

    async def _jsonl(self, what: str, path: str) -> list[dict[str, Any]]:
        """The objects of a JSONL reply, one a line; a line that is not one is skipped."""
        response = await self._send(what, "GET", path)
        rows = []
        for line in response.text.splitlines():
            try:
                row = json.loads(line) if line.strip() else None
            except ValueError:
                row = None
            if isinstance(row, dict):
                rows.append(row)
        return rows

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def text_field(body: dict[str, Any], name: str) -> str:
    """``body[name]``, which must be text; a BatchApiFailure if it is not."""
    value = body.get(name)
    if not isinstance(value, str) or not value:
        raise BatchApiFailure(f"the batch API's reply has no {name}", 200)
    return value
