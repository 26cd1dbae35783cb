"""A fake of Anthropic's Message Batches on loopback, beside the fake Messages API
(``loopbench.harness.fakes.anthropic_server``), answering each request of a batch as that fake
answers one sent alone, for tests of ``--batch``.

    POST /v1/messages/batches                {requests: [{custom_id, params}]}
    GET  /v1/messages/batches/{id}           processing_status, request_counts, results_url
    GET  /v1/messages/batches                the batches made, newest first
    GET  /v1/messages/batches/{id}/results   JSONL: {custom_id, result: {type, ...}}
    POST /v1/messages                        the Messages API itself

Every call needs ``anthropic-version``, and with ``api_key`` set, that ``x-api-key``
(else 400 or 401, the API's error body). A batch is ``in_progress`` for as many polls as
``BatchScript.pending_polls`` says, then ``ended``: each request answered once, as
``succeeded`` or, where the Messages API would refuse it, ``errored`` with the error's
type; its usage counted in ``served``. ``BatchScript`` makes batches expire (every request
``expired``, none answered) or be cancelled, and requests expire or error
(``api_error``) one by one, so a batch partly fails.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web

from loopbench.harness.fakes.anthropic_server import (
    ERROR_TYPES,
    AnthropicFakeServer,
    Fault,
    _fault,
    as_chat,
    refusal,
)
from loopbench.harness.fakes.fake_server import Responder, default_responder

#: A custom id as the API takes it.
CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
#: The API's most requests in one batch.
MOST_REQUESTS = 100_000


@dataclass
class BatchScript:
    """How the fake's batches go."""

    pending_polls: int = 0
    """Polls answered ``in_progress`` before a batch ends."""
    expire: int = 0
    """The first this many batches expire: every request ``expired``, none answered."""
    cancel: int = 0
    """The next this many batches are cancelled: ``canceling`` for a poll, then ended with
    every request ``canceled``."""
    expire_lines: int = 0
    """The first this many requests expire, in whichever batch they are."""
    fail_lines: int = 0
    """The next this many requests answered are ``errored`` (``api_error``), none served."""
    results_host: str | None = None
    """Give ``results_url`` on this host (``http://host:port``) rather than the fake's own."""


@dataclass
class FakeMessageBatch:
    id: str
    requests: list[dict[str, Any]]
    created_at: datetime
    key: str | None = None
    polls: int = 0
    status: str = "in_progress"
    ended_at: datetime | None = None
    cancel_initiated_at: datetime | None = None
    results: list[dict[str, Any]] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        kinds = [r["result"]["type"] for r in self.results]
        done = {kind: kinds.count(kind) for kind in ("succeeded", "errored", "canceled", "expired")}
        return {"processing": len(self.requests) - len(kinds), **done}


class AnthropicBatchServer(AnthropicFakeServer):
    """The Messages API's fake with its Message Batches beside it."""

    def __init__(
        self,
        responder: Responder = default_responder,
        api_key: str | None = None,
        script: BatchScript | None = None,
        latency_s: float = 0.0,
    ) -> None:
        super().__init__(responder, api_key=api_key, latency_s=latency_s)
        self.script = script or BatchScript()
        self.batches: dict[str, FakeMessageBatch] = {}
        #: Every request of every batch created, as sent: what a test checks was sent once.
        self.lines: list[dict[str, Any]] = []
        #: The ``x-api-key`` of every call to the batches API, in order.
        self.batch_keys: list[str | None] = []
        self.created = 0
        self._counted = {"expired": 0, "failed": 0}
        self._batch_lock = threading.Lock()

    def routes(self, app: web.Application) -> None:
        super().routes(app)
        app.router.add_post("/v1/messages/batches", self._create)
        app.router.add_get("/v1/messages/batches", self._list)
        app.router.add_get("/v1/messages/batches/{id}", self._retrieve)
        app.router.add_get("/v1/messages/batches/{id}/results", self._results)

    def _refused(self, request: web.Request) -> web.Response | None:
        """The API's answer to a call without its headers, if it lacks them."""
        key = request.headers.get("x-api-key")
        with self._batch_lock:
            self.batch_keys.append(key)
        if not request.headers.get("anthropic-version"):
            return _fault(Fault(400, "anthropic-version: header is required"))
        if self.api_key is not None and key != self.api_key:
            return _fault(Fault(401, "invalid x-api-key"))
        return None

    async def _create(self, request: web.Request) -> web.Response:
        if (refused := self._refused(request)) is not None:
            return refused
        wanted = await request.json()
        requests = wanted.get("requests") if isinstance(wanted, dict) else None
        if not isinstance(requests, list) or not 1 <= len(requests) <= MOST_REQUESTS:
            return _fault(Fault(400, "requests: between 1 and 100000 requests"))
        seen: set[str] = set()
        for number, one in enumerate(requests):
            custom_id = one.get("custom_id") if isinstance(one, dict) else None
            if set(one) != {"custom_id", "params"} or not isinstance(one["params"], dict):
                return _fault(Fault(400, f"requests.{number}: not {{custom_id, params}}"))
            if not isinstance(custom_id, str) or not CUSTOM_ID.fullmatch(custom_id):
                return _fault(Fault(400, f"requests.{number}.custom_id: not a custom id"))
            if custom_id in seen:
                return _fault(Fault(400, f"requests.{number}.custom_id: {custom_id} twice"))
            if one["params"].get("stream"):
                return _fault(Fault(400, f"requests.{number}.params.stream: not in a batch"))
            seen.add(custom_id)
        with self._batch_lock:
            self.created += 1
            made = datetime.now(UTC)
            key = request.headers.get("x-api-key")
            batch = FakeMessageBatch(f"msgbatch_{self.created:04d}", requests, made, key)
            self.batches[batch.id] = batch
            self.lines.extend(requests)
        return web.json_response(self._wire(batch, request))

    async def _list(self, request: web.Request) -> web.Response:
        if (refused := self._refused(request)) is not None:
            return refused
        limit = int(request.query.get("limit", "20"))
        made = [self._wire(b, request) for b in reversed(self.batches.values())][:limit]
        first, last = (made[0]["id"], made[-1]["id"]) if made else (None, None)
        more = len(self.batches) > limit
        return web.json_response({"data": made, "has_more": more, "first_id": first,
                                  "last_id": last})  # fmt: skip

    async def _retrieve(self, request: web.Request) -> web.Response:
        if (refused := self._refused(request)) is not None:
            return refused
        batch = self.batches.get(request.match_info["id"])
        if batch is None:
            return _fault(Fault(404, "no such message batch"))
        with self._batch_lock:
            batch.polls += 1
            number = int(batch.id.removeprefix("msgbatch_"))
            script = self.script
            cancelled = script.expire < number <= script.expire + script.cancel
            if batch.status == "in_progress" and cancelled:
                batch.status = "canceling"
                batch.cancel_initiated_at = datetime.now(UTC)
            elif batch.status != "ended" and batch.polls > self.script.pending_polls:
                self._end(batch)
        return web.json_response(self._wire(batch, request))

    async def _results(self, request: web.Request) -> web.Response:
        if (refused := self._refused(request)) is not None:
            return refused
        batch = self.batches.get(request.match_info["id"])
        if batch is None:
            return _fault(Fault(404, "no such message batch"))
        if batch.status != "ended":
            return _fault(Fault(400, f"{batch.id} is still processing: no results yet"))
        lines = "".join(json.dumps(r) + "\n" for r in batch.results)
        return web.Response(text=lines, content_type="application/x-jsonl")

    def _wire(self, batch: FakeMessageBatch, request: web.Request) -> dict[str, Any]:
        host = self.script.results_host or f"{request.scheme}://{request.host}"
        ended = batch.status == "ended"
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": batch.status,
            "request_counts": batch.counts(),
            "ended_at": _rfc3339(batch.ended_at) if batch.ended_at else None,
            "created_at": _rfc3339(batch.created_at),
            "expires_at": _rfc3339(batch.created_at + timedelta(hours=24)),
            "archived_at": None,
            "cancel_initiated_at": (
                _rfc3339(batch.cancel_initiated_at) if batch.cancel_initiated_at else None
            ),
            "results_url": f"{host}/v1/messages/batches/{batch.id}/results" if ended else None,
        }

    def _end(self, batch: FakeMessageBatch) -> None:
        """Answer the batch's requests, as its script says."""
        number = int(batch.id.removeprefix("msgbatch_"))
        script = self.script
        whole = (
            "expired"
            if number <= script.expire
            else "canceled"
            if number <= script.expire + script.cancel
            else None
        )
        for one in batch.requests:
            kind = whole or self._line_fate()
            result = {"type": kind} if kind else self._answer(one["params"], batch.key)
            batch.results.append({"custom_id": one["custom_id"], "result": result})
        batch.status = "ended"
        batch.ended_at = datetime.now(UTC)

    def _line_fate(self) -> str | None:
        """``expired`` or ``errored`` for a request the script fails; None to answer it."""
        if self._counted["expired"] < self.script.expire_lines:
            self._counted["expired"] += 1
            return "expired"
        return None

    def _answer(self, params: dict[str, Any], key: str | None) -> dict[str, Any]:
        """One request's result, as ``POST /v1/messages`` would answer it."""
        if self._counted["failed"] < self.script.fail_lines:
            self._counted["failed"] += 1
            return _errored(500, "scripted failure")
        with self._lock:
            self.served.requests += 1
            self.served.bodies.append(params)
            self.served.keys.append(key)
        if (problem := refusal(params)) is not None:
            return _errored(400, problem)
        reply = self.responder(as_chat(params))
        if reply.status != 200:
            return _errored(reply.status, "scripted failure")
        message = self._message(params, reply)
        self._count(message["usage"], {})
        return {"type": "succeeded", "message": message}


def _errored(status: int, message: str) -> dict[str, Any]:
    error = {"type": ERROR_TYPES.get(status, "api_error"), "message": message}
    return {"type": "errored", "error": {"type": "error", "error": error}}


def _rfc3339(when: datetime) -> str:
    return when.isoformat().replace("+00:00", "Z")
