"""Batch execution (``--batch``): the requests the runs in flight are waiting on, sent as
one batch a round through the endpoint's batch API at its lower price, and handed back to
their runs. The batch API is a wire (``loopbench.harness.models.batch_wire``): OpenAI's Batch API
(``loopbench.harness.models.batch_api``) or Anthropic's Message Batches
(``loopbench.harness.models.anthropic_batches``); this loop is the same for both.

Runs call ``complete`` as they would on the HTTP client. A round starts when as many
requests wait as runs are in flight (``RUNS_IN_FLIGHT``), or when none has come for
``gather_s``; its batch is submitted, polled every ``poll_s`` until it is done, and
each line's reply is read as the HTTP client reads a reply (``wire_parse``, the usage as
the batch's results report it) and handed to the run that asked. A multi-turn pattern's
next turn is in the next round. Requests arriving meanwhile wait for the next round.

A line that failed (with a retried status, or no reply because the batch or the line
expired, failed or was cancelled) goes into the next round, up to the connection's
retry limit; then, and at once for a status not retried, the run gets a ``ModelAPIError``
(its api_error), never silence.

Before a batch is made, what it holds is journaled in the results folder
(``loopbench.harness.models.batch_journal``). A request a resumed run sends again that the journal
holds (same run, same request, same place among the run's identical requests) is not sent
again: the batch holding it is polled, or read if it has finished, and the reply handed
back. A request it held that failed there is sent anew.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import uuid
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Self

from loopbench.harness.models.batch_journal import BatchJournal, Journaled
from loopbench.harness.models.batch_wire import BatchApiFailure, BatchWire, LineResult
from loopbench.harness.models.http_client import HttpClient
from loopbench.harness.models.http_reply import HttpReply
from loopbench.harness.models.pending_batches import PENDING_BATCHES
from loopbench.harness.models.types import ModelAPIError, ModelRequest, ModelResponse, Usage

#: The run a request belongs to (its arm, task and repeat), set by the runner: part of
#: each request's digest, so a resumed run finds its own requests in the journal.
BATCH_RUN: ContextVar[str] = ContextVar("BATCH_RUN", default="")


class RunsInFlight:
    """How many runs' patterns are running in this process (``Runner.run_one`` counts
    them): a round starts once that many requests wait. Batching clients listen for the
    count to change, as a run that ends is one fewer to wait for."""

    def __init__(self) -> None:
        self.count = 0
        self._listeners: set[Callable[[], None]] = set()
        self._running = _Running(self)

    def running(self) -> AbstractContextManager[None]:
        """Around a run's pattern: a plain context manager, made once (a generator's would
        cost a run more than its two counts)."""
        return self._running

    def listen(self, listener: Callable[[], None]) -> None:
        self._listeners.add(listener)

    def ignore(self, listener: Callable[[], None]) -> None:
        self._listeners.discard(listener)

    def _change(self, by: int) -> None:
        self.count += by
        for listener in list(self._listeners):
            listener()


class _Running:
    __slots__ = ("_runs",)

    def __init__(self, runs: RunsInFlight) -> None:
        self._runs = runs

    def __enter__(self) -> None:
        self._runs._change(1)

    def __exit__(self, *exc: object) -> None:
        self._runs._change(-1)


RUNS_IN_FLIGHT = RunsInFlight()


@dataclass(frozen=True)
class BatchSettings:
    """How ``--batch`` gathers, polls and journals."""

    poll_s: float = 30.0
    """Seconds between polls of a pending batch (``--batch-poll``)."""
    gather_s: float = 2.0
    """A round starts when no request has come for this long, if not every run in flight
    waits (a run busy with a slow tool, runs on other endpoints)."""
    window: str = "24h"
    """The completion window asked for."""
    journal: Path | None = None
    """The folder's ``batches.jsonl``; None keeps no journal (a script's own client)."""


@dataclass(eq=False)
class Waiting:
    """A request waiting for its reply."""

    body: dict[str, Any]
    run: str
    digest: str
    future: asyncio.Future[ModelResponse]
    attempts: int = 0
    spent: Usage = field(default_factory=Usage)


class BatchingClient:
    """``ModelClient`` through an endpoint's Batch API; ``http`` reads the replies (its wire)
    and gives the retried statuses and the retry limit."""

    def __init__(self, http: HttpClient, api: BatchWire, settings: BatchSettings) -> None:
        self._http = http
        self._api = api
        self._settings = settings
        self._max_retries = http._retry.max_retries
        self._journal = BatchJournal(settings.journal) if settings.journal else None
        #: Requests journaled by an earlier process, by digest, not yet claimed here.
        self._journaled = self._journal.sent() if self._journal else {}
        #: Batches known to hold a submission: journaled as made, or made here.
        self._made = {j.batch_id for j in self._journaled.values() if j.batch_id is not None}
        self._queue: list[Waiting] = []
        self._arrived = asyncio.Event()
        self._worker: asyncio.Task[None] | None = None
        self._sent: Counter[str] = Counter()
        RUNS_IN_FLIGHT.listen(self._arrived.set)
        #: Batches submitted, and ones resumed from the journal, by this client.
        self.submitted = 0
        self.resumed = 0

    @property
    def concurrency(self) -> Any:
        """The HTTP client's request limit (its 429 notes), for ``throttle_notes``."""
        return self._http.concurrency

    async def complete(self, request: ModelRequest) -> ModelResponse:
        body = self._http.wire_body(request)
        run = BATCH_RUN.get()
        same = _digest(run + "\n" + json.dumps(body, sort_keys=True))
        digest = _digest(f"{same}#{self._sent[same]}")
        self._sent[same] += 1
        waiting = Waiting(body, run, digest, asyncio.get_running_loop().create_future())
        self._wait(waiting)
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._rounds())
        return await waiting.future

    def _wait(self, waiting: Waiting) -> None:
        self._queue.append(waiting)
        self._arrived.set()

    async def _rounds(self) -> None:
        taken: list[Waiting] = []
        try:
            while self._queue:
                await self._gather()
                most = self._api.max_lines
                # guard: batch-most-lines-a-batch
                taken, self._queue = self._queue[:most], self._queue[most:]
                taken = [w for w in taken if not w.future.done()]  # a cancelled run's
                if taken:
                    await self._round(taken)
        except Exception as exc:  # a fault of loopbench's: each run waiting records it
            for waiting in [*taken, *self._queue]:
                if not waiting.future.done():
                    waiting.future.set_exception(exc)

    async def _gather(self) -> None:
        """Until every run in flight waits, or none has come for ``gather_s``."""
        while len({w.run for w in self._queue}) < max(1, RUNS_IN_FLIGHT.count):
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), self._settings.gather_s)
            except TimeoutError:
                return

    async def _round(self, taken: list[Waiting]) -> None:
        """One round: the requests a journaled batch holds are read from it; the rest sent."""
        fresh: list[Waiting] = []
        held: dict[str, dict[str, Waiting]] = {}
        submissions: dict[str, Journaled] = {}
        for waiting in taken:
            found = self._journaled.pop(waiting.digest, None)
            if found is None:
                fresh.append(waiting)
            else:
                held.setdefault(found.submission, {})[found.custom_id] = waiting
                submissions[found.submission] = found
        work = [self._resume(submissions[key], lines, fresh) for key, lines in held.items()]
        await asyncio.gather(*work)
        if fresh:
            await self._submit(fresh)

    async def _resume(
        self, found: Journaled, lines: dict[str, Waiting], fresh: list[Waiting]
    ) -> None:
        """Read a journaled batch's replies; its requests are sent anew if it was never made."""
        batch_id = found.batch_id
        if batch_id is None:
            try:
                batch_id = await self._api.made_of(found, frozenset(self._made))
            except BatchApiFailure as exc:
                for waiting in lines.values():
                    self._failed(waiting, str(exc), exc.status)
                return
        if batch_id is None:  # killed between journaling the batch and making it
            fresh.extend(lines.values())
            return
        self._made.add(batch_id)
        self.resumed += 1
        PENDING_BATCHES.submitted(batch_id, len(lines), resumed=True)
        await self._collect(batch_id, lines)

    async def _submit(self, fresh: list[Waiting]) -> None:
        lines = {f"{i}-{uuid.uuid4().hex[:12]}": w for i, w in enumerate(fresh)}
        rows = [self._api.line(custom_id, w.body) for custom_id, w in lines.items()]
        named = self._api.journal_key
        try:
            key = await self._api.prepare(rows)
            if self._journal is not None:
                held = {c: (w.run, w.digest) for c, w in lines.items()}
                # guard: batch-journaled-before-made
                self._journal.submitting(key, held, named)
            batch_id = await self._api.create(key, rows, self._settings.window)
            if self._journal is not None:
                self._journal.created(key, batch_id, named)
        except BatchApiFailure as exc:
            for waiting in lines.values():
                self._failed(waiting, str(exc), exc.status)
            return
        self._made.add(batch_id)
        self.submitted += 1
        PENDING_BATCHES.submitted(batch_id, len(lines))
        await self._collect(batch_id, lines)

    async def _collect(self, batch_id: str, lines: dict[str, Waiting]) -> None:
        """Poll the batch until it is done, and settle each line from its results."""
        try:
            batch, state = await self._polled(batch_id)
        except BatchApiFailure as exc:
            PENDING_BATCHES.done(batch_id, "not polled to its end")
            for waiting in lines.values():
                self._failed(waiting, str(exc), exc.status)
            return
        except asyncio.CancelledError:  # the grid stopped: still pending, and journaled
            PENDING_BATCHES.done(batch_id, "left pending")
            raise
        PENDING_BATCHES.done(batch_id, state)
        if self._journal is not None:
            self._journal.finished(batch_id, state)
        try:
            results = await self._api.results(batch)
        except BatchApiFailure as exc:
            for waiting in lines.values():
                self._failed(waiting, str(exc), exc.status)
            return
        for custom_id, waiting in lines.items():
            self._settle(waiting, results.get(custom_id), f"the batch {batch_id} {state}")

    async def _polled(self, batch_id: str) -> tuple[dict[str, Any], str]:
        """The batch once it is done, and its end state; a poll that fails is tried again,
        up to the limit."""
        failures = 0
        while True:
            try:
                batch = await self._api.retrieve(batch_id)
            except BatchApiFailure:
                failures += 1
                # guard: batch-poll-failures-bounded
                if failures > self._max_retries:
                    raise
            else:
                failures = 0
                if (state := self._api.ended(batch)) is not None:
                    return batch, state
            await asyncio.sleep(self._settings.poll_s)

    def _settle(self, waiting: Waiting, line: LineResult | None, why: str) -> None:
        """Hand a line's reply to its run, or send the request again, or fail it."""
        if waiting.future.done():  # its run was cancelled
            return
        status, body = (line.status, line.body) if line else (None, None)
        if status == 200:
            reply = HttpReply(200, {}, json.dumps(body).encode())
            try:
                parsed = self._http.wire_parse(reply, waiting.attempts)
            except ModelAPIError as exc:
                self._failed(waiting, str(exc), 200, exc.usage)
                return
            message = self._http._redacted(parsed.message)
            usage = parsed.usage + waiting.spent
            waiting.future.set_result(replace(parsed, message=message, usage=usage, batched=True))
            return
        if line is not None and line.error:
            failure = self._http._redact(f"{why}: {line.error}")
        elif isinstance(status, int):
            said = self._http._redact(json.dumps(body))[:300] if body is not None else ""
            failure = f"{why}: HTTP {status}: {said}"
        else:
            failure = f"{why} without answering it"
        # guard: batch-line-status-not-retried
        if isinstance(status, int) and status not in self._http.retryable:
            waiting.future.set_exception(
                ModelAPIError(failure, status, waiting.attempts, usage=waiting.spent)
            )
            return
        self._failed(waiting, failure, status)

    def _failed(
        self, waiting: Waiting, failure: str, status: int | None, spent: Usage | None = None
    ) -> None:
        """Into the next round, or the run's api_error once the retries are spent."""
        if waiting.future.done():
            return
        waiting.spent = waiting.spent + (spent or Usage())
        # guard: batch-retries-bounded
        if waiting.attempts >= self._max_retries:
            tries = waiting.attempts + 1
            given_up = f"{failure} (gave up after {tries} batch{'es' if tries > 1 else ''})"
            waiting.future.set_exception(
                ModelAPIError(given_up, status, waiting.attempts, usage=waiting.spent)
            )
            return
        waiting.attempts += 1
        self._wait(waiting)

    async def aclose(self) -> None:
        RUNS_IN_FLIGHT.ignore(self._arrived.set)
        if self._worker is not None:
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._worker
        await self._api.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
