"""Shared calls across arms (``run --paired``): the paired design of seed 003, 3.5.

Every repair arm should start from the same first attempt, so that fixes and breakages
are counted on identical code. When two arms send an identical request for the same
task and repeat, the first to send it asks the endpoint and the others get its response,
marked ``from_cache``: their records count it among ``cache_hits`` and its cost in
``cost_from_cache_usd``, since it was not spent again. Requests are told apart as the
response cache tells them (``canonical_request``), including how many times a run has
already sent the identical request, so a run's own samples stay independent.

An arm that asks while the first is still waiting waits for the same response; when that
call fails, each waiting arm makes its own call.

Shared responses live as long as the grid, so pairing holds within one ``run``. With a
response cache (``--cache DIR``) they are also kept there, under the task and repeat, so
a resumed grid or an arm added later starts from the same first attempt too.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import replace
from typing import Any

from loopbench.harness.models.cache import ResponseCache, canonical_request, request_key
from loopbench.harness.models.types import ModelClient, ModelRequest, ModelResponse


class SharedCalls:
    """The responses of one grid, shared by request within a task and repeat."""

    def __init__(self, cache: ResponseCache | None = None) -> None:
        self._responses: dict[str, asyncio.Future[ModelResponse]] = {}
        self._cache = cache

    def client(self, inner: ModelClient, scope: str) -> SharedClient:
        """One run's client; ``scope`` is its task and repeat, never its arm."""
        return SharedClient(inner, self, scope)

    async def complete(
        self, inner: ModelClient, key: str, request: ModelRequest, canonical: dict[str, Any]
    ) -> ModelResponse:
        if self._cache is not None and (kept := self._cache.get(key)) is not None:
            return kept
        known = self._responses.get(key)
        if known is not None:
            try:
                shared = await asyncio.shield(known)
            except Exception:  # the first asker's call failed: make this run's own
                # guard: failed-shared-call-leaves-each
                return await inner.complete(request)
            return replace(shared, from_cache=True, retries=0, ttft_s=None)  # nothing was sent
        future: asyncio.Future[ModelResponse] = asyncio.get_running_loop().create_future()
        self._responses[key] = future
        try:
            response = await inner.complete(request)
        except BaseException as exc:
            del self._responses[key]
            future.set_exception(exc)
            future.exception()  # retrieved here: a failure nobody waited for is not an error
            raise
        future.set_result(response)
        if self._cache is not None:
            self._cache.put(key, canonical, response)
        return response


class SharedClient:
    def __init__(self, inner: ModelClient, shared: SharedCalls, scope: str) -> None:
        self._inner = inner
        self._shared = shared
        self._scope = scope
        self._sent: Counter[str] = Counter()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        canonical = canonical_request(request, f"paired {self._scope}", 0)
        first = request_key(canonical)
        occurrence = self._sent[first]
        self._sent[first] += 1
        canonical["occurrence"] = occurrence
        key = first if occurrence == 0 else request_key(canonical)
        return await self._shared.complete(self._inner, key, request, canonical)
