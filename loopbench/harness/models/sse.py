"""Server-sent events read from a reply's body as it arrives, strictly and within bounds.

A streamed reply (``text/event-stream``) is lines of UTF-8: ``field: value`` lines, a
blank line ending each event, lines starting with ``:`` ignored (comments, which servers
send to keep a connection open). Only two fields matter to a model's stream: ``data``
(several lines of it are joined with newlines) and ``event`` (the event's name, which
Anthropic's API sends; OpenAI's sends none). ``id`` and ``retry`` are reconnection
settings, of no use to one request, and skipped; any other field is ignored, as the
format says.

Strict: bytes that are not UTF-8 are an ``SSEError``, never replaced. Bounded: the
transport limits the whole body (``--max-response-mb``); a line still open is kept
within ``max_line`` bytes, so a body of one endless line is refused early, not buffered
until the limit. An event cut off by the end of the body is not an event: the caller
knows whether its stream ended where it should.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from loopbench.harness.errors import ModelError

_LINE_END = re.compile("\r\n|\r|\n")
#: The data OpenAI-style streams end with.
DONE = "[DONE]"
#: The longest line kept while it is open, in characters: far past any one event of a
#: model's stream (a chunk is a token or a few), short of holding a whole bomb.
MAX_LINE = 8 << 20


class SSEError(ModelError):
    """A body that is not server-sent events: not UTF-8, or a line past the limit."""


@dataclass(frozen=True, slots=True)
class ServerEvent:
    """One event: its name (``message`` when the stream names none) and its data."""

    name: str
    data: str


class SSEReader:
    """Reads events from a body fed to it in pieces of any size (split anywhere, even inside
    a character)."""

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="strict")
        self._max_line = max_line
        self._open = ""  # the text of the line not yet ended
        self._after_cr = False  # the last piece ended in "\r": a "\n" next is part of it
        self._name = ""
        self._data: list[str] = []
        self._first = True  # a byte order mark may start the stream

    def feed(self, chunk: bytes) -> list[ServerEvent]:
        """The events ``chunk`` completes, in order."""
        try:
            text = self._decoder.decode(chunk)
        except UnicodeDecodeError as exc:
            raise SSEError(f"the event stream is not UTF-8 ({exc.reason})") from None
        if self._first and text:
            text = text.removeprefix("\ufeff")
            self._first = False
        if self._after_cr and text.startswith("\n"):
            text = text[1:]
        self._after_cr = text.endswith("\r")
        # Only CR, LF and CRLF end a line: str.splitlines would split JSON text at U+2028.
        *lines, self._open = _LINE_END.split(self._open + text)
        events: list[ServerEvent] = []
        for line in lines:
            event = self._line(line)
            if event is not None:
                events.append(event)
        # guard: sse-open-line-bounded
        if len(self._open) > self._max_line:
            raise SSEError(
                f"the event stream holds a line longer than {self._max_line:,} characters"
            )
        return events

    def _line(self, line: str) -> ServerEvent | None:
        if not line:  # a blank line ends the event, if it has data
            return self._dispatch()
        if line.startswith(":"):  # a comment
            return None
        field, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._name = value
        return None

    def _dispatch(self) -> ServerEvent | None:
        data, name = self._data, self._name or "message"
        self._data, self._name = [], ""
        if not data:
            return None
        return ServerEvent(name, "\n".join(data))
