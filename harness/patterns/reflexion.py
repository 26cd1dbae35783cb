"""reflexion:check=evidence,attempts=N (seeds 003 and 004): retry only on an external check.

Answer with the tool loop, then run a check that does not ask the model: the
evidence check (every number used comes from an observation). Only when it fails
is the model shown the check's specific failure and asked again, in the same
conversation. Each attempt's answer is traced, so the record can say whether the
answer went wrong-to-right or right-to-wrong (``first_correct`` beside ``correct``).

``check=tests`` is for task sets that carry test suites (the coding tasks); it is
refused on a task set without them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from harness.models.types import Message
from harness.patterns.base import Outcome, RunContext, ToolLoopOptions
from harness.patterns.evidence import check_evidence
from harness.patterns.react import react_system
from harness.patterns.registry import register
from harness.patterns.tool_loop import tool_loop


class ReflexionOptions(ToolLoopOptions):
    check: Literal["evidence", "tests"] = "evidence"
    """The external check: evidence grounding, or the task's test suite."""
    attempts: int = Field(default=2, ge=1)
    """Answers allowed in all, the first included."""


@dataclass(frozen=True)
class Reflexion:
    options: ReflexionOptions
    name: str = "reflexion"

    async def run(self, ctx: RunContext) -> Outcome:
        opts = self.options
        messages = [Message("user", ctx.question)]
        if opts.check == "tests":
            return Outcome(
                "refused",
                messages=messages,
                error="check=tests needs a task set with test suites; use check=evidence here",
            )
        if opts.max_steps < 1:
            return Outcome("refused", messages=messages, error="max_steps must be at least 1")
        steps = 0
        outcome = Outcome("refused")
        for attempt in range(1, opts.attempts + 1):
            started = len(ctx.trace.events)
            outcome = await tool_loop(
                ctx,
                opts,
                messages,
                react_system(False),
                ctx.tools,
                max_steps=opts.max_steps,
                first_step=steps,
            )
            steps += outcome.steps
            outcome.steps = steps
            if outcome.status != "answered" or outcome.answer is None:
                return outcome
            failure = check_evidence(ctx.question, ctx.trace, outcome.answer, since=started)
            ctx.emit("attempt", attempt=attempt, answer=outcome.answer, check_failure=failure)
            outcome.metrics = {"attempts": attempt, "check_passed": float(failure is None)}
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
        return outcome


@register(
    "reflexion",
    ReflexionOptions,
    "tool loop, external check, retry with the check's failure; up to attempts x max_steps",
)
def reflexion(options: ReflexionOptions) -> Reflexion:
    return Reflexion(options)
