"""A reply as the client reads it, and the failures of reading one: what a transport
(``loopbench.harness.models.transport``) and a streamed read (``loopbench.harness.models.streamed``)
share.

A body is read a chunk at a time through ``BoundedBody``, which decodes it (gzip,
deflate) and counts it: memory never holds more than ``max_body_bytes`` of one, however
well it compresses. A longer one is a ``ReplyTooLarge``, and the rest of it is not read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from loopbench.harness import fast_json
from loopbench.harness.errors import ModelError
from loopbench.harness.models.bounded_body import BodyTooLarge, BodyUndecodable, BoundedBody


@dataclass(frozen=True)
class HttpReply:
    status: int
    #: Looked up without regard to case (aiohttp's and httpx's headers both are).
    headers: Mapping[str, str]
    body: bytes
    #: Seconds from sending to the first token of a streamed reply (``post_stream``).
    ttft_s: float | None = None

    def json(self) -> object:
        return fast_json.loads(self.body)

    @property
    def text(self) -> str:
        """The body as text, in the charset its content-type names (else UTF-8)."""
        return self.opening(len(self.body))

    def opening(self, size: int) -> str:
        """The first ``size`` bytes of the body as text (what an error message quotes: a
        body may be megabytes long)."""
        charset = "utf-8"
        for parameter in self.headers.get("content-type", "").split(";")[1:]:
            key, _, value = parameter.strip().partition("=")
            if key.lower() == "charset" and value:
                charset = value.strip('"')
        start = self.body[:size]
        try:
            return start.decode(charset, errors="replace")
        except LookupError:
            return start.decode("utf-8", errors="replace")


class TransportFailure(ModelError):
    """No reply, or not a whole one: a refused or dropped connection, a broken HTTP
    message, a body that does not decode. Its text names the cause."""


class ReplyTooLarge(ModelError):
    """A reply whose body is past the limit: the endpoint's failure, not retried (the same
    request would most likely bring the same reply, and each one is billed)."""

    def __init__(self, status: int, limit: int) -> None:
        super().__init__(
            f"the reply (HTTP {status}) is {BodyTooLarge(limit)}, the most a reply may hold; "
            "the rest of it was not read"
        )
        self.status = status
        #: A stream's reply as built until the limit (``loopbench.harness.models.streamed``): the
        #: usage it reported is counted.
        self.partial = b""


class Reading:
    """A reply being read: its status and headers, and its body so far, bounded."""

    def __init__(self, status: int, headers: Mapping[str, str], max_body_bytes: int) -> None:
        self.status, self.headers = status, headers
        try:
            self._body = BoundedBody(headers.get("content-encoding"), max_body_bytes)
            self._body.expect(headers.get("content-length"))
        except BodyUndecodable as exc:
            raise TransportFailure(f"DecodingError: {exc}") from None
        except BodyTooLarge:
            raise ReplyTooLarge(status, max_body_bytes) from None

    def feed(self, chunk: bytes) -> None:
        try:
            self._body.feed(chunk)
        except BodyUndecodable as exc:
            raise TransportFailure(f"DecodingError: {exc}") from None
        except BodyTooLarge:
            raise ReplyTooLarge(self.status, self._body.limit) from None

    def take(self) -> bytes:
        """The body decoded since the last ``take`` (a stream is read as it comes)."""
        return self._body.take()

    def reply(self) -> HttpReply:
        try:
            return HttpReply(self.status, self.headers, self._body.finish())
        except BodyUndecodable as exc:
            raise TransportFailure(f"DecodingError: {exc}") from None
        except BodyTooLarge:
            raise ReplyTooLarge(self.status, self._body.limit) from None
