"""The pattern contract: ``name``, typed options, and ``async run(ctx) -> Outcome``.

A pattern's only contact with the world is ``ctx.model`` (already counted) and
``ctx.tools``. It knows nothing of scheduling, records or printing, and it never
totals usage: the counting client does that, on every path (seed 001).

Every pattern takes the same run limits (``max_steps``, ``max_tokens``,
``step_timeout_s``, ``max_output_tokens``) and they are enforced in one place, the
limits wrapper (``loopbench.harness.patterns.limits``): no pattern can exceed them, whatever
its shape. A pattern that must still make calls after a phase (a critique, a final
answer) reserves them itself by giving that phase fewer calls (``calls_left``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator

from loopbench.graders.base import AnswerCheck
from loopbench.graders.code_check import CodeCheck
from loopbench.harness.events import AnswerEvent, AnswerRole, Event, ParseFailureEvent
from loopbench.harness.models.counting import CountedClient
from loopbench.harness.models.types import Message, ModelResponse
from loopbench.harness.patterns.history import FULL, checked
from loopbench.harness.reasoning import BudgetOption, EffortOption
from loopbench.harness.results.statuses import Status
from loopbench.harness.tools import ToolChoices, ToolSet
from loopbench.harness.trace import Trace


class PatternOptions(BaseModel):
    """Options given on an arm, e.g. ``react_text:guard=on``. Unknown keys are refused.

    The run limits below apply to every pattern, for the whole run.
    """

    model_config = ConfigDict(
        extra="forbid", frozen=True, use_attribute_docstrings=True, allow_inf_nan=False
    )

    max_steps: int = Field(default=8, ge=0)
    """Ceiling on model calls in the whole run; reaching it is the status step_budget."""
    max_tokens: int = Field(default=20_000, ge=0)
    """Ceiling on input plus output tokens in the whole run; reaching it is token_budget.
    A call whose response reported no usage counts by estimate."""
    step_timeout_s: float = Field(default=0, ge=0)
    """Wall-clock limit on one model call, 0 for none; exceeding it is step_timeout. A
    call's wait for a request slot in loopbench's own queue does not count."""
    max_output_tokens: int | None = Field(default=None, ge=1)
    """Completion limit on every model call; unset, each call keeps the pattern's own."""
    reasoning_effort: EffortOption = None
    """Reasoning effort sent on every model call that sets none of its own (none, minimal,
    low, medium, high); unset, the run's (--reasoning-effort), else none is sent."""
    thinking_budget: BudgetOption = None
    """Thinking budget in tokens (at least 1024) sent likewise; an Anthropic endpoint
    thinks this long, an OpenAI-style one is not sent it (docs/reasoning.md)."""

    #: The pattern calls the task set's tools (a record's ``tools_offered``).
    takes_tools: ClassVar[bool] = False

    def tool_options(self) -> ToolChoices:
        """The options these give the task set's tools, by tool name; none by default."""
        return {}


class ToolLoopOptions(PatternOptions):
    """Options every tool-using pattern takes besides the run limits: the ablation axes."""

    takes_tools: ClassVar[bool] = True

    guard: bool = False
    """Repeated-action guard: a repeated call (failed ones too) gets 'you have been round
    this loop' instead of its result."""
    tool: Literal["plain", "improved"] = "plain"
    """The lookup tool's option variant, when the task set offers the lookup."""
    history: str = FULL
    """What each request re-sends of the earlier steps: full (every step), or window:N
    (the last N steps in full, each older one as one line: its action and result, cut)."""

    @field_validator("history")
    @classmethod
    def _history(cls, value: str) -> str:
        return checked(value)

    def tool_options(self) -> ToolChoices:
        return {"lookup": {"variant": self.tool}}


@dataclass
class RunContext:
    question: str
    model: CountedClient
    model_name: str
    tools: ToolSet
    trace: Trace = field(default_factory=Trace)
    #: Set on coding tasks: the answer is code, and this runs its checks.
    code: CodeCheck | None = None
    #: The arm's prompt overrides, by slot (``loopbench.harness.patterns.prompts``); none by
    #: default.
    prompts: Mapping[str, str] = field(default_factory=dict)
    #: The grader's reading of an answer (``Grader.canonical``): what votes compare. Unset,
    #: answers are compared as their normalised final answer.
    canonical: Callable[[str], str] | None = None
    #: A check of an answer that needs nothing hidden from the model (Game of 24's), set
    #: when the task set's grader offers one (``Grader.answer_check``).
    answer_check: AnswerCheck | None = None

    def emit(self, event: Event) -> None:
        """Add ``event`` to the run's trace (``loopbench.harness.events`` holds every kind)."""
        self.trace.emit(event)

    def answer_given(
        self, role: AnswerRole, answer: str, accepted: bool | None = None
    ) -> AnswerEvent:
        """Trace an answer the pattern produced on its way (a draft, an attempt, a candidate);
        a check that judges it later sets its ``accepted``.

        The runner grades every one of them, so a record can say whether the first answer
        was right and how well a check told right from wrong.
        """
        return self.trace.answer(role, answer, accepted)

    def calls_left(self, options: PatternOptions) -> int:
        """Model calls this run may still make under ``max_steps``."""
        return options.max_steps - self.model.calls


@dataclass
class Outcome:
    status: Status
    answer: str | None = None
    #: The conversation the pattern was given, extended with what it produced.
    messages: list[Message] = field(default_factory=list)
    steps: int = 0
    error: str | None = None
    #: What this pattern measures of itself: agreement, candidates drawn, nodes expanded...
    metrics: dict[str, float] = field(default_factory=dict)
    #: The final reply whole, as the model wrote it, when the answer was read from one
    #: (what a grader reading replies grades: ``Grader.reads_reply``).
    reply: str | None = None


@dataclass(frozen=True)
class CallFloor:
    """The fewest model calls a pattern's options can work with, and why."""

    calls: int
    why: str


class Pattern(Protocol):
    @property
    def name(self) -> str: ...

    def call_floor(self) -> CallFloor:
        """A ``max_steps`` below this is refused before any request."""
        ...

    async def run(self, ctx: RunContext) -> Outcome: ...


# guard: reflexion-one-call-patterns-refusal
ONE_CALL = CallFloor(1, "at least one model call")
#: Why an option needing the task set's answer check is refused on a set without one.
NO_ANSWER_CHECK = (
    "{option} needs a task set whose grader offers an answer check (game24's does); this "
    "set's grader offers none"
)


def stripped(text: str) -> str | None:
    """The reply's text as the answer, None when there is none."""
    return text.strip() or None


def answer_reply(
    ctx: RunContext,
    response: ModelResponse,
    messages: list[Message],
    metrics: dict[str, float] | None = None,
    extract: Callable[[str], str | None] = stripped,
) -> Outcome:
    """A reply meant as the final answer, as an outcome (the one helper every pattern turns
    its last reply into an answer with): a truncated one is not acted on, and one that
    ``extract`` finds no answer in (an empty one, by default) is ``unparsed``, never an
    empty answer."""
    steps = ctx.model.calls
    # guard: truncation-final-answers-rewoo
    if response.truncated:
        error = f"call {steps} hit the output-token limit; its half-written answer is not graded"
        return Outcome(
            "truncated", messages=messages, steps=steps, error=error, metrics=metrics or {}
        )
    answer = extract(response.message.content)
    # guard: empty-reply-not-answer
    if not answer:
        ctx.emit(ParseFailureEvent(step=steps, text=response.message.content))
        return Outcome("unparsed", messages=messages, steps=steps, metrics=metrics or {})
    reply = response.message.content
    return Outcome("answered", answer, messages, steps, metrics=metrics or {}, reply=reply)
