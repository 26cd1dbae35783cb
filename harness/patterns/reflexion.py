"""reflexion:check=evidence,attempts=N (seeds 003 and 004): retry only on an external check.

Answer with the tool loop, then run a check that does not ask the model: the
evidence check (every number used comes from an observation). Only when it fails
is the model shown the check's specific failure and asked again, in the same
conversation. Each attempt's answer is traced with the check's verdict, so the
record can say whether the answer went wrong-to-right or right-to-wrong
(``first_correct`` beside ``correct``) and how often the check accepted a wrong one.

``max_steps`` holds the whole run, every attempt included; ``attempt_steps`` caps
one attempt's tool loop. When the calls left cannot hold another attempt, or a retry
ends without an answer, the last answer stands. ``check=tests`` is for task sets that
carry test suites (the coding tasks); it is refused on a task set without them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from harness.models.types import Message
from harness.patterns.base import ONE_CALL, CallFloor, Outcome, RunContext, ToolLoopOptions
from harness.patterns.evidence import check_evidence
from harness.patterns.react import react_system
from harness.patterns.registry import register
from harness.patterns.tool_loop import tool_loop


class ReflexionOptions(ToolLoopOptions):
    max_steps: int = Field(default=16, ge=0)
    """Ceiling on model calls in the whole run, every attempt included."""
    check: Literal["evidence", "tests"] = "evidence"
    """The external check: evidence grounding, or the task's test suite."""
    attempts: int = Field(default=2, ge=1)
    """Answers allowed in all, the first included."""
    attempt_steps: int = Field(default=8, ge=1)
    """Model calls one attempt's tool loop may use."""


@dataclass(frozen=True)
class Reflexion:
    options: ReflexionOptions
    name: str = "reflexion"

    def call_floor(self) -> CallFloor:
        return ONE_CALL

    async def run(self, ctx: RunContext) -> Outcome:
        opts = self.options
        messages = [Message("user", ctx.question)]
        if opts.check == "tests":
            return Outcome(
                "refused",
                messages=messages,
                error="check=tests needs a task set with test suites; use check=evidence here",
            )
        answered: Outcome | None = None
        for attempt in range(1, opts.attempts + 1):
            budget = min(opts.attempt_steps, ctx.calls_left(opts))
            if budget < 1 and answered is not None:
                break  # no calls left for another attempt: the last answer stands
            started = len(ctx.trace.events)
            outcome = await tool_loop(
                ctx,
                opts,
                messages,
                react_system(False),
                ctx.tools,
                max_steps=budget,
                first_step=ctx.model.calls,
            )
            if outcome.status != "answered" or outcome.answer is None:
                if answered is None:
                    return outcome
                # A retry that did not finish takes nothing away: the last answer stands.
                ctx.emit("attempt_unfinished", attempt=attempt, status=outcome.status)
                break
            failure = check_evidence(ctx.question, ctx.trace, outcome.answer, since=started)
            ctx.answer_given("attempt", outcome.answer, accepted=failure is None)
            ctx.emit("check", attempt=attempt, failure=failure)
            outcome.metrics = {"attempts": attempt, "check_passed": float(failure is None)}
            answered = outcome
            if failure is None:
                break
            if attempt < opts.attempts:
                messages.append(
                    Message(
                        "user",
                        f"A check of your answer failed: {failure}. "
                        "Look again and give a corrected answer.",
                    )
                )
        assert answered is not None  # the first attempt always runs (max_steps >= 1)
        answered.steps = ctx.model.calls
        return answered


@register(
    "reflexion",
    ReflexionOptions,
    "tool loop, external check, retry with the check's failure; up to max_steps calls in all",
)
def reflexion(options: ReflexionOptions) -> Reflexion:
    return Reflexion(options)
