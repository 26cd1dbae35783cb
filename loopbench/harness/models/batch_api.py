"""OpenAI's Batch API, as ``--batch`` speaks it (``loopbench.harness.models.batch_wire``): a JSONL
file of requests uploaded (``/files``, purpose ``batch``; its id is the submission's key),
a batch made of it (``/batches``), polled, and its output and error files read back
(``/files/{id}/content``).
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from loopbench.harness.models.batch_journal import Journaled
from loopbench.harness.models.batch_wire import BatchApiFailure, BatchHttp, LineResult, text_field
from loopbench.harness.models.http_client import Credentials
from loopbench.harness.redaction import Redactor

__all__ = ["CHAT_PATH", "FINISHED", "BatchApi", "BatchApiFailure"]

#: What a batch's lines ask for.
CHAT_PATH = "/v1/chat/completions"
#: A batch in one of these states is done: its files are what it will ever answer.
FINISHED = frozenset({"completed", "expired", "failed", "cancelled"})


class BatchApi(BatchHttp):
    """The Batch API of one OpenAI-style endpoint."""

    #: OpenAI's most lines in one batch.
    max_lines = 50_000
    journal_key = "input_file_id"

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        timeout_s: float = 120.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        auth = Credentials.of(base_url, api_key, lambda key: ("authorization", f"Bearer {key}"))
        redact = Redactor(auth.secrets.texts, auth.secrets.pairs)
        super().__init__(auth.base_url, dict(auth.headers), redact, timeout_s, transport)

    def line(self, custom_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return {"custom_id": custom_id, "method": "POST", "url": CHAT_PATH, "body": body}

    async def prepare(self, lines: list[dict[str, Any]]) -> str:
        """The id of a new batch input file holding ``lines``."""
        data = "".join(json.dumps(line) + "\n" for line in lines).encode()
        files = {"file": ("batch.jsonl", data, "application/jsonl")}
        made = await self._call("upload the batch's file", "POST", "/files",
                                files=files, data={"purpose": "batch"})  # fmt: skip
        return text_field(made, "id")

    async def create(self, key: str, lines: list[dict[str, Any]], window: str) -> str:
        """The id of a new batch of the file's requests."""
        wanted = {"input_file_id": key, "endpoint": CHAT_PATH, "completion_window": window}
        made = await self._call("create the batch", "POST", "/batches", json=wanted)
        return text_field(made, "id")

    async def retrieve(self, batch_id: str) -> dict[str, Any]:
        """The batch as the endpoint reports it now (``status`` always text)."""
        batch = await self._call(f"poll the batch {batch_id}", "GET", f"/batches/{batch_id}")
        text_field(batch, "status")
        return batch

    def ended(self, batch: dict[str, Any]) -> str | None:
        status = str(batch["status"])
        return status if status in FINISHED else None

    async def made_of(self, found: Journaled, known: frozenset[str]) -> str | None:
        """The id of the batch made of the journaled file, if one was (the newest listed)."""
        listed = await self._call("list the batches", "GET", "/batches", params={"limit": 100})
        for batch in listed.get("data") or []:
            if isinstance(batch, dict) and batch.get("input_file_id") == found.submission:
                return text_field(batch, "id")
        return None

    async def results(self, batch: dict[str, Any]) -> dict[str, LineResult]:
        """Each line of the output and error files: its response's status and body, and
        the error the batch gave it (an expired line's ``batch_expired``)."""
        found: dict[str, LineResult] = {}
        for name in ("output_file_id", "error_file_id"):
            if isinstance(file_id := batch.get(name), str) and file_id:
                what = f"read the batch's file {file_id}"
                for row in await self._jsonl(what, f"/files/{file_id}/content"):
                    found[str(row.get("custom_id"))] = _line(row)
        return found


def _line(row: dict[str, Any]) -> LineResult:
    response = row.get("response")
    status = response.get("status_code") if isinstance(response, dict) else None
    body = response.get("body") if isinstance(response, dict) else None
    error = row.get("error")
    said = f"{error.get('code')}: {error.get('message')}" if isinstance(error, dict) else None
    return LineResult(status if isinstance(status, int) else None, body, said)
