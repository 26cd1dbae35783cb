"""Model clients: the protocol, the OpenAI-compatible HTTP client, counting and fakes."""

from harness.models.counting import CountingClient
from harness.models.openai_compat import OpenAICompatClient, RetryPolicy
from harness.models.scripted import FunctionModel, ScriptedModel, text_reply, tool_reply
from harness.models.settings import Endpoint, EndpointNotConfigured, resolve_endpoint
from harness.models.types import (
    Message,
    ModelAPIError,
    ModelClient,
    ModelError,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolSpec,
    Usage,
)

__all__ = [
    "CountingClient",
    "Endpoint",
    "EndpointNotConfigured",
    "FunctionModel",
    "Message",
    "ModelAPIError",
    "ModelClient",
    "ModelError",
    "ModelRequest",
    "ModelResponse",
    "OpenAICompatClient",
    "RetryPolicy",
    "ScriptedModel",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "resolve_endpoint",
    "text_reply",
    "tool_reply",
]
