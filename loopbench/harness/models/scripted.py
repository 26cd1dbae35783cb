"""Model clients for tests: scripted replies and a function of the request.

Shipped in the package, not only in the tests, so users can test their own
patterns the same way: script the replies, run the pattern, then assert on
``requests`` — what the pattern *sent* is usually what is worth checking.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from loopbench.harness.models.types import (
    FinishReason,
    Message,
    ModelAPIError,
    ModelClient,
    ModelRequest,
    ModelResponse,
    ToolCall,
    Usage,
)

Reply = str | ModelResponse | Exception


def text_reply(text: str, finish_reason: FinishReason = "stop") -> ModelResponse:
    return ModelResponse(Message("assistant", text), finish_reason=finish_reason)


def tool_reply(*calls: tuple[str, dict[str, Any] | str], text: str = "") -> ModelResponse:
    """A reply calling tools, e.g. ``tool_reply(("lookup", {"title": "Paris"}))``."""
    tool_calls = tuple(
        ToolCall(
            id=f"call_{i}", name=name, arguments=args if isinstance(args, str) else json.dumps(args)
        )
        for i, (name, args) in enumerate(calls)
    )
    return ModelResponse(
        Message("assistant", text, tool_calls=tool_calls), finish_reason="tool_calls"
    )


def estimated_usage(request: ModelRequest, response: ModelResponse) -> Usage:
    """Deterministic token counts (four characters a token) so tests can check counting."""
    chars = len(request.system) + sum(len(m.content) for m in request.messages)
    out = len(response.message.content) + sum(len(c.arguments) for c in response.message.tool_calls)
    return Usage(input_tokens=chars // 4 + 1, output_tokens=out // 4 + 1)


def _with_usage(request: ModelRequest, response: ModelResponse) -> ModelResponse:
    if response.usage != Usage():
        return response
    return ModelResponse(
        response.message,
        response.finish_reason,
        estimated_usage(request, response),
        response.retries,
    )


class ScriptedModel:
    """Answers with the given replies in order and keeps every request it was sent.

    A reply may be text, a full ``ModelResponse``, or an exception to raise. Running
    out of replies raises ``ModelAPIError``, so a pattern that calls more often than
    the script allows fails loudly instead of hanging.
    """

    def __init__(self, replies: Iterable[Reply]) -> None:
        self._replies = list(replies)
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        if not self._replies:
            raise ModelAPIError(f"the script has no reply left for call {len(self.requests)}")
        reply = self._replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        response = text_reply(reply) if isinstance(reply, str) else reply
        return _with_usage(request, response)


class FunctionModel:
    """Answers each request with ``fn(request)``; shareable across concurrent runs. With
    ``keep_requests`` it keeps every request in ``requests`` (a test's view of what was
    sent); otherwise none, so a grid of any size holds no more than its runs in flight."""

    def __init__(self, fn: Callable[[ModelRequest], Reply], keep_requests: bool = False) -> None:
        self._fn = fn
        self._keep = keep_requests
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        # guard: function-model-keeps-no-request
        if self._keep:
            self.requests.append(request)
        reply = self._fn(request)
        if isinstance(reply, Exception):
            raise reply
        response = text_reply(reply) if isinstance(reply, str) else reply
        return _with_usage(request, response)


#: What may stand for the model: a client, or a function of the request (sync or async)
#: returning a reply's text, a ModelResponse, or an exception to raise.
ModelLike = ModelClient | Callable[[ModelRequest], Reply | Awaitable[Reply]]


def as_client(model: ModelLike | None) -> ModelClient:
    """A model client from a client or a plain function (sync or async) of the request."""
    if model is None:
        raise ValueError("no model: give Experiment(model=...) or run(model)")
    complete = getattr(model, "complete", None)
    if complete is not None and inspect.iscoroutinefunction(complete):
        return model  # type: ignore[return-value]
    if not callable(model):
        raise TypeError(f"a model is a ModelClient or a function of the request, not {model!r}")
    if inspect.iscoroutinefunction(model):
        return _AsyncFunctionModel(model)
    return FunctionModel(model)  # type: ignore[arg-type]


@dataclass(frozen=True)
class _AsyncFunctionModel:
    fn: Callable[[ModelRequest], Awaitable[Reply]]

    async def complete(self, request: ModelRequest) -> ModelResponse:
        reply = await self.fn(request)
        return await FunctionModel(lambda _: reply).complete(request)
