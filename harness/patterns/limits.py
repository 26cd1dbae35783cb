"""The limits wrapper: a token ceiling and a wall-clock step timeout for any tool-using pattern.

Like seed 001's wrappers it keeps the inner pattern's name, so ``react`` with limits
is still ``react``. It watches the counted client: a call is refused once the run's
tokens reach the ceiling (tokens already spent cannot be unspent, so the check comes
before the call), and a call that outlives the timeout is cancelled. Either ends the
run with its status; what was counted stays counted. The loops also check
``max_tokens`` between calls; this wrapper is what holds patterns with phases of
their own (plans, critiques, votes) to the same ceiling.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace

from harness.models.counting import CountedClient
from harness.models.types import ModelError, ModelRequest, ModelResponse
from harness.patterns.base import Outcome, Pattern, RunContext


class TokenCeilingReached(ModelError):
    pass


class StepTimedOut(ModelError):
    pass


class LimitedClient:
    def __init__(self, counted: CountedClient, max_tokens: int, timeout_s: float) -> None:
        self._counted = counted
        self._max_tokens = max_tokens
        self._timeout_s = timeout_s

    @property
    def calls(self) -> int:
        return self._counted.calls

    @property
    def tokens_used(self) -> int:
        return self._counted.tokens_used

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if self._counted.tokens_used >= self._max_tokens:
            raise TokenCeilingReached(
                f"{self._counted.tokens_used} tokens used; the ceiling is {self._max_tokens}"
            )
        if not self._timeout_s:
            return await self._counted.complete(request)
        try:
            return await asyncio.wait_for(self._counted.complete(request), self._timeout_s)
        except TimeoutError:
            raise StepTimedOut(f"a model call took longer than {self._timeout_s:g} s") from None


@dataclass(frozen=True)
class Limited:
    inner: Pattern
    max_tokens: int
    step_timeout_s: float

    @property
    def name(self) -> str:
        return self.inner.name

    async def run(self, ctx: RunContext) -> Outcome:
        limited = replace(ctx, model=LimitedClient(ctx.model, self.max_tokens, self.step_timeout_s))
        try:
            return await self.inner.run(limited)
        except TokenCeilingReached as exc:
            return Outcome("token_budget", steps=ctx.model.calls, error=str(exc))
        except StepTimedOut as exc:
            return Outcome("step_timeout", steps=ctx.model.calls, error=str(exc))
