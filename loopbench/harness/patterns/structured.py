"""Typed structured outputs (seed 004): a pydantic model in, a validated instance out.

Two output modes, an arm option on every pattern that uses them:

- ``tool``: the schema is offered as the only tool and the model is asked to call it
  (``tool_choice``); its arguments are validated against the model.
- ``json``: for endpoints without tool calling; the schema goes into the prompt, after
  the request for JSON (``JSON_REPLY_SLOT``), and the first JSON object in the reply is
  validated.

Never magic stop phrases: a reply that does not validate is a recorded
``parse_failure`` and the caller decides what that means for the run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from loopbench.harness.events import ParseFailureEvent
from loopbench.harness.models.types import Message, ModelRequest, ModelResponse
from loopbench.harness.patterns.base import RunContext
from loopbench.harness.patterns.prompts import Slot
from loopbench.harness.results.statuses import Status
from loopbench.harness.tools import Tool

OutputMode = Literal["tool", "json"]
T = TypeVar("T", bound=BaseModel)
JSON_REPLY = "Reply with only a JSON object matching this JSON schema:"
JSON_REPLY_SLOT = Slot(
    "json_reply", JSON_REPLY, about="output=json: the request for JSON, followed by the schema"
)


@dataclass(frozen=True)
class Structured(Generic[T]):
    value: T | None
    response: ModelResponse | None = None
    #: Why there is no value: truncated or unparsed (an endpoint failure ends the run).
    failure: Status | None = None
    error: str | None = None


def schema_tool(name: str, description: str, schema: type[BaseModel]) -> Tool:
    return Tool(name, description, schema, lambda _: "recorded")


@dataclass(frozen=True)
class Form(Generic[T]):
    """What a structured reply must be: its schema, and the tool it is asked for as."""

    schema: type[T]
    name: str
    description: str


@dataclass(frozen=True)
class Prompt:
    """What a structured call sends besides its form."""

    system: str
    messages: tuple[Message, ...]
    temperature: float | None = None
    max_output_tokens: int = 600
    json_reply: str = JSON_REPLY
    """In ``json`` mode, what asks for a JSON object, after the system text and before the
    schema."""


async def ask_structured(
    ctx: RunContext, form: Form[T], prompt: Prompt, mode: OutputMode, step: int
) -> Structured[T]:
    """One call asking for ``form``: as a forced tool call (``mode`` tool) or as JSON text;
    the reply parsed, or the status that says why there is no value."""
    schema, name, description = form.schema, form.name, form.description
    system, messages = prompt.system, prompt.messages
    temperature, max_output_tokens = prompt.temperature, prompt.max_output_tokens
    tool = schema_tool(name, description, schema)
    if mode == "tool":
        request = ModelRequest(
            ctx.model_name,
            messages,
            system=system,
            tools=(tool.spec,),
            tool_choice=name,
            temperature=temperature,
            max_output_tokens=max_output_tokens,
        )
    else:
        shape = json.dumps(tool.spec.parameters)
        request = ModelRequest(
            ctx.model_name,
            messages,
            system=f"{system}\n{prompt.json_reply} {shape}",
            temperature=temperature,
            max_output_tokens=max_output_tokens,
        )
    response = await ctx.model.complete(request)
    # guard: truncation-structured-outputs
    if response.truncated:
        return Structured(None, response, failure="truncated")
    value = parse_structured(response, schema, name)
    if value is None:
        ctx.emit(ParseFailureEvent(step=step, expected=name, text=response.message.content))
        return Structured(None, response, failure="unparsed")
    return Structured(value, response)


def parse_structured(response: ModelResponse, schema: type[T], name: str) -> T | None:
    """The named tool call's arguments, else the first JSON object in the text, validated."""
    candidates = [c.arguments for c in response.message.tool_calls if c.name == name]
    text = response.message.content
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            return schema.model_validate_json(candidate)
        except ValidationError:
            continue
    return None
