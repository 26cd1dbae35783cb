"""The events of every run: the model's calls (written by the counting client), actions,
answers, and what ended a run early."""

from __future__ import annotations

import json
from typing import Any, Literal

from loopbench.harness.event_models.base import (
    MessageCuts,
    TracedRequest,
    TracedResponse,
    TraceEvent,
    WireMessage,
    cut,
    cut_message,
    question_at,
    rounded_t,
)


class RequestEvent(TraceEvent):
    """A request about to be sent."""

    kind: Literal["request"] = "request"
    call: int
    """The model call's number in the run, from 1; its response or api_error has it too."""
    request: TracedRequest

    @classmethod
    def unchecked(cls, call: int, request: TracedRequest) -> RequestEvent:
        """Made without validation, for the counting client, which built ``request`` itself:
        validating it would copy the whole conversation on every call."""
        fields = {"t": 0.0, "kind": "request", "call": call, "request": request}
        return cls.trusted(fields, {"call", "request"})

    @property
    def question(self) -> str:
        """The text of the request's question (``question_at``); "" when it has none."""
        messages = self.request["messages"]
        at = question_at(messages)
        return "" if at is None else messages[at]["content"] or ""

    def on_disk(self, max_text: int, cuts: MessageCuts | None = None) -> dict[str, Any]:
        request = self.request.copy()
        messages = request["messages"]
        request["messages"] = (
            [cut_message(m, max_text) for m in messages]
            if cuts is None
            else cuts.messages(messages)
        )
        return {"t": rounded_t(self.t), "kind": self.kind, "call": self.call, "request": request}


class ResponseEvent(TraceEvent):
    """A response received (or replayed from the response cache)."""

    kind: Literal["response"] = "response"
    call: int
    """The number of the call it answers."""
    response: TracedResponse

    @classmethod
    def unchecked(cls, call: int, response: TracedResponse) -> ResponseEvent:
        """Made without validation, for the counting client, which built ``response`` itself."""
        fields = {"t": 0.0, "kind": "response", "call": call, "response": response}
        return cls.trusted(fields, {"call", "response"})

    def on_disk(self, max_text: int, cuts: MessageCuts | None = None) -> dict[str, Any]:
        response = self.response.copy()
        message = response["message"]
        response["message"] = (
            cut_message(message, max_text) if cuts is None else cuts.message(message)
        )
        if "thinking" in response:
            response["thinking"] = cut(response["thinking"], max_text)
        return {"t": rounded_t(self.t), "kind": self.kind, "call": self.call, "response": response}


class ApiErrorEvent(TraceEvent):
    """A call the endpoint failed, after any retries."""

    kind: Literal["api_error"] = "api_error"
    call: int
    error: str
    status: int | None
    """The HTTP status, when one came back."""
    retries: int = 0
    """HTTP attempts beyond the first; absent in older traces."""


#: The tool a tool loop takes its final answer through: a call of it is the answer, not a look-up.
FINAL_ANSWER = "final_answer"


class ToolCallEvent(TraceEvent):
    """One action and what it returned: the real result, even when the repeated-action
    guard showed the model its warning instead."""

    kind: Literal["tool_call"] = "tool_call"
    step: int
    tool: str
    arguments: str | dict[str, Any]
    """As the model wrote them: JSON text, or a text action's argument by field."""
    ok: bool
    result: str

    @classmethod
    def unchecked(
        cls, step: int, tool: str, arguments: str | dict[str, Any], ok: bool, result: str
    ) -> ToolCallEvent:
        """Made without validation, for ``Actions``, which has these values from the model's
        call and the tool set's result as they are typed: validating them again cost more
        than writing the event."""
        fields = {"t": 0.0, "kind": "tool_call", "step": step, "tool": tool}
        fields |= {"arguments": arguments, "ok": ok, "result": result}
        return cls.trusted(fields, {"step", "tool", "arguments", "ok", "result"})

    @property
    def args(self) -> dict[str, Any] | str:
        """The arguments as an object when they are one (as JSON text or as written)."""
        if isinstance(self.arguments, dict):
            return self.arguments
        try:
            parsed = json.loads(self.arguments)
        except (ValueError, RecursionError):  # what an endpoint sent: too deep, too long
            return self.arguments.strip()
        return parsed if isinstance(parsed, dict) else self.arguments.strip()

    @property
    def key(self) -> tuple[str, str]:
        """The action as compared for repeats: the tool and its arguments, canonical."""
        return (self.tool, json.dumps(self.args, sort_keys=True, default=str))


class RepeatedActionEvent(TraceEvent):
    """An action already run in this run, run again."""

    kind: Literal["repeated_action"] = "repeated_action"
    step: int
    tool: str
    guarded: bool
    """The guard was on: the model was shown its warning instead of the result."""

    @classmethod
    def unchecked(cls, step: int, tool: str, guarded: bool) -> RepeatedActionEvent:
        """Made without validation, for ``Actions``, which has these values typed (the tool's
        name as the reply was read): validating them cost more than the rest of the event."""
        fields = {"t": 0.0, "kind": "repeated_action", "step": step, "tool": tool}
        fields["guarded"] = guarded
        return cls.trusted(fields, {"step", "tool", "guarded"})


class ParseFailureEvent(TraceEvent):
    """A reply whose action or answer could not be read."""

    kind: Literal["parse_failure"] = "parse_failure"
    step: int
    expected: str | None = None
    """The structured reply asked for (structured output only)."""
    text: str


class FinishEvent(TraceEvent):
    """The final answer, as a tool loop's final_answer call or a text ``finish[...]`` gave it."""

    kind: Literal["finish"] = "finish"
    step: int
    answer: str
    evidence: list[str] | None = None
    """The entries final_answer says it rests on (tool calling only)."""


AnswerRole = Literal["draft", "revision", "attempt", "candidate", "sample"]


class AnswerEvent(TraceEvent):
    """An answer on the way to the final one: reflection's draft and revisions,
    reflexion's attempts, best_of_n's candidates, self_consistency's samples."""

    kind: Literal["answer"] = "answer"
    role: AnswerRole
    answer: str
    accepted: bool | None = None
    """A check's verdict, when there is one; set once the check has judged it."""


class LimitReachedEvent(TraceEvent):
    """A run limit ended the run; what it had done so far."""

    kind: Literal["limit_reached"] = "limit_reached"
    status: str
    """step_budget, token_budget or step_timeout."""
    conversation: list[WireMessage]
    """The conversation as of the last exchange."""
    last_answer: str | None
    """The last answer traced on the way, if any."""

    def on_disk(self, max_text: int, cuts: MessageCuts | None = None) -> dict[str, Any]:
        out = super().on_disk(max_text)
        out["conversation"] = [cut_message(m, max_text) for m in self.conversation]
        return out


class PatternErrorEvent(TraceEvent):
    """The pattern (or the grader) raised: a bug, recorded as pattern_error."""

    kind: Literal["pattern_error"] = "pattern_error"
    error: str


class GradingEvent(TraceEvent):
    """The run's answer graded by a judge that failed (``judge_api_error``,
    ``judge_unreadable``), or graded again by ``grade --regrade`` (``regraded``): the
    pattern's outcome stands either way."""

    kind: Literal["grading"] = "grading"
    status: str
    """The grading status: ``judge_api_error``, ``judge_unreadable``, or ``regraded``."""
    error: str | None = None
    """Why the judge gave no verdict."""
    judge_tokens_in: int = 0
    judge_tokens_out: int = 0
    """What the judge's calls on this answer took, this time."""
