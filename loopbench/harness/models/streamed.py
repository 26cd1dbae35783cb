"""A streamed reply read as it comes: its events handed to an accumulator, timed and bounded.

With ``--stream`` a request asks for its reply as server-sent events
(``loopbench.harness.models.sse``). The transport (``loopbench.harness.models.transport``) reads the
body a piece at a time and gives each piece to a ``StreamRead``, which decodes and bounds it like
any body (``--max-response-mb`` counts every byte of the stream), parses its events and
hands them to the API's ``Accumulator``: it builds, from the events, the reply the API
would have sent unstreamed, so the client parses a streamed reply as any other and its
records equal an unstreamed run's, apart from the timings.

Time to first token is the time from sending the request to the event the accumulator
says carries the reply's first token (text, or a tool call).

A stream may stop short: the connection closes before its last event, the server sends an
error event, an event is not what the API sends, or no event comes within the limit
(``StreamLimits.idle_s``). Each is a ``StreamCut``, a transport failure (retried like
one) holding the reply built so far, so the usage the stream reported before it stopped
is counted. The whole request stays within ``StreamLimits.total_s`` as well, however
often events come: a stream of keep-alive events is not a way to hang a run.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from loopbench.harness.errors import ModelError
from loopbench.harness.models.http_reply import HttpReply, Reading, ReplyTooLarge, TransportFailure
from loopbench.harness.models.sse import ServerEvent, SSEError, SSEReader


class StreamEventError(ModelError):
    """An event an accumulator cannot take: an error the server sent, or one not of its API."""


class Accumulator(Protocol):
    """Builds an API's unstreamed reply from its stream's events."""

    def add(self, event: ServerEvent) -> bool:
        """Take the next event; True when it carries the reply's first token. An error
        event, or one that is not the API's, is a ``StreamEventError`` saying so."""
        ...

    @property
    def done(self) -> bool:
        """The stream's last event has been taken."""
        ...

    def body(self) -> bytes:
        """The reply as JSON, as the API sends it unstreamed; so far, before ``done``."""
        ...


class StreamCut(TransportFailure):
    """A stream that stopped before its end; ``partial`` is the reply built until then."""

    def __init__(self, reason: str, partial: bytes) -> None:
        super().__init__(reason)
        self.partial = partial


@dataclass(frozen=True)
class StreamLimits:
    total_s: float
    """The whole request, connecting to the stream's last event (``--timeout``)."""
    idle_s: float
    """The most time between one event and the next (the first from sending)."""


class StreamRead:
    """A 200 reply of server-sent events, being read; ``sent`` is when its request was sent
    (``time.monotonic``): its time to first token and its limits count from there."""

    def __init__(
        self,
        headers: Mapping[str, str],
        max_body_bytes: int,
        accumulator: Accumulator,
        limits: StreamLimits,
        sent: float,
    ) -> None:
        self._started = sent
        self._reading = Reading(200, headers, max_body_bytes)
        self._events = SSEReader()
        self._accumulator = accumulator
        self._limits = limits
        self._headers = headers
        self._last_event = self._started
        self.ttft_s: float | None = None

    @property
    def done(self) -> bool:
        return self._accumulator.done

    def wait_s(self) -> float:
        """How long the next piece may take: until the limit between events, or the
        request's, whichever is sooner. At most 0 when one has passed."""
        now = time.monotonic()
        # guard: stream-idle-limit-between-events
        until_event = self._last_event + self._limits.idle_s
        return min(until_event, self._started + self._limits.total_s) - now

    def stalled(self) -> StreamCut:
        """The failure of a stream that waited past a limit."""
        elapsed = time.monotonic() - self._started
        if elapsed >= self._limits.total_s:
            reason = f"the stream did not end within --timeout {self._limits.total_s:g} s"
        else:
            reason = (
                f"ReadTimeout: the stream stalled: no event within {self._limits.idle_s:g} s "
                "(--stream-idle-timeout)"
            )
        return self.cut(reason)

    def cut(self, reason: str) -> StreamCut:
        return StreamCut(reason, self._accumulator.body())

    def feed(self, chunk: bytes) -> None:
        """Read one piece of the body (empty: the connection closed)."""
        if not chunk:
            raise self.cut("ReadError: the connection closed before the stream ended")
        # guard: stream-read-within-size-limit
        decoded = self._decoded(chunk)
        try:
            events = self._events.feed(decoded)
            for event in events:
                self._last_event = time.monotonic()
                if self._accumulator.add(event) and self.ttft_s is None:
                    self.ttft_s = self._last_event - self._started
                if self._accumulator.done:
                    return  # whatever follows the last event is not read
        except (SSEError, StreamEventError) as exc:
            raise self.cut(f"StreamError: {exc}") from None

    def _decoded(self, chunk: bytes) -> bytes:
        """``chunk`` decoded, counted against the body's limit like any reply's (past it, a
        ReplyTooLarge goes up as it is: not retried)."""
        try:
            self._reading.feed(chunk)
        except ReplyTooLarge as exc:
            exc.partial = self._accumulator.body()  # its usage so far was billed
            raise
        return self._reading.take()

    def reply(self) -> HttpReply:
        return HttpReply(200, self._headers, self._accumulator.body(), self.ttft_s)


def is_event_stream(headers: Mapping[str, str]) -> bool:
    """Whether a reply is server-sent events (a server may answer a stream request whole)."""
    kind = headers.get("content-type", "").split(";")[0].strip().lower()
    return kind == "text/event-stream"
