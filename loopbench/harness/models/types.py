"""The model-facing vocabulary: messages, requests, responses, usage and errors.

Plain frozen dataclasses rather than pydantic models: they sit on the hot path of
every model call, and they are built by our own code, so validation would only
cost time. Records written to disk are pydantic (see ``loopbench.harness.results.records``).

Errors (the family is ``loopbench.harness.errors.ModelError``, importable from here as well)::

    ModelError                 anything that stopped a model call from answering
    └── ModelAPIError          the endpoint failed: HTTP status, transport error,
                               or a body that is not a chat completion
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from loopbench.harness.errors import (
    ModelError as ModelError,  # its family's home; kept importable here
)
from loopbench.harness.quick_init import quick_init

Role = Literal["system", "user", "assistant", "tool"]


@quick_init
@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call the model asked for; ``arguments`` is the raw JSON text it wrote."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ThinkingBlock:
    """A block of a model's thinking as its provider gave it: Anthropic's ``thinking`` or
    ``redacted_thinking`` block, signature included, as JSON text. Within a tool loop it is
    sent back unchanged, as that API requires; the chat-completions wire leaves it out."""

    json: str

    @property
    def text(self) -> str:
        """The thinking it holds as text (a redacted block holds none that can be read)."""
        try:
            block = json.loads(self.json)
        except ValueError:
            return ""
        text = block.get("thinking") if isinstance(block, dict) else None
        return text if isinstance(text, str) else ""


@quick_init
@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    #: An assistant message's thinking blocks, in the order given (Anthropic's).
    thinking: tuple[ThinkingBlock, ...] = ()


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as offered to the model: name, description, JSON schema of arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


@quick_init
@dataclass(frozen=True, slots=True)
class ModelRequest:
    model: str
    messages: tuple[Message, ...]
    system: str = ""
    tools: tuple[ToolSpec, ...] = ()
    #: Sampling settings; None is not sent (the run's setting, else the endpoint's default).
    temperature: float | None = None
    max_output_tokens: int | None = None
    stop: tuple[str, ...] = ()
    #: None (the server's default), "auto", "none", "required", or the name of one tool.
    tool_choice: str | None = None
    top_p: float | None = None
    seed: int | None = None
    #: Reasoning settings (``loopbench.harness.reasoning``); None is not sent. An OpenAI-style
    #: endpoint gets ``reasoning_effort``, Anthropic's a ``thinking`` budget.
    reasoning_effort: ReasoningEffort | None = None
    thinking_budget: int | None = None


ReasoningEffort = Literal["none", "minimal", "low", "medium", "high"]


@quick_init
@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens as the endpoint billed them.

    ``input_tokens`` is every input token, as OpenAI counts them: the cache reads
    (``cached_tokens``) and the cache writes (``cache_write_tokens``) are shares of it,
    whatever the provider reports apart. ``output_tokens`` is every output token, the
    reasoning inside it (``reasoning_tokens``) included.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    #: Responses that reported no usage: their tokens are unknown, not zero.
    missing: int = 0
    #: Responses that reported no usage and whose tokens were estimated (--count-tokens).
    estimated: int = 0
    #: The share of ``output_tokens`` the model spent reasoning, where the endpoint says.
    reasoning_tokens: int = 0
    #: The share of ``input_tokens`` written to the provider's prompt cache (Anthropic's
    #: ``cache_creation_input_tokens``), priced at its own rate.
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_tokens + other.cached_tokens,
            self.missing + other.missing,
            self.estimated + other.estimated,
            self.reasoning_tokens + other.reasoning_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )


FinishReason = Literal["stop", "length", "tool_calls", "content_filter", "other"]


@quick_init
@dataclass(frozen=True, slots=True)
class ModelResponse:
    message: Message
    finish_reason: FinishReason = "stop"
    usage: Usage = field(default_factory=Usage)
    #: HTTP attempts beyond the first that this response took (retries).
    retries: int = 0
    #: Replayed from loopbench's response cache: no request was sent for it.
    from_cache: bool = False
    #: Seconds from sending the request to the first token of a streamed reply; None when
    #: the reply was not streamed.
    ttft_s: float | None = None
    #: Answered within a batch (``--batch``), so priced at the batch rate.
    batched: bool = False

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"


class ModelAPIError(ModelError):
    """The endpoint failed after any retries; ``status`` is the HTTP status if one came back.

    ``usage`` is what the endpoint reported for replies it sent that could not be used (a
    reply with no choices, say): billed all the same, so counted all the same.
    """

    def __init__(
        self, message: str, status: int | None = None, retries: int = 0, usage: Usage | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retries = retries
        self.usage = usage if usage is not None else Usage()


class ModelClient(Protocol):
    """Anything that answers a chat request. A pattern's only handle on a model."""

    async def complete(self, request: ModelRequest) -> ModelResponse: ...
