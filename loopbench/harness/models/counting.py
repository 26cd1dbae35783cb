"""The usage-counting wrapper: the one place a run's model calls and tokens are totalled.

Counting happens here, at the client, so it is exact on every path: a pattern that
fails half way, refuses, or raises still leaves the calls it made counted. Patterns
never total usage themselves. It is also where a request becomes the one sent: the run's
sampling settings fill in what the pattern left unset, before it is traced, cached and
sent. And it is where text enters and leaves a run: a lone surrogate (``"\\ud800"``) in a
request (a task's question, a tool's result) or in a reply, from any client, is replaced
with U+FFFD and counted (``loopbench.harness.valid_text``), so nothing after it meets text that
cannot be written. An endpoint refusing the reasoning settings a request carried stops the
grid here, whichever client spoke to it (``loopbench.harness.reasoning.refusal``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Protocol, cast

from loopbench.harness.events import (
    ApiErrorEvent,
    RequestEvent,
    ResponseEvent,
    TracedRequest,
    TracedResponse,
    TracedUsage,
    WireMessage,
)
from loopbench.harness.models.estimate import TokenCount, estimated_usage
from loopbench.harness.models.types import (
    Message,
    ModelAPIError,
    ModelClient,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolSpec,
    Usage,
)
from loopbench.harness.models.wire import message_to_wire
from loopbench.harness.reasoning import refusal
from loopbench.harness.sampling import Sampling
from loopbench.harness.trace import Trace
from loopbench.harness.valid_text import valid_text, valid_value

#: No tokens: every run's counts start from this one (a Usage is never changed, only added
#: to, so one serves them all), not from three made for each run.
NO_USAGE = Usage()


class CountedClient(Protocol):
    """What a pattern holds: a model client whose calls and tokens are being counted."""

    @property
    def calls(self) -> int: ...

    @property
    def tokens_used(self) -> int: ...

    async def complete(self, request: ModelRequest) -> ModelResponse: ...


class CountingClient:
    """Wraps a shared client for one run; counts calls, tokens and retries, and traces them."""

    def __init__(
        self,
        inner: ModelClient,
        trace: Trace | None = None,
        estimate: TokenCount | None = None,
        sampling: Sampling | None = None,
    ) -> None:
        self._inner = inner
        #: None when the run sets nothing: requests go as the pattern wrote them.
        self._sampling = sampling if sampling is not None and sampling.sent() else None
        self._trace = trace if trace is not None else Trace()
        self._wire = WireMessages()
        #: The messages found valid, by id (each kept, so that its id is not reused): every
        #: request repeats the conversation so far, and each message is checked once a run.
        self._valid: dict[int, Message] = {}
        #: Counts the text of a call whose response reported no usage (--count-tokens).
        self._estimate = estimate
        self.calls = 0
        self.failed_calls = 0
        self.retries = 0
        self.usage = NO_USAGE
        #: Calls replayed from the response cache, and the usage they replayed.
        self.cache_hits = 0
        self.usage_from_cache = NO_USAGE
        #: Calls answered within a batch (``--batch``), and their usage: the batch price's.
        self.batched_calls = 0
        self.usage_batched = NO_USAGE
        #: Lone surrogates replaced with U+FFFD in what the run sent and received.
        self.replaced_characters = 0
        #: The time to first token of the run's first call, when its reply was streamed
        #: (None: not streamed, replayed from the cache, or failed): what a user waits on.
        self.ttft_s: float | None = None

    @property
    def tokens_used(self) -> int:
        return self.usage.input_tokens + self.usage.output_tokens

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if self._sampling is not None:
            # guard: run-sampling-settings-sent
            request = self._sampling.apply(request)
        # guard: request-lone-surrogates-replaced
        request = request if self._known_valid(request) else self._valid_request(request)
        self.calls += 1
        number = self.calls
        self._trace.emit(RequestEvent.unchecked(self.calls, self._wire.request(request)))
        try:
            response = await self._inner.complete(request)
        except ModelAPIError as exc:
            self.failed_calls += 1
            self.retries += exc.retries
            # guard: unusable-reply-usage-counted
            self.usage = self.usage + exc.usage  # tokens of unusable replies were billed too
            self._trace.emit(
                ApiErrorEvent(
                    call=self.calls, error=str(exc), status=exc.status, retries=exc.retries
                )
            )
            if (refused := refusal(request, exc)) is not None:
                raise refused from None  # every request of the grid would fail alike
            raise
        # guard: reply-lone-surrogates-replaced
        response = response if self._clean(response.message) else self._valid_response(response)
        if response.usage.missing and self._estimate is not None:
            response = replace(response, usage=estimated_usage(self._estimate, request, response))
        self.usage = self.usage + response.usage
        self.retries += response.retries
        if number == 1:
            self.ttft_s = response.ttft_s
        if response.batched:
            self.batched_calls += 1
            self.usage_batched = self.usage_batched + response.usage
        if response.from_cache:
            self.cache_hits += 1
            self.usage_from_cache = self.usage_from_cache + response.usage
        self._trace.emit(ResponseEvent.unchecked(self.calls, self._wire.response(response)))
        return response

    def _valid_request(self, request: ModelRequest) -> ModelRequest:
        """``request`` with its texts valid: the same object when they were (as they
        nearly always are, checked without copying)."""
        if self._known_valid(request):
            return request
        system, replaced = valid_text(request.system)
        messages = tuple(self._valid_message(m) for m in request.messages)
        tools = []
        for tool in request.tools:
            if id(tool) in _VALID_TOOLS:  # offered on every call: walked once, not each time
                tools.append(tool)
                continue
            spec, in_tool = valid_value((tool.name, tool.description, tool.parameters))
            tools.append(ToolSpec(*spec) if in_tool else tool)
            replaced += in_tool
            if not in_tool:
                _remember_valid(tool)
        stop, in_stop = valid_value(request.stop)
        replaced += in_stop
        if not replaced and all(a is b for a, b in zip(messages, request.messages, strict=True)):
            return request
        self.replaced_characters += replaced
        return replace(request, system=system, messages=messages, tools=tuple(tools), stop=stop)

    def _known_valid(self, request: ModelRequest) -> bool:
        """Whether every text of ``request`` is valid, found without copying or counting
        anything: the messages checked once a run (each request repeats the conversation so
        far), the tools once. Otherwise ``_valid_request`` makes it valid and counts."""
        valid = self._valid
        for message in request.messages:
            if id(message) not in valid and not self._clean(message):
                return False
        if request.stop:
            return False
        for tool in request.tools:
            if id(tool) not in _VALID_TOOLS:
                return False
        return not valid_text(request.system)[1]

    def _clean(self, message: Message) -> bool:
        """Whether ``message``'s texts are valid; remembered when they are."""
        texts = [message.content, message.tool_call_id or ""]
        for call in message.tool_calls:
            texts += (call.id, call.name, call.arguments)
        for text in texts:  # ASCII at once, as nearly every text is: no call for it
            if not text.isascii() and valid_text(text)[1]:
                return False
        self._valid[id(message)] = message
        return True

    def _valid_response(self, response: ModelResponse) -> ModelResponse:
        message = self._valid_message(response.message)
        return response if message is response.message else replace(response, message=message)

    def _valid_message(self, message: Message) -> Message:
        """``message`` itself when its texts are valid, else a copy with them made valid
        (the replacements counted)."""
        if id(message) in self._valid or self._clean(message):
            return message
        content, replaced = valid_text(message.content)
        calls = []
        for call in message.tool_calls:
            texts = [valid_text(text) for text in (call.id, call.name, call.arguments)]
            in_call = sum(count for _, count in texts)
            calls.append(ToolCall(*(text for text, _ in texts)) if in_call else call)
            replaced += in_call
        call_id, in_id = valid_text(message.tool_call_id or "")
        replaced += in_id
        if not replaced:
            self._valid[id(message)] = message
            return message
        self.replaced_characters += replaced
        return replace(
            message,
            content=content,
            tool_calls=tuple(calls),
            tool_call_id=call_id if message.tool_call_id is not None else None,
        )


#: The tools whose texts were found valid, by id (each kept, so that its id is not reused):
#: a tool's schema is walked once, not on every call that offers it. Bounded, should a
#: pattern make its tools anew for each request.
_VALID_TOOLS: dict[int, ToolSpec] = {}
_MOST_VALID_TOOLS = 1024


def _remember_valid(tool: ToolSpec) -> None:
    if len(_VALID_TOOLS) >= _MOST_VALID_TOOLS:
        _VALID_TOOLS.clear()
    _VALID_TOOLS[id(tool)] = tool


def wire_message(message: Message) -> WireMessage:
    """``message`` as a trace holds it: the chat-completions JSON, never changed once built."""
    return cast(WireMessage, message_to_wire(message))  # builds exactly this shape


#: ``wire_message`` called straight, without its call and ``cast``'s on every message.
_wire_message = cast(Callable[[Message], WireMessage], message_to_wire)


class WireMessages:
    """Requests and responses as a trace holds them, each message's wire JSON built once a
    run: every request repeats the conversation so far, and shares the dicts already built."""

    def __init__(self) -> None:
        #: By the message's id; the message is kept too, so that its id is not reused.
        self._built: dict[int, tuple[Message, WireMessage]] = {}

    def message(self, message: Message) -> WireMessage:
        built = self._built.get(id(message))
        if built is None:
            built = self._built[id(message)] = (message, _wire_message(message))
        return built[1]

    def messages(self, messages: tuple[Message, ...]) -> list[WireMessage]:
        """``messages`` as wire JSON, those built before (all but the newest) looked up."""
        built = self._built
        return [
            found[1] if (found := built.get(id(m))) is not None else self.message(m)
            for m in messages
        ]

    def request(self, request: ModelRequest) -> TracedRequest:
        traced: TracedRequest = {
            "model": request.model,
            "system": request.system,
            "messages": self.messages(request.messages),
            "tools": [t.name for t in request.tools],
            "tool_choice": request.tool_choice,
            "temperature": request.temperature,
            "top_p": request.top_p,
            "seed": request.seed,
            "max_output_tokens": request.max_output_tokens,
            "stop": list(request.stop),
        }
        # The reasoning settings only when set: a trace without them reads as before.
        if request.reasoning_effort is not None:
            traced["reasoning_effort"] = request.reasoning_effort
        if request.thinking_budget is not None:
            traced["thinking_budget"] = request.thinking_budget
        return traced

    def response(self, response: ModelResponse) -> TracedResponse:
        u = response.usage
        traced: TracedResponse = {
            "message": self.message(response.message),
            "finish_reason": response.finish_reason,
            "usage": traced_usage(u),
            "retries": response.retries,
            "from_cache": response.from_cache,
        }
        if response.ttft_s is not None:
            traced["ttft_s"] = response.ttft_s
        if response.message.thinking:  # Anthropic's thinking blocks, as text
            traced["thinking"] = thinking_text(response.message)
        return traced


def thinking_text(message: Message) -> str:
    """The thinking a message holds, its blocks' texts one after another, made valid text."""
    return valid_text("\n\n".join(block.text for block in message.thinking))[0]


def traced_usage(u: Usage) -> TracedUsage:
    """A response's usage as the trace holds it; the reasoning and cache-write shares only
    when the endpoint reported some, so traces of endpoints that report none read as before."""
    traced: TracedUsage = {
        "input": u.input_tokens,
        "output": u.output_tokens,
        "cached": u.cached_tokens,
    }
    if u.reasoning_tokens:
        traced["reasoning"] = u.reasoning_tokens
    if u.cache_write_tokens:
        traced["cache_write"] = u.cache_write_tokens
    return traced
