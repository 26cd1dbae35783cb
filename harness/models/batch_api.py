"""OpenAI's Batch API, as ``--batch`` speaks it: a JSONL file of requests uploaded
(``/files``, purpose ``batch``), a batch made of it (``/batches``), polled, and its output
and error files read back (``/files/{id}/content``).

Every failure on the way (a status, a transport failure, a body that is not the object
asked for) is a ``BatchApiFailure`` naming the step, its text redacted of the endpoint's
secrets, never another exception.
"""

from __future__ import annotations

import json
from typing import Any, Self

import httpx

from harness.models.http_client import Credentials
from harness.models.types import ModelAPIError
from harness.redaction import Redactor

#: What a batch's lines ask for.
CHAT_PATH = "/v1/chat/completions"


class BatchApiFailure(ModelAPIError):
    """A call to the Batch API itself failed (not a request the batch holds)."""


class BatchApi:
    """The Batch API of one OpenAI-style endpoint."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        timeout_s: float = 120.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        auth = Credentials.of(base_url, api_key, lambda key: ("authorization", f"Bearer {key}"))
        self._redact = Redactor(auth.secrets.texts, auth.secrets.pairs)
        self._http = httpx.AsyncClient(
            base_url=auth.base_url,
            headers=dict(auth.headers),
            timeout=timeout_s,
            transport=transport,
        )

    async def upload(self, lines: list[dict[str, Any]]) -> str:
        """The id of a new batch input file holding ``lines``."""
        data = "".join(json.dumps(line) + "\n" for line in lines).encode()
        files = {"file": ("batch.jsonl", data, "application/jsonl")}
        made = await self._call("upload the batch's file", "POST", "/files",
                                files=files, data={"purpose": "batch"})  # fmt: skip
        return _text(made, "id")

    async def create(self, input_file_id: str, window: str) -> str:
        """The id of a new batch of the file's requests."""
        wanted = {"input_file_id": input_file_id, "endpoint": CHAT_PATH,
                  "completion_window": window}  # fmt: skip
        made = await self._call("create the batch", "POST", "/batches", json=wanted)
        return _text(made, "id")

    async def retrieve(self, batch_id: str) -> dict[str, Any]:
        """The batch as the endpoint reports it now (``status`` always text)."""
        batch = await self._call(f"poll the batch {batch_id}", "GET", f"/batches/{batch_id}")
        _text(batch, "status")
        return batch

    async def made_of(self, input_file_id: str) -> str | None:
        """The id of the batch made of this file, if one was (the newest listed)."""
        listed = await self._call("list the batches", "GET", "/batches", params={"limit": 100})
        for batch in listed.get("data") or []:
            if isinstance(batch, dict) and batch.get("input_file_id") == input_file_id:
                return _text(batch, "id")
        return None

    async def rows(self, file_id: str) -> list[dict[str, Any]]:
        """The lines of an output or error file, each an object."""
        what = f"read the batch's file {file_id}"
        response = await self._send(what, "GET", f"/files/{file_id}/content")
        rows = []
        for line in response.text.splitlines():
            try:
                row = json.loads(line) if line.strip() else None
            except ValueError:
                row = None
            if isinstance(row, dict):
                rows.append(row)
        return rows

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

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _text(body: dict[str, Any], name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str) or not value:
        raise BatchApiFailure(f"the Batch API's reply has no {name}", 200)
    return value
