"""The chat-completions wire format: a request as JSON, and a reply read back strictly.

A reply that is not a chat completion in any way (a field missing or of the wrong
kind, usage that cannot be true) is a ``ModelAPIError`` naming the field, never
another exception.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from loopbench.harness.models.types import (
    FinishReason,
    Message,
    ModelAPIError,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolSpec,
    Usage,
)

if TYPE_CHECKING:
    from loopbench.harness.models.transport import HttpReply

#: Reads a reply's ``usage`` object; a ValueError when it cannot be true.
UsageParser = Callable[[object], Usage]

#: Bytes of an unusable body an error quotes, redacted, before it is cut to 400 characters.
QUOTED = 4000

_FINISH_REASONS: dict[str | None, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
    None: "stop",
}


class SentParts:
    """The wire JSON of each message and tool list a client sends, built once: every
    request of a run repeats its conversation so far, and its tools. The parts are shared
    between bodies, so they are only for sending as they are, never to be changed.

    Found by the object's id, the object kept beside it so that its id is not reused;
    forgotten all at once past ``most`` of them, and a message longer than ``KEPT_TEXT``
    is built each time, so what is kept past its run stays small."""

    KEPT_TEXT = 1 << 16

    def __init__(self, most: int = 4096) -> None:
        self._most = most
        self._parts: dict[int, tuple[object, Any]] = {}

    def message(self, message: Message) -> dict[str, Any]:
        found = self._parts.get(id(message))
        if found is None:
            if len(message.content) > self.KEPT_TEXT:
                return message_to_wire(message)
            found = self._keep(message, message_to_wire(message))
        wire: dict[str, Any] = found[1]
        return wire

    def messages(self, messages: tuple[Message, ...]) -> list[dict[str, Any]]:
        """``messages`` as wire JSON, those built before (all but the newest) looked up here
        rather than through ``message`` one call each."""
        parts = self._parts
        return [
            found[1] if (found := parts.get(id(m))) is not None else self.message(m)
            for m in messages
        ]

    def tools(self, tools: tuple[ToolSpec, ...]) -> list[dict[str, Any]]:
        found = self._parts.get(id(tools))
        if found is None:
            found = self._keep(tools, tools_to_wire(tools))
        wire: list[dict[str, Any]] = found[1]
        return wire

    def _keep(self, part: object, wire: Any) -> tuple[object, Any]:
        if len(self._parts) >= self._most:
            self._parts.clear()
        kept = self._parts[id(part)] = (part, wire)
        return kept


def request_body(request: ModelRequest, parts: SentParts | None = None) -> dict[str, Any]:
    """The request as a chat completion's body; with ``parts``, its messages and tools as
    built for the requests before it (see ``SentParts``), else built anew."""
    messages: list[dict[str, Any]] = (
        [message_to_wire(m) for m in request.messages]
        if parts is None
        else parts.messages(request.messages)
    )
    if request.system:
        messages.insert(0, {"role": "system", "content": request.system})
    body: dict[str, Any] = {"model": request.model, "messages": messages}
    if request.tools:
        body["tools"] = (
            tools_to_wire(request.tools) if parts is None else parts.tools(request.tools)
        )
    if request.tool_choice in ("auto", "none", "required"):
        body["tool_choice"] = request.tool_choice
    elif request.tool_choice is not None:
        body["tool_choice"] = {"type": "function", "function": {"name": request.tool_choice}}
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.top_p is not None:
        body["top_p"] = request.top_p
    if request.seed is not None:
        body["seed"] = request.seed
    # A thinking budget alone is not sent: the chat-completions API has no field for it
    # (Anthropic's client sends it as ``thinking``).
    if request.reasoning_effort is not None:
        body["reasoning_effort"] = request.reasoning_effort
    if request.max_output_tokens is not None:
        body["max_tokens"] = request.max_output_tokens
    if request.stop:
        body["stop"] = list(request.stop)
    return body


def tools_to_wire(tools: tuple[ToolSpec, ...]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
        }
        for t in tools
    ]


def message_to_wire(message: Message) -> dict[str, Any]:
    wire: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        wire["content"] = message.content or None
        wire["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            }
            for c in message.tool_calls
        ]
    if message.tool_call_id is not None:
        wire["tool_call_id"] = message.tool_call_id
    return wire


def parse_response(
    response: HttpReply, retries: int = 0, redact: Callable[[str], str] = str
) -> ModelResponse:
    """A 200 reply as a response; a body that is not a chat completion is a ModelAPIError
    saying what is wrong with it."""
    data: object = None
    try:
        try:
            data = response.json()
        except (ValueError, RecursionError) as exc:
            raise ValueError(f"the body is not JSON: {exc}") from exc
        data = _object(data, "the body")
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices:
            raise ValueError(f"choices is {_kind(choices)}, not a list of at least one choice")
        choice = _object(choices[0], "choices[0]")
        wire = _object(choice.get("message"), "choices[0].message")
        message = Message(
            "assistant",
            _content(wire.get("content")),
            tool_calls=_tool_calls(wire.get("tool_calls")),
        )
        finish = choice.get("finish_reason")
        if finish is not None and not isinstance(finish, str):
            raise ValueError(f"choices[0].finish_reason is {_kind(finish)}, not text")
        usage = parse_usage(data.get("usage"))
    except ValueError as exc:
        # Redacted before it is cut short, so no part of a key survives at the cut.
        body = response.opening(QUOTED)
        text = redact(f"the endpoint's reply is not a chat completion ({exc}): {body}")
        raise ModelAPIError(text[:400], response.status, retries, usage=reported(data)) from exc
    return ModelResponse(
        message=message,
        finish_reason=_FINISH_REASONS.get(finish, "other"),
        usage=usage,
        retries=retries,
    )


def reported_usage(body: bytes, parse: UsageParser | None = None) -> Usage:
    """The usage a reply's body reports, read by ``parse`` (a wire's own; chat completions'
    by default), if it is JSON reporting one that can be true (the reply built from a stream
    cut short); else none."""
    try:
        return reported(json.loads(body), parse)
    except (ValueError, RecursionError):
        return Usage()


def reported(data: object, parse: UsageParser | None = None) -> Usage:
    """The usage an unusable reply still reported, when it reported one that can be true."""
    if not isinstance(data, dict) or not data.get("usage"):
        return Usage()
    try:
        usage = (parse or parse_usage)(data["usage"])
    except ValueError:
        return Usage()
    return Usage() if usage.missing else usage


def parse_usage(usage: object) -> Usage:
    """The reply's token counts; a reply without input or output tokens is counted as
    missing, never as zero (only the shares of them may go unsaid, meaning none).

    The shares: cache reads (``prompt_tokens_details.cached_tokens``), cache writes
    (``prompt_tokens_details.cache_write_tokens`` or ``cache_creation_tokens``, or the
    ``cache_creation_input_tokens`` LiteLLM reports beside the others for Anthropic) of the
    input, and reasoning (``completion_tokens_details.reasoning_tokens``) of the output.
    Counts that cannot be true (negative, not whole numbers, a share larger than its
    total) make the reply unusable: a ValueError, reported as a response error. A whole
    number written as a float (``10.0``) is that number.
    """
    if usage is None or usage == {}:
        # guard: missing-usage-not-zero
        return Usage(missing=1)
    if (  # input and output alone (vLLM, llama.cpp): read at once, as below they read the same
        type(usage) is dict
        and type(prompt := usage.get("prompt_tokens")) is int
        and type(completion := usage.get("completion_tokens")) is int
        and prompt >= 0
        and completion >= 0
        and not usage.get("prompt_tokens_details")
        and not usage.get("completion_tokens_details")
        and usage.get("cache_creation_input_tokens") is None
    ):
        return Usage(prompt, completion)
    usage = _object(usage, "usage")
    details = _object(usage.get("prompt_tokens_details") or {}, "usage.prompt_tokens_details")
    out_details = _object(
        usage.get("completion_tokens_details") or {}, "usage.completion_tokens_details"
    )
    prompt = _count("prompt_tokens", usage.get("prompt_tokens"))
    completion = _count("completion_tokens", usage.get("completion_tokens"))
    cached = _count("cached_tokens", details.get("cached_tokens")) or 0
    written = _cache_writes(usage, details)
    reasoning = _count("reasoning_tokens", out_details.get("reasoning_tokens")) or 0
    # guard: partial-usage-unknown-not-zero
    if prompt is None or completion is None:
        return Usage(missing=1)
    if cached > prompt:
        raise ValueError(f"usage reports {cached} cached of {prompt} input tokens")
    # guard: cache-writes-within-input
    if written > prompt - cached:
        raise ValueError(
            f"usage reports {written} cache_write and {cached} cached of {prompt} input tokens"
        )
    # guard: reasoning-within-output
    if reasoning > completion:
        raise ValueError(f"usage reports {reasoning} reasoning of {completion} output tokens")
    return Usage(prompt, completion, cached, reasoning_tokens=reasoning, cache_write_tokens=written)


#: Where servers report the input tokens written to a prompt cache, in the order read.
_CACHE_WRITES = ("cache_write_tokens", "cache_creation_tokens")


def _cache_writes(usage: dict[str, Any], details: dict[str, Any]) -> int:
    """The input tokens written to the cache, from the first place that says (0 if none)."""
    for name in _CACHE_WRITES:
        count = _count(name, details.get(name))
        if count is not None:
            return count
    return _count("cache_creation_input_tokens", usage.get("cache_creation_input_tokens")) or 0


def _count(name: str, value: object) -> int | None:
    """A token count: None if it is not given, else a whole number >= 0 or a ValueError."""
    if type(value) is int and value >= 0:  # as nearly every reply gives it
        return value
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"usage {name} is {value!r}, not a whole number of tokens >= 0")
    return value


def _content(content: object) -> str:
    """The message's text: a string, or the text parts of a list of parts, joined."""
    if content is None or isinstance(content, str):
        return content or ""
    if not isinstance(content, list):
        raise ValueError(f"message.content is {_kind(content)}, not text or a list of parts")
    texts = []
    for i, part in enumerate(content):
        part = _object(part, f"message.content[{i}]")
        if part.get("type") != "text":  # a refusal or an image is not text
            continue
        text = part.get("text")
        if not isinstance(text, str):
            raise ValueError(f"message.content[{i}].text is {_kind(text)}, not text")
        texts.append(text)
    return "".join(texts)


def _tool_calls(calls: object) -> tuple[ToolCall, ...]:
    if calls is None:
        return ()
    if not isinstance(calls, list):
        raise ValueError(f"message.tool_calls is {_kind(calls)}, not a list")
    parsed = []
    for i, call in enumerate(calls):
        where = f"message.tool_calls[{i}]"
        call = _object(call, where)
        function = _object(call.get("function"), f"{where}.function")
        name, call_id = function.get("name"), call.get("id")
        if not isinstance(name, str) or not name:
            raise ValueError(f"{where}.function.name is {_kind(name)}, not a tool's name")
        if call_id is not None and not isinstance(call_id, str):
            raise ValueError(f"{where}.id is {_kind(call_id)}, not text")
        arguments = function.get("arguments")
        # Some servers send arguments as an object rather than the JSON text the API specifies.
        if isinstance(arguments, dict):
            arguments = json.dumps(arguments)
        elif arguments is None:
            arguments = "{}"
        elif not isinstance(arguments, str):
            raise ValueError(f"{where}.function.arguments is {_kind(arguments)}, not JSON text")
        parsed.append(ToolCall(call_id or f"call_{i}", name, arguments))
    return tuple(parsed)


def _object(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{where} is {_kind(value)}, not an object")
    return value


def _kind(value: object) -> str:
    """A JSON value's kind, for an error message."""
    if value is None:
        return "missing or null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the text {value[:40]!r}"
    if isinstance(value, list):
        return f"a list of {len(value)}" if value else "an empty list"
    return "an object"
