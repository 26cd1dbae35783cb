"""A fake of OpenAI's Batch API on loopback, answering each line as the fake chat endpoint
(``loopbench.harness.fakes.fake_server``) answers a request, for tests of ``--batch``.

    POST /v1/files                  multipart: purpose=batch, file=JSONL of
                                    {custom_id, method, url, body}
    POST /v1/batches                {input_file_id, endpoint, completion_window}
    GET  /v1/batches/{id}           status, output_file_id, error_file_id, request_counts
    GET  /v1/batches                the batches made, newest first
    GET  /v1/files/{id}/content     a file's bytes
    POST /v1/chat/completions       the chat endpoint itself, as FakeServer

A batch is answered ``validating`` on its first poll, ``in_progress`` for as many more
as ``BatchScript.pending_polls`` says, then finished: each line answered once, its usage
counted in ``served`` like a chat request's. ``BatchScript`` makes batches expire (their
lines in the error file as ``batch_expired``, none answered), fail whole (``failed``, no
file), or lines fail (a 500 in the error file).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from loopbench.harness.fakes.fake_server import NO_SCRIPT, FakeServer, Responder, default_responder


@dataclass
class BatchScript:
    """How the fake's batches go."""

    pending_polls: int = 0
    """Polls answered ``in_progress`` after the first (``validating``) before one finishes."""
    expire: int = 0
    """The first this many batches expire: no line answered, each in the error file."""
    fail_batches: int = 0
    """The first this many batches fail whole (``failed``, as a file that does not validate)."""
    fail_lines: int = 0
    """The first this many lines answered fail: a 500 in the error file, nothing served."""


@dataclass
class FakeBatch:
    id: str
    input_file_id: str
    endpoint: str
    created_at: int
    polls: int = 0
    status: str = "validating"
    output_file_id: str | None = None
    error_file_id: str | None = None
    counts: dict[str, int] = field(
        default_factory=lambda: {"total": 0, "completed": 0, "failed": 0}
    )
    errors: dict[str, Any] | None = None

    def wire(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "batch",
            "endpoint": self.endpoint,
            "input_file_id": self.input_file_id,
            "completion_window": "24h",
            "status": self.status,
            "output_file_id": self.output_file_id,
            "error_file_id": self.error_file_id,
            "created_at": self.created_at,
            "request_counts": dict(self.counts),
            "errors": self.errors,
        }


class FakeBatchServer(FakeServer):
    """The chat endpoint's fake with OpenAI's Batch API beside it."""

    def __init__(
        self,
        responder: Responder = default_responder,
        script: BatchScript | None = None,
        keep_bodies: bool = True,
    ) -> None:
        super().__init__(responder, keep_bodies=keep_bodies, stream=NO_SCRIPT)
        self.script = script or BatchScript()
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, FakeBatch] = {}
        #: Every line of every batch created, as sent: what a test checks was sent once.
        self.lines: list[dict[str, Any]] = []
        #: Batches created, and lines answered or failed (``fail_lines``) so far.
        self.created = 0
        self._failed_lines = 0
        self._batch_lock = threading.Lock()

    def routes(self, app: web.Application) -> None:
        super().routes(app)
        app.router.add_post("/v1/files", self._upload)
        app.router.add_get("/v1/files/{id}/content", self._content)
        app.router.add_post("/v1/batches", self._create)
        app.router.add_get("/v1/batches", self._list)
        app.router.add_get("/v1/batches/{id}", self._retrieve)

    def _new_file(self, data: bytes) -> str:
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id] = data
        return file_id

    async def _upload(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload = form.get("file")
        if form.get("purpose") != "batch" or not isinstance(upload, web.FileField):
            return _error(400, "give purpose=batch and a file")
        data = upload.file.read()
        for number, line in enumerate(data.decode().splitlines(), 1):
            wanted = json.loads(line)
            if set(wanted) != {"custom_id", "method", "url", "body"}:
                return _error(400, f"line {number}: not {{custom_id, method, url, body}}")
        with self._batch_lock:
            file_id = self._new_file(data)
        return web.json_response({"id": file_id, "object": "file", "purpose": "batch"})

    async def _content(self, request: web.Request) -> web.Response:
        data = self.files.get(request.match_info["id"])
        if data is None:
            return _error(404, "no such file")
        return web.Response(body=data, content_type="application/jsonl")

    async def _create(self, request: web.Request) -> web.Response:
        wanted = await request.json()
        file_id = wanted.get("input_file_id")
        if file_id not in self.files or wanted.get("endpoint") != "/v1/chat/completions":
            return _error(400, "input_file_id names no file, or the endpoint is not chat")
        with self._batch_lock:
            self.created += 1
            batch = FakeBatch(
                f"batch_{self.created}", file_id, wanted["endpoint"], int(time.time())
            )
            self.batches[batch.id] = batch
            lines = [json.loads(line) for line in self.files[file_id].decode().splitlines()]
            self.lines.extend(lines)
            batch.counts["total"] = len(lines)
        return web.json_response(batch.wire())

    async def _list(self, request: web.Request) -> web.Response:
        made = [b.wire() for b in reversed(self.batches.values())]
        return web.json_response({"object": "list", "data": made, "has_more": False})

    async def _retrieve(self, request: web.Request) -> web.Response:
        batch = self.batches.get(request.match_info["id"])
        if batch is None:
            return _error(404, "no such batch")
        with self._batch_lock:
            batch.polls += 1
            if batch.status in ("validating", "in_progress"):
                if batch.polls == 1:
                    batch.status = "validating"
                elif batch.polls <= 1 + self.script.pending_polls:
                    batch.status = "in_progress"
                else:
                    self._finish(batch)
        return web.json_response(batch.wire())

    def _finish(self, batch: FakeBatch) -> None:
        """Answer the batch's lines, as its script says."""
        number = int(batch.id.removeprefix("batch_"))
        if number <= self.script.fail_batches:
            batch.status = "failed"
            batch.errors = {"data": [{"code": "invalid_request", "message": "scripted"}]}
            return
        lines = [json.loads(line) for line in self.files[batch.input_file_id].decode().splitlines()]
        expired = number <= self.script.fail_batches + self.script.expire
        output: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        for line in lines:
            if expired:
                failure = {"code": "batch_expired", "message": "not done within the window"}
                errors.append({"custom_id": line["custom_id"], "response": None, "error": failure})
                continue
            if self._failed_lines < self.script.fail_lines:
                self._failed_lines += 1
                failed = {"status_code": 500, "body": {"error": {"message": "scripted"}}}
                errors.append({"custom_id": line["custom_id"], "response": failed, "error": None})
                continue
            body = line["body"]
            with self._lock:
                self.served.requests += 1
                if self.keep_bodies:
                    self.served.bodies.append(body)
            status, answer = self.answer(body, self.responder(body))
            made = {"status_code": status, "request_id": f"req_{len(output)}", "body": answer}
            row = {"id": f"batch_req_{len(output)}", "custom_id": line["custom_id"]}
            (output if status == 200 else errors).append(row | {"response": made, "error": None})
        batch.status = "expired" if expired else "completed"
        batch.counts["completed"] = len(output)
        batch.counts["failed"] = len(errors)
        if output:
            batch.output_file_id = self._new_file(_jsonl(output))
        if errors:
            batch.error_file_id = self._new_file(_jsonl(errors))


def _jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": {"message": message}}, status=status)
