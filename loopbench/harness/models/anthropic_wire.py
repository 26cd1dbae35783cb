"""Anthropic's Messages API wire format: a request as JSON, and a reply read back strictly.

A request is ``POST {base}/v1/messages``: the system text apart, the conversation as user
and assistant turns (a tool's result is a ``tool_result`` block of a user turn, results
in a row one turn; a tool call is a ``tool_use`` block of the assistant's, its input the
parsed arguments), tools as ``{name, description, input_schema}``. ``max_tokens`` is
required there: a request that sets none asks for ``DEFAULT_MAX_TOKENS``.

Reasoning is extended thinking: ``thinking_budget``, or ``reasoning_effort`` through
``THINKING_BUDGETS`` (``none``: no thinking), is sent as ``thinking: {type: "enabled",
budget_tokens: N}``, and ``max_tokens`` becomes the budget plus the output limit (it must
exceed the budget). With thinking on, Anthropic refuses a temperature, a ``top_p`` and a
forced tool choice: the first two are not sent then, and a request that forces a tool (a
pattern's structured output) is sent without thinking. A seed is never sent (the API has
none).

A reply that is not a message in any way (a field missing or of the wrong kind, usage
that cannot be true) is a ``ModelAPIError`` naming the field. ``parse_message`` reads the
reply's JSON alone, so a streamed reply accumulated into the same JSON reads the same way.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from loopbench.harness.models.transport import HttpReply
from loopbench.harness.models.types import (
    FinishReason,
    Message,
    ModelAPIError,
    ModelRequest,
    ModelResponse,
    ThinkingBlock,
    ToolCall,
    Usage,
)
from loopbench.harness.models.wire import QUOTED, _count, _kind, _object, reported

ANTHROPIC_VERSION = "2023-06-01"
#: ``max_tokens`` of a request that sets no output limit (the API requires one).
DEFAULT_MAX_TOKENS = 4096
#: The thinking budget each reasoning effort asks for, in tokens; ``none`` is no thinking.
THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 24576}
#: How a model may be written to choose this API (``anthropic/claude-...``); not sent.
MODEL_PREFIX = "anthropic/"

_STOP_REASONS: dict[str | None, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
    None: "stop",
}
_TOOL_CHOICES = {"auto": {"type": "auto"}, "required": {"type": "any"}, "none": {"type": "none"}}


def thinking_budget(request: ModelRequest) -> int | None:
    """The thinking budget a request asks for, in tokens; None for no thinking."""
    if request.thinking_budget is not None:
        return request.thinking_budget
    if request.reasoning_effort is None or request.reasoning_effort == "none":
        return None
    return THINKING_BUDGETS[request.reasoning_effort]


def request_body(request: ModelRequest) -> dict[str, Any]:
    forced = request.tool_choice not in (None, "auto", "none")
    # guard: anthropic-forced-tool-no-thinking
    budget = None if forced else thinking_budget(request)
    output = request.max_output_tokens or DEFAULT_MAX_TOKENS
    system = "\n\n".join(
        [request.system] * bool(request.system)
        + [m.content for m in request.messages if m.role == "system"]
    )
    body: dict[str, Any] = {
        "model": request.model.removeprefix(MODEL_PREFIX),
        "max_tokens": output if budget is None else budget + output,
        "messages": messages_to_wire(request.messages),
    }
    if system:
        body["system"] = system
    if request.tools:
        body["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in request.tools
        ]
    if request.tool_choice is not None:
        named = {"type": "tool", "name": request.tool_choice}
        body["tool_choice"] = _TOOL_CHOICES.get(request.tool_choice, named)
    if budget is not None:
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
    else:  # with thinking on, the API refuses both
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.top_p is not None:
            body["top_p"] = request.top_p
    if request.stop:
        body["stop_sequences"] = list(request.stop)
    return body


def messages_to_wire(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    """The conversation as alternating turns: a tool's result, and whatever user text
    follows it, joins the user turn before it (one turn holds every result of a step)."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue  # sent as the system text
        turn = _turn(message)
        if turns and turn["role"] == "user" == turns[-1]["role"]:
            turns[-1]["content"] = _blocks(turns[-1]["content"]) + _blocks(turn["content"])
        else:
            turns.append(turn)
    return turns


def _turn(message: Message) -> dict[str, Any]:
    if message.role == "tool":
        result = {
            "type": "tool_result",
            "tool_use_id": message.tool_call_id or "",
            "content": message.content,
        }
        return {"role": "user", "content": [result]}
    if message.role != "assistant" or not (message.tool_calls or message.thinking):
        return {"role": message.role, "content": message.content}
    # Thinking first, as it came: the API checks it unchanged within a tool loop.
    # guard: anthropic-thinking-sent-back
    blocks: list[dict[str, Any]] = [json.loads(b.json) for b in message.thinking]
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": _input(call)})
    return {"role": "assistant", "content": blocks}


def _blocks(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(content, list):
        return content
    return [{"type": "text", "text": content}] if content else []


def _input(call: ToolCall) -> dict[str, Any]:
    """A call's arguments as the object ``tool_use`` holds (the model's own were one)."""
    try:
        parsed = json.loads(call.arguments)
    except ValueError:
        return {"arguments": call.arguments}
    return parsed if isinstance(parsed, dict) else {"arguments": parsed}


def parse_response(
    response: HttpReply, retries: int = 0, redact: Callable[[str], str] = str
) -> ModelResponse:
    """A 200 reply as a response; a body that is not a message is a ModelAPIError saying
    what is wrong with it."""
    data: object = None
    try:
        try:
            data = response.json()
        except (ValueError, RecursionError) as exc:
            raise ValueError(f"the body is not JSON: {exc}") from exc
        parsed = parse_message(data)
    except ValueError as exc:
        # Redacted before it is cut short, so no part of a key survives at the cut.
        body = response.opening(QUOTED)
        text = redact(f"the endpoint's reply is not a Messages API message ({exc}): {body}")
        raise ModelAPIError(
            text[:400], response.status, retries, usage=reported(data, parse_usage)
        ) from exc
    return ModelResponse(parsed.message, parsed.finish_reason, parsed.usage, retries=retries)


def parse_message(data: object) -> ModelResponse:
    """A message's JSON (``{"content": [...], "stop_reason": ..., "usage": {...}}``) as a
    response; a ValueError naming the field that is wrong."""
    data = _object(data, "the body")
    content = data.get("content")
    if not isinstance(content, list):
        raise ValueError(f"content is {_kind(content)}, not a list of blocks")
    texts: list[str] = []
    calls: list[ToolCall] = []
    thinking: list[ThinkingBlock] = []
    for i, block in enumerate(content):
        where = f"content[{i}]"
        block = _object(block, where)
        kind = block.get("type")
        if kind == "text":
            texts.append(_text(block, "text", where))
        elif kind == "tool_use":
            calls.append(_tool_use(block, where))
        elif kind in ("thinking", "redacted_thinking"):
            _text(block, "thinking" if kind == "thinking" else "data", where)
            thinking.append(ThinkingBlock(json.dumps(block)))
        elif not isinstance(kind, str):
            raise ValueError(f"{where}.type is {_kind(kind)}, not text")
    stop = data.get("stop_reason")
    if stop is not None and not isinstance(stop, str):
        raise ValueError(f"stop_reason is {_kind(stop)}, not text")
    message = Message("assistant", "".join(texts), tuple(calls), thinking=tuple(thinking))
    finish = _STOP_REASONS.get(stop, "other")
    return ModelResponse(message, finish, parse_usage(data.get("usage")))


def _text(block: dict[str, Any], field: str, where: str) -> str:
    value = block.get(field)
    if not isinstance(value, str):
        raise ValueError(f"{where}.{field} is {_kind(value)}, not text")
    return value


def _tool_use(block: dict[str, Any], where: str) -> ToolCall:
    name, call_id, given = block.get("name"), block.get("id"), block.get("input")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where}.name is {_kind(name)}, not a tool's name")
    if not isinstance(call_id, str) or not call_id:
        raise ValueError(f"{where}.id is {_kind(call_id)}, not a tool call's id")
    if not isinstance(given, dict):
        raise ValueError(f"{where}.input is {_kind(given)}, not an object")
    return ToolCall(call_id, name, json.dumps(given))


def parse_usage(usage: object) -> Usage:
    """Usage in our convention: ``input_tokens`` every input token, the cache reads and
    writes Anthropic reports apart included. Missing: unknown, not zero. A count that
    cannot be true is a ValueError."""
    if usage is None or usage == {}:
        return Usage(missing=1)
    usage = _object(usage, "usage")
    fresh = _count("input_tokens", usage.get("input_tokens"))
    output = _count("output_tokens", usage.get("output_tokens"))
    read = _count("cache_read_input_tokens", usage.get("cache_read_input_tokens")) or 0
    written = _count("cache_creation_input_tokens", usage.get("cache_creation_input_tokens"))
    if fresh is None or output is None:
        return Usage(missing=1)
    written = written or 0
    # guard: anthropic-input-counts-cache-tokens
    return Usage(fresh + read + written, output, cached_tokens=read, cache_write_tokens=written)


def error_text(reply: HttpReply, redact: Callable[[str], str]) -> str:
    """What an error reply says: its ``error``'s type and message when it is the API's
    error object, else the opening of its body; redacted, then cut short."""
    try:
        data = reply.json()
        error = data["error"] if isinstance(data, dict) else None
        said = f"{error['type']}: {error['message']}" if isinstance(error, dict) else None
    except (ValueError, RecursionError, KeyError, TypeError):
        said = None
    return redact(said if isinstance(said, str) else reply.opening(QUOTED))[:300]
