"""A reply's body, decoded and counted while it is read, so it never holds more than a limit.

Both transports read a body through ``BoundedBody``: they feed it the bytes as they
arrive (still compressed) and it decodes them, ``gzip`` and ``deflate`` only (what
``ACCEPT_ENCODING`` asks for), each step of decompression asked for no more than the
room left. The limit is on the body decompressed, and on the bytes received too: past
either, ``BodyTooLarge`` is raised at once, before the rest is read or inflated, so a
megabyte that inflates to a gigabyte costs the limit and no more.
"""

from __future__ import annotations

import zlib

from loopbench.harness.errors import HarnessFault, ModelError

#: The encodings a reply may use: the ones decoded here, a step at a time.
ACCEPT_ENCODING = "gzip, deflate"
MIB = 1 << 20


class BodyTooLarge(ModelError):
    """More than the limit arrived, or would once decompressed; the rest was not read."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"more than {limit / MIB:g} MiB once decompressed")
        self.limit = limit


class BodyUndecodable(ModelError):
    """A body in an encoding that was not asked for, or that does not decode."""


class _Overflow(HarnessFault):
    """A layer was about to make more than the room it was given."""


class _Inflate:
    """One gzip or deflate layer, inflating no more than it is given room for."""

    def __init__(self, encoding: str) -> None:
        self._gzip = encoding in ("gzip", "x-gzip")
        self._encoding = encoding
        self._raw_deflate = False  # a deflate body without its zlib header, as some servers send
        self._started = False
        self._inflater = self._new()

    def _new(self) -> zlib._Decompress:
        return zlib.decompressobj(31 if self._gzip else -15 if self._raw_deflate else 15)

    def inflate(self, data: bytes, room: int) -> bytes:
        """``data`` inflated; BodyTooLarge if it holds more than ``room`` bytes."""
        out: list[bytes] = []
        made = 0
        while data:
            try:
                piece = self._inflater.decompress(data, room - made + 1)
            except zlib.error as exc:
                if self._gzip or self._started:
                    raise BodyUndecodable(
                        f"the {self._encoding} body does not decode: {exc}"
                    ) from None
                self._raw_deflate = True  # retried once, as raw deflate
                self._inflater = self._new()
                continue
            self._started = True
            made += len(piece)
            if made > room:
                raise _Overflow
            out.append(piece)
            data = self._inflater.unused_data if self._inflater.eof else b""
            if data and self._gzip:  # a gzip body may hold several members, one after another
                self._inflater = self._new()
            elif data:  # bytes after a whole deflate stream are not part of it
                data = b""
        return b"".join(out)

    def flush(self, room: int) -> bytes:
        rest = self._inflater.flush(room + 1)
        if len(rest) > room:
            raise _Overflow
        return rest


class BoundedBody:
    """A body of at most ``limit`` bytes, decoded from ``content_encoding`` as it comes."""

    def __init__(self, content_encoding: str | None, limit: int) -> None:
        self.limit = limit
        self._received = 0
        self._size = 0
        self._chunks: list[bytes] = []
        #: Applied in the order listed, so undone in the reverse order.
        self._layers: list[_Inflate] = []
        if not content_encoding:  # as nearly every reply is sent: nothing to undo
            return
        encodings = [e.strip().lower() for e in content_encoding.split(",")]
        encodings = [e for e in encodings if e and e != "identity"]
        refused = [e for e in encodings if e not in ("gzip", "x-gzip", "deflate")]
        if refused:
            raise BodyUndecodable(
                f"the body is encoded as {refused[0]!r}, which was not asked for "
                f"(accept-encoding: {ACCEPT_ENCODING})"
            )
        self._layers = [_Inflate(e) for e in reversed(encodings)]

    def expect(self, content_length: str | None) -> None:
        """Refuse before reading a body whose declared length is already past the limit."""
        if content_length and content_length.strip().isdigit():
            digits = content_length.strip()
            # guard: declared-length-past-limit-refused
            if len(digits) > 18 or int(digits) > self.limit:
                raise BodyTooLarge(self.limit)

    def feed(self, data: bytes) -> None:
        try:
            self._feed(data)
        except _Overflow:
            raise BodyTooLarge(self.limit) from None

    def _feed(self, data: bytes) -> None:
        self._received += len(data)
        # guard: bytes-received-count-against-limit
        if self._received > self.limit:
            raise BodyTooLarge(self.limit)
        self._keep(data, self._layers)

    def finish(self) -> bytes:
        """The whole body, decoded."""
        try:
            for i, layer in enumerate(self._layers):
                self._keep(layer.flush(self._room()), self._layers[i + 1 :])
        except _Overflow:
            raise BodyTooLarge(self.limit) from None
        return b"".join(self._chunks)

    def take(self) -> bytes:
        """What was decoded since the last ``take``, no longer kept: a streamed body is
        read as it comes, and its size is still counted against the limit."""
        taken = b"".join(self._chunks)
        self._chunks.clear()
        return taken

    def _room(self) -> int:
        return self.limit - self._size

    def _keep(self, data: bytes, layers: list[_Inflate]) -> None:
        """Keep ``data`` undone through ``layers``; no step makes more than the room left."""
        for layer in layers:
            data = layer.inflate(data, self._room())
        self._size += len(data)
        if self._size > self.limit:
            raise BodyTooLarge(self.limit)
        if data:
            self._chunks.append(data)
