"""A response cache: re-running a grid replays the responses it already paid for.

``--cache DIR`` keeps one SQLite file, ``DIR/responses.sqlite``. A response is stored
under a hash of the canonical request: model, system text, messages, tools (names,
descriptions and schemas), tool choice, sampling and reasoning settings (the latter only
when set, so older keys still match), stop sequences, and what
keeps samples independent: the run's scope (its arm and repeat index, so two arms
that send the same first request do not share one sample, and repeats stay apart),
and how many times this run has already sent the identical request (self-consistency
sends one request K times and must get K samples, not one sample K times). Within a
scope requests are sequential, so a stored response is never raced for; should two
processes share a cache and both send one request, each keeps the response it was sent
(counted as sent, not replayed) and the first stored is the one every later reader gets.
A row that cannot be read is treated as a miss and stored anew.

The cache never fails a run: a file that cannot be used is refused on opening
(``cache_file``), and should it fail during the run (a disk error, a file changed by
another program) it is bypassed with one warning and the calls go to the endpoint.

Replayed responses keep the usage the endpoint reported when they were first served,
so a re-run reproduces the same records; they are marked ``from_cache`` in the trace
and counted apart in the record (``cache_hits``, ``cost_from_cache_usd``). A replayed
response has no time to first token (``ttft_s`` None, even with ``--stream``): nothing
was sent, so nothing was waited on. The stream setting is not part of the key: a
streamed reply is the reply sent whole.

On a miss, ``debug`` (``--cache-debug``) is told which part of the request differed
from the nearest cached one: the cause of most surprise misses (a changed system
prompt, a tool description edited, a temperature) in one line.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, astuple
from pathlib import Path
from typing import Any, get_args

from loopbench.harness.models.cache_file import CacheError, open_cache_file
from loopbench.harness.models.types import (
    FinishReason,
    Message,
    ModelClient,
    ModelRequest,
    ModelResponse,
    Role,
    ThinkingBlock,
    ToolCall,
    Usage,
)
from loopbench.harness.redaction import redact

CACHE_FILE = "responses.sqlite"


def canonical_request(request: ModelRequest, scope: str, occurrence: int) -> dict[str, Any]:
    """Everything that shapes a response, as plain JSON values."""
    # guard: cache-keeps-arms-repeats-apart
    return {
        "model": request.model,
        "system": request.system,
        "messages": [_message_json(m) for m in request.messages],
        "tools": [asdict(t) for t in request.tools],
        "tool_choice": request.tool_choice,
        "temperature": request.temperature,
        "max_output_tokens": request.max_output_tokens,
        "stop": list(request.stop),
        "scope": scope,
        "occurrence": occurrence,
        # Only when set, so that keys written before these settings existed still match.
        **({"top_p": request.top_p} if request.top_p is not None else {}),
        **({"seed": request.seed} if request.seed is not None else {}),
        **_reasoning(request),
    }


def _reasoning(request: ModelRequest) -> dict[str, Any]:
    """The request's reasoning settings, those set: two requests differing only in effort
    get two replies."""
    settings: dict[str, Any] = {
        "reasoning_effort": request.reasoning_effort,
        "thinking_budget": request.thinking_budget,
    }
    # guard: cache-key-holds-reasoning
    return {name: value for name, value in settings.items() if value is not None}


def request_key(canonical: dict[str, Any]) -> str:
    text = json.dumps(canonical, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    # A lone surrogate would not encode as UTF-8: the counting client replaces those before a
    # request gets here, and any other caller's still has a key (valid text's is unchanged).
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _message_json(message: Message) -> dict[str, Any]:
    return {
        "role": message.role,
        "content": message.content,
        "tool_calls": [asdict(c) for c in message.tool_calls],
        "tool_call_id": message.tool_call_id,
        # Only when held, so that keys written before thinking was kept still match.
        **({"thinking": [b.json for b in message.thinking]} if message.thinking else {}),
    }


def _response_json(response: ModelResponse) -> str:
    return json.dumps(
        {
            "message": _message_json(response.message),
            "finish_reason": response.finish_reason,
            "usage": asdict(response.usage),
        }
    )


#: What reading a damaged row raises (bad JSON, the wrong shape or types, nesting past
#: Python's recursion limit).
# guard: cache-stored-row-nested-past
_DAMAGED = (ValueError, KeyError, TypeError, RecursionError)


def _response_from(text: bytes) -> ModelResponse:
    """The stored response; one of ``_DAMAGED`` when the row is damaged."""
    data = json.loads(text)
    wire = data["message"]
    message = Message(
        wire["role"],
        wire["content"],
        tuple(ToolCall(**c) for c in wire["tool_calls"]),
        wire["tool_call_id"],
        tuple(ThinkingBlock(block) for block in wire.get("thinking", ())),
    )
    usage = Usage(**data["usage"])
    finish: FinishReason = data["finish_reason"]
    # guard: cache-stored-row-wrong-types
    if not _well_typed(message, finish, usage):
        raise ValueError("a stored response of the wrong types")
    return ModelResponse(message, finish, usage, from_cache=True)


def _well_typed(message: Message, finish: str, usage: Usage) -> bool:
    """Whether a stored response has the types a pattern relies on."""
    calls = all(isinstance(f, str) for call in message.tool_calls for f in astuple(call))
    counts = astuple(usage)
    return (
        message.role in get_args(Role)
        and isinstance(message.content, str)
        and (message.tool_call_id is None or isinstance(message.tool_call_id, str))
        and calls
        and all(isinstance(block.json, str) for block in message.thinking)
        and finish in get_args(FinishReason)
        and all(type(n) is int and n >= 0 for n in counts)
    )


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr)


class ResponseCache:
    """The SQLite file behind ``--cache DIR``; one per process, shared by every run.

    ``create`` (``run``) makes the folder and the table when missing; without it (``cache
    stats``/``clear``) the file must already be a loopbench cache. ``warn`` is told, once,
    when the cache fails during a run and is bypassed from then on."""

    def __init__(
        self,
        folder: Path | str,
        warn: Callable[[str], None] = _to_stderr,
        create: bool = True,
    ) -> None:
        path = Path(folder)
        try:
            if path.exists() and not path.is_dir():
                raise CacheError(f"{path}: is a file; --cache must name a folder")
            if create:
                path.mkdir(parents=True, exist_ok=True)
            elif not (path / CACHE_FILE).is_file():
                raise CacheError(
                    f"{path}: holds no {CACHE_FILE}; give the folder passed to run --cache"
                )
        except OSError as exc:
            raise CacheError(
                f"{path}: cannot be used as a cache folder ({exc.strerror or exc})"
            ) from None
        self.path = path / CACHE_FILE
        self._db = open_cache_file(self.path, create)
        # Texts are decoded here: bytes that are not UTF-8 are a damaged row, not a fault.
        # guard: cache-stored-text-not-utf
        self._db.text_factory = bytes
        self._warn = warn
        #: What made the cache fail during the run; from then on it is bypassed.
        self.fault: str | None = None

    def _bypass(self, exc: Exception) -> None:
        """Stop using the cache, saying so; once, as every use first checks ``fault``."""
        # guard: cache-failure-mid-run-bypasses
        self.fault = f"{type(exc).__name__}: {exc}"
        self._warn(
            f"warning: response cache {self.path} failed ({exc}); it is bypassed for "
            "the rest of this run, and every call is sent to the endpoint"
        )

    def get(self, key: str) -> ModelResponse | None:
        """The stored response (counted as replayed), or None: a miss, or a bypassed cache."""
        # guard: cache-bypassed-cache-warns-once
        if self.fault is not None:
            return None
        try:
            row = self._db.execute(
                "SELECT response FROM responses WHERE key = ?", (key,)
            ).fetchone()
            if row is None:
                return None
            try:
                response = _response_from(row[0])
            except _DAMAGED:  # a damaged row: a miss, stored anew
                self._db.execute("DELETE FROM responses WHERE key = ?", (key,))
                return None
            self._db.execute("UPDATE responses SET hits = hits + 1 WHERE key = ?", (key,))
        except sqlite3.Error as exc:
            # guard: cache-failing-read-bypasses-cache
            self._bypass(exc)
            return None
        return response

    def put(self, key: str, canonical: dict[str, Any], response: ModelResponse) -> None:
        """Store ``response`` unless one is stored already (by another process sharing the
        file): the first stored is the one replayed."""
        if self.fault is not None:
            return
        try:
            # guard: secrets-cache-redacted-as-written
            self._db.execute(
                "INSERT OR IGNORE INTO responses (key, request, response) VALUES (?, ?, ?)",
                (
                    key,
                    redact(json.dumps(canonical, sort_keys=True)),
                    redact(_response_json(response)),
                ),
            )
        except sqlite3.Error as exc:
            self._bypass(exc)

    def stats(self) -> dict[str, int]:
        try:
            entries, hits = self._db.execute(
                "SELECT COUNT(*), COALESCE(SUM(hits), 0) FROM responses"
            ).fetchone()
        except sqlite3.Error as exc:
            raise CacheError(f"{self.path}: cannot be read ({exc})") from None
        return {"entries": entries, "hits": hits, "bytes": self.path.stat().st_size}

    def clear(self) -> int:
        try:
            removed: int = self._db.execute("DELETE FROM responses").rowcount
            self._db.execute("VACUUM")
        except sqlite3.Error as exc:
            raise CacheError(f"{self.path}: cannot be cleared ({exc})") from None
        return removed

    def nearest_difference(self, canonical: dict[str, Any]) -> str:
        """Which part of ``canonical`` differs from the closest cached request."""
        best: tuple[int, str] | None = None
        if self.fault is not None:
            return "the cache is bypassed"
        try:
            stored_requests = self._db.execute("SELECT request FROM responses").fetchall()
        except sqlite3.Error as exc:
            # guard: cache-failing-debug-comparison
            self._bypass(exc)
            return "the cache is bypassed"
        for (text,) in stored_requests:
            try:
                stored = json.loads(text)
            # guard: cache-cache-debug-passes-over
            except _DAMAGED:  # a damaged row: not a request to compare with
                continue
            if not isinstance(stored, dict):
                continue
            differs = _differences(stored, canonical)
            if best is None or len(differs) < best[0]:
                best = (len(differs), "; ".join(differs))
        if best is None:
            return "the cache is empty"
        return f"nearest cached request differs in: {best[1]}"

    def close(self) -> None:
        self._db.close()


def _differences(stored: dict[str, Any], now: dict[str, Any]) -> list[str]:
    differs = []
    for field in sorted(set(stored) | set(now)):
        was, new = stored.get(field), now.get(field)
        if was == new:
            continue
        if field == "messages" and isinstance(was, list) and isinstance(new, list):
            at = next(
                (i for i, (a, b) in enumerate(zip(was, new, strict=False)) if a != b),
                min(len(was), len(new)),
            )
            differs.append(f"messages from #{at + 1} ({len(was)} cached, {len(new)} now)")
        else:
            differs.append(f"{field} ({_short(was)} cached, {_short(new)} now)")
    return differs


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


class CachingClient:
    """One run's view of the cache: replays what is stored, stores what is new."""

    def __init__(
        self,
        inner: ModelClient,
        cache: ResponseCache,
        scope: str,
        debug: Callable[[str], None] | None = None,
    ) -> None:
        """``scope`` names the run's independent samples: its arm and repeat, e.g.
        ``react_text:guard=on#2``."""
        self._inner = inner
        self._cache = cache
        self._scope = scope
        self._debug = debug
        self._sent: Counter[str] = Counter()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        canonical = canonical_request(request, self._scope, 0)
        first = request_key(canonical)
        # guard: cache-keeps-identical-requests-one
        occurrence = self._sent[first]
        self._sent[first] += 1
        canonical["occurrence"] = occurrence
        key = first if occurrence == 0 else request_key(canonical)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        if self._debug is not None:
            self._debug(f"cache miss: {self._cache.nearest_difference(canonical)}")
        response = await self._inner.complete(request)
        self._cache.put(key, canonical, response)
        # guard: cache-call-sent-never-counted
        return response  # sent, even when another process stored one first
