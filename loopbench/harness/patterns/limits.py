"""The limits wrapper: every run limit of every pattern, enforced in one place.

Like seed 001's wrappers it keeps the inner pattern's name, so ``react`` with limits
is still ``react``. It stands between the pattern and the counted client:

- a ``max_steps`` below the pattern's call floor is refused before any request;
- a call beyond ``max_steps`` is never sent (step_budget);
- a call once the run's tokens reach ``max_tokens`` is never sent (token_budget):
  tokens already spent cannot be unspent, so the check comes before the call. A call
  whose response reported no usage counts its estimate (``ceiling_counter``: the
  embedded model's tokenizer, else four characters a token), and the outcome's metrics
  say so (``ceiling_estimated_calls``, ``ceiling_estimated_tokens``, and
  ``ceiling_tokenizer`` 1 or 0 for characters); those estimates are not in the
  record's token counts or cost unless ``--count-tokens`` put them there;
- a call that outlives ``step_timeout_s`` is cancelled (step_timeout); its wait for a
  request slot in loopbench's own queue does not count;
- ``max_output_tokens``, when set, is the completion limit of every call;
- ``reasoning_effort`` and ``thinking_budget``, when set, go on every call that sets
  none of its own (the run's settings fill in what is still unset, further down);
- an endpoint failure ends the run as api_error, so patterns never catch it.

Whichever limit ends the run, the partial work stays: the conversation as of the
last exchange and the last answer the pattern traced go into the trace as a
``limit_reached`` event, and what was counted stays counted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace

from loopbench.harness.errors import HarnessFault
from loopbench.harness.events import LimitReachedEvent
from loopbench.harness.models.counting import CountedClient, wire_message
from loopbench.harness.models.estimate import CeilingCount, ceiling_counter, estimated_usage
from loopbench.harness.models.throttle import STEP_DEADLINE
from loopbench.harness.models.types import (
    Message,
    ModelAPIError,
    ModelRequest,
    ModelResponse,
)
from loopbench.harness.patterns.base import CallFloor, Outcome, Pattern, PatternOptions, RunContext
from loopbench.harness.results.statuses import LIMIT_STATUSES, Status


class LimitReached(HarnessFault):
    """A call was not made, or not finished, because a run limit was reached: loopbench's
    own signal (not the endpoint's doing), which ends the run with ``status``."""

    status: Status = "step_budget"


class StepBudgetReached(LimitReached):
    status: Status = "step_budget"


class TokenCeilingReached(LimitReached):
    status: Status = "token_budget"


class StepTimedOut(LimitReached):
    status: Status = "step_timeout"


class LimitedClient:
    def __init__(
        self,
        counted: CountedClient,
        options: PatternOptions,
        estimate: Callable[[], CeilingCount] | None = ceiling_counter,
    ) -> None:
        self._counted = counted
        self._options = options
        self._estimate = estimate
        #: Calls that reported no usage, and their tokens as the ceiling estimated them.
        self.unreported_calls = 0
        self.unreported_tokens = 0
        self.estimated_by = ""
        # The last exchange, kept by reference (no copy on the hot path): what was sent
        # and, if it came, the reply.
        self._sent: tuple[Message, ...] = ()
        self._reply: Message | None = None

    @property
    def calls(self) -> int:
        return self._counted.calls

    @property
    def conversation(self) -> list[Message]:
        """The conversation as of the last exchange: what was sent and, if it came, the reply."""
        return [*self._sent, *([self._reply] if self._reply is not None else [])]

    @property
    def tokens_used(self) -> int:
        """Tokens reported, and estimated for the calls that reported none."""
        return self._counted.tokens_used + self.unreported_tokens

    def ceiling_metrics(self) -> dict[str, float]:
        if not self.unreported_calls:
            return {}
        return {
            "ceiling_estimated_calls": float(self.unreported_calls),
            "ceiling_estimated_tokens": float(self.unreported_tokens),
            "ceiling_tokenizer": float(self.estimated_by == "tokenizer"),
        }

    async def complete(self, request: ModelRequest) -> ModelResponse:
        opts = self._options
        # guard: step-ceiling
        if self._counted.calls >= opts.max_steps:
            raise StepBudgetReached(
                f"{self._counted.calls} model calls made; max_steps is {opts.max_steps}"
            )
        # ``tokens_used`` added up here: its property is one call more on every call.
        # guard: token-ceiling-also-reflection
        if self._counted.tokens_used + self.unreported_tokens >= opts.max_tokens:
            estimated = (
                f" ({self.unreported_tokens} estimated by {self.estimated_by} for "
                f"{self.unreported_calls} calls that reported no usage)"
                if self.unreported_calls
                else ""
            )
            raise TokenCeilingReached(
                f"{self.tokens_used} tokens used{estimated}; the ceiling is {opts.max_tokens}"
            )
        # guard: completion-limit
        if opts.max_output_tokens is not None:
            request = replace(request, max_output_tokens=opts.max_output_tokens)
        if opts.reasoning_effort is not None or opts.thinking_budget is not None:
            request = _with_reasoning(request, opts)
        self._sent, self._reply = request.messages, None
        if not opts.step_timeout_s:
            response = await self._counted.complete(request)
        else:
            try:
                async with asyncio.timeout(opts.step_timeout_s) as deadline:
                    token = STEP_DEADLINE.set(deadline)  # paused while waiting for a slot
                    try:
                        response = await self._counted.complete(request)
                    finally:
                        STEP_DEADLINE.reset(token)
            except TimeoutError:
                raise StepTimedOut(
                    f"a model call took longer than {opts.step_timeout_s:g} s"
                ) from None
        self._reply = response.message
        if self._estimate is None:  # the client below estimates what was not reported
            return response
        # guard: token-ceiling-counts-calls-reported
        if response.usage.missing > response.usage.estimated:  # not estimated for the counts
            count, self.estimated_by = self._estimate()
            usage = estimated_usage(count, request, response)
            self.unreported_calls += 1
            self.unreported_tokens += usage.input_tokens + usage.output_tokens
        return response


def _with_reasoning(request: ModelRequest, options: PatternOptions) -> ModelRequest:
    """``request`` with the arm's reasoning settings where it sets none of its own."""
    effort, budget = options.reasoning_effort, options.thinking_budget
    if effort is None and budget is None:
        return request
    # guard: arm-reasoning-settings-sent
    return replace(
        request,
        reasoning_effort=effort if request.reasoning_effort is None else request.reasoning_effort,
        thinking_budget=budget if request.thinking_budget is None else request.thinking_budget,
    )


@dataclass(frozen=True)
class Limited:
    inner: Pattern
    options: PatternOptions
    #: How the token ceiling counts a call that reported no usage; None where the client it
    #: is given counts them already (a pipeline's stage).
    estimate: Callable[[], CeilingCount] | None = ceiling_counter

    @property
    def name(self) -> str:
        return self.inner.name

    def call_floor(self) -> CallFloor:
        return self.inner.call_floor()

    async def run(self, ctx: RunContext) -> Outcome:
        floor = self.inner.call_floor()
        # guard: call-floor-refusal
        if self.options.max_steps < floor.calls:
            return Outcome(
                "refused",
                messages=[Message("user", ctx.question)],
                error=f"{self.name} needs max_steps of at least {floor.calls} ({floor.why}); "
                f"max_steps is {self.options.max_steps}",
            )
        client = LimitedClient(ctx.model, self.options, self.estimate)
        try:
            outcome = await self.inner.run(replace(ctx, model=client))
        except LimitReached as exc:
            outcome = Outcome(
                exc.status, messages=client.conversation, steps=ctx.model.calls, error=str(exc)
            )
        except ModelAPIError as exc:  # the endpoint failed: no pattern needs to catch it
            outcome = Outcome(
                "api_error", messages=client.conversation, steps=ctx.model.calls, error=str(exc)
            )
        if estimated := client.ceiling_metrics():
            outcome.metrics = outcome.metrics | estimated
        # guard: pipeline-limit-stage-traced-not
        if outcome.status in LIMIT_STATUSES and not ctx.trace.count(LimitReachedEvent):
            # (a pipeline's stage that hit the limit has traced it already)
            answers = ctx.trace.answers()
            conversation = [wire_message(m) for m in outcome.messages or client.conversation]
            ctx.emit(
                LimitReachedEvent(
                    status=outcome.status,
                    conversation=conversation,
                    last_answer=answers[-1].answer if answers else None,
                )
            )
        return outcome
