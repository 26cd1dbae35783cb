"""One model call, no tools: what ``direct`` and ``cot`` share."""

from __future__ import annotations

from collections.abc import Callable

from loopbench.harness.models.types import Message, ModelRequest
from loopbench.harness.patterns.base import Outcome, RunContext, answer_reply


async def answer_once(
    ctx: RunContext,
    system: str,
    max_output_tokens: int,
    extract: Callable[[str], str | None],
    temperature: float | None = None,
) -> Outcome:
    """Ask once; the answer is ``extract(reply)``, or the status says why there is none."""
    messages = [Message("user", ctx.question)]
    request = ModelRequest(
        model=ctx.model_name,
        system=system,
        messages=tuple(messages),
        max_output_tokens=max_output_tokens,
        temperature=temperature,
    )
    response = await ctx.model.complete(request)
    messages.append(response.message)
    return answer_reply(ctx, response, messages, extract=extract)
