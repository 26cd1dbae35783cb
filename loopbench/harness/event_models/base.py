"""The shape every trace event shares, the wire JSON of the messages requests and responses
hold, how long texts are cut on disk, and which message is a conversation's question."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, Self

from pydantic import BaseModel, ConfigDict, with_config
from typing_extensions import TypedDict

#: The marker ``cut`` leaves where a long text was cut on disk, and its pattern.
CUT = re.compile(r"\[\.\.\. \d+ more characters cut on disk\]$")
#: The most tool calls of one message a trace keeps on disk.
MAX_TOOL_CALLS = 100
#: How a text-action pattern (react_text) gives the model a tool's result: a user message.
OBSERVATION = "Observation:"
#: The wire JSON's dicts, like the events, refuse a key they do not have.
STRICT = ConfigDict(extra="forbid")


def rounded_t(t: float) -> float:
    """``round(t, 6)``, the same float, at a fraction of its cost: ``round`` with digits
    writes and reads a decimal string (with ``snprintf``), the dearest part of writing a
    small event. For |t| below 10**6 the millionths ``t * 1e6`` are within 2**-12 of
    exact, so the nearest whole number of them is the one ``round`` finds, unless ``t``
    lies within that error of halfway (or rounds to zero, whose sign ``round`` keeps):
    then ``round`` itself. The whole number over 1e6 is the float nearest to it, as
    ``round``'s is."""
    if type(t) is float and -1e6 < t < 1e6:
        scaled = t * 1e6
        whole = round(scaled)
        if whole and abs(scaled - whole) < 0.499:
            return whole / 1e6
    return round(t, 6)


def cut(text: str, max_text: int) -> str:
    """``text``, or its first ``max_text`` characters and a marker saying what was cut."""
    # guard: long-text-cut-trace
    if len(text) <= max_text:
        return text
    return f"{text[:max_text]}[... {len(text) - max_text} more characters cut on disk]"


@with_config(STRICT)
class WireFunction(TypedDict):
    name: str
    arguments: str


@with_config(STRICT)
class WireToolCall(TypedDict, total=False):
    """A tool call a message asked for; past ``MAX_TOOL_CALLS`` of them, one marker
    ``{"cut": "N more tool calls"}`` stands for the rest."""

    id: str
    type: str
    function: WireFunction
    cut: str


@with_config(STRICT)
class WireMessage(TypedDict):
    """A message as the chat-completions API writes it (``loopbench.harness.models.wire``)."""

    role: str
    content: str | None
    tool_calls: NotRequired[list[WireToolCall]]
    tool_call_id: NotRequired[str]


@with_config(STRICT)
class TracedRequest(TypedDict):
    """A request as sent, the system text apart and the tools by name."""

    model: str
    system: str
    messages: list[WireMessage]
    tools: list[str]
    tool_choice: NotRequired[str | None]
    temperature: float | None
    top_p: NotRequired[float | None]
    seed: NotRequired[int | None]
    max_output_tokens: int | None
    stop: list[str]
    #: Written only when set (``loopbench.harness.reasoning``).
    reasoning_effort: NotRequired[str]
    thinking_budget: NotRequired[int]


@with_config(STRICT)
class TracedUsage(TypedDict):
    input: int
    output: int
    cached: int
    #: The share of ``output`` spent reasoning; absent when none was reported.
    reasoning: NotRequired[int]
    #: The share of ``input`` written to the prompt cache; absent when none was reported.
    cache_write: NotRequired[int]


@with_config(STRICT)
class TracedResponse(TypedDict):
    message: WireMessage
    finish_reason: str
    usage: TracedUsage
    retries: int
    from_cache: NotRequired[bool]
    #: Seconds from sending to the first token, when the reply was streamed.
    ttft_s: NotRequired[float]
    #: The model's thinking as text, when its reply held thinking blocks (Anthropic's).
    thinking: NotRequired[str]


def question_at(messages: Sequence[Mapping[str, object]]) -> int | None:
    """Which message of a conversation is its question: the last user message that is not
    an observation. What comes before it (a worked example written into the prompt) is not
    the run's own work. None when no message is."""
    for index in range(len(messages) - 1, -1, -1):
        text = messages[index].get("content") or ""
        if messages[index].get("role") == "user" and not str(text).startswith(OBSERVATION):
            return index
    return None


def cut_message(message: WireMessage, max_text: int) -> WireMessage:
    """``message`` with its texts cut to ``max_text`` and its tool calls to
    ``MAX_TOOL_CALLS``; the same dict when nothing is cut (it may be shared)."""
    content, calls = message["content"], message.get("tool_calls")
    # guard: message-texts-cut-disk
    if (content is None or len(content) <= max_text) and (
        not calls or (len(calls) <= MAX_TOOL_CALLS and _calls_fit(calls, max_text))
    ):
        return message  # nothing to cut (as a trace's messages nearly always are): no copy
    # guard: cutting-disk-leaves-live-trace
    out = message.copy()
    if content is not None:
        out["content"] = cut(content, max_text)
    if calls:
        kept: list[WireToolCall] = []
        for call in calls[:MAX_TOOL_CALLS]:
            function = call["function"]
            kept.append(
                {
                    "id": cut(call["id"], max_text),
                    "type": call["type"],
                    "function": {
                        "name": cut(function["name"], max_text),
                        "arguments": cut(function["arguments"], max_text),
                    },
                }
            )
        # guard: message-keeps-at-most-hundred
        if len(calls) > MAX_TOOL_CALLS:
            kept.append({"cut": f"{len(calls) - MAX_TOOL_CALLS} more tool calls"})
        out["tool_calls"] = kept
    return out


class MessageCuts:
    """The messages of one trace as written, each cut once (``cut_message``): every request
    repeats the conversation so far, and shares its messages' dicts, so a request's
    messages but its newest were cut already for the request before it."""

    def __init__(self, max_text: int) -> None:
        self.max_text = max_text
        #: By the message's id: the trace holds every message while it is written.
        self._cut: dict[int, WireMessage] = {}

    def messages(self, messages: list[WireMessage]) -> list[WireMessage]:
        done = self._cut
        return [found if (found := done.get(id(m))) is not None else self._new(m) for m in messages]

    def message(self, message: WireMessage) -> WireMessage:
        found = self._cut.get(id(message))
        return self._new(message) if found is None else found

    def _new(self, message: WireMessage) -> WireMessage:
        out = self._cut[id(message)] = cut_message(message, self.max_text)
        return out


def _calls_fit(calls: list[WireToolCall], max_text: int) -> bool:
    """Whether every tool call's texts are within ``max_text``; False for a call that is not
    one (a marker), which the slow path rebuilds as before."""
    try:
        return all(
            len(call["id"]) <= max_text
            and len(call["function"]["name"]) <= max_text
            and len(call["function"]["arguments"]) <= max_text
            for call in calls
        )
    except (KeyError, TypeError):
        return False


#: How ``trusted`` sets a model's own attributes: ``__dict__`` past pydantic's
#: ``__setattr__``, and BaseModel's slots through their descriptors, found once here rather
#: than looked up by name on every event as ``object.__setattr__`` does.
_set_dict = object.__setattr__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


class TraceEvent(BaseModel):
    """What every event has: when it happened and what it is."""

    # guard: field-known-kind-does-not
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    t: float = 0.0
    """Seconds from the run's start; the trace stamps it when the event is emitted."""
    kind: str

    @classmethod
    def trusted(cls, fields: dict[str, Any], fields_set: set[str] | None = None) -> Self:
        """An event of ``fields`` (every field, ``t`` and ``kind`` too), not validated: what
        ``model_construct`` makes, without its walk over each field's aliases and defaults,
        which costs more than the rest of a model call's tracing. For values our own code
        built; ``t`` and ``kind`` are not among the fields set, which are ``fields_set``
        (a new set) when the caller knows them, else found."""
        event = object.__new__(cls)
        _set_dict(event, "__dict__", fields)
        _set_fields_set(event, fields.keys() - {"t", "kind"} if fields_set is None else fields_set)
        _set_extra(event, None)
        _set_private(event, None)
        return event

    def data(self) -> dict[str, Any]:
        """The fields the emitter set, by name, in order: what ``traces.jsonl`` holds
        besides ``t`` and ``kind``."""
        set_ = self.model_fields_set
        # guard: field-emitter-did-not-set
        data = {k: v for k, v in self.__dict__.items() if k in set_ and k != "t" and k != "kind"}
        return data | self.model_extra if self.model_extra else data

    def on_disk(self, max_text: int, cuts: MessageCuts | None = None) -> dict[str, Any]:
        """The event as ``traces.jsonl`` holds it, every text longer than ``max_text`` cut;
        ``cuts``, when given, has each message of the trace cut once (see ``MessageCuts``)."""
        out: dict[str, Any] = {"t": rounded_t(self.t), "kind": self.kind}
        # ``data()`` in one pass, from the fields themselves rather than through properties.
        set_ = self.__pydantic_fields_set__
        for key, value in self.__dict__.items():
            if key in set_ and key != "t" and key != "kind":
                out[key] = cut(value, max_text) if type(value) is str else value
        if self.__pydantic_extra__:
            for key, value in self.__pydantic_extra__.items():
                out[key] = cut(value, max_text) if type(value) is str else value
        return out


class OtherEvent(TraceEvent):
    """An event of a kind this version does not write, read with all its fields kept."""

    model_config = ConfigDict(extra="allow")
