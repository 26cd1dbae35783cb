"""rewoo: reasoning without observation (seed 000).

One planning call whose only tool is ``submit_plan`` (the real tools are described as
text), every planned step run in order with ``#E1``, ``#E2`` ... replaced by earlier
steps' outputs, then one final call, offered no tools, that answers from the
evidence. Two model calls whatever the plan holds.

- A step whose reference names a step that has not run, or one that failed, fails by
  name ("step 3 needs #E2, which failed"); no literal ``#E`` text and no error text
  is ever substituted into a later step's arguments.
- A failed step becomes evidence and the plan goes on.
- A plan longer than ``plan_steps`` is refused; so is ``max_steps < 2``, and so is a task
  set that offers no tools (a coding set): there is nothing to plan. Both before any
  request.

Its prompts: the planner's system prompt (``planner``, given the tools) and, with
``output=json``, its request for JSON (``json_reply``); the solver's system prompt
(``solver``) and message (``solver_request``, given the question and the evidence); the
guard's warning (``guard``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field, field_validator

from loopbench.harness.errors import HarnessFault
from loopbench.harness.events import PlanEvent, PlannedCall, StepFailedEvent
from loopbench.harness.models.types import Message, ModelRequest
from loopbench.harness.patterns.acting import GUARD_SLOT, Actions
from loopbench.harness.patterns.base import (
    CallFloor,
    Outcome,
    RunContext,
    ToolLoopOptions,
    answer_reply,
)
from loopbench.harness.patterns.history import FULL
from loopbench.harness.patterns.prompts import Prompts, Slot
from loopbench.harness.patterns.registry import register
from loopbench.harness.patterns.structured import (
    JSON_REPLY_SLOT,
    Form,
    OutputMode,
    Prompt,
    ask_structured,
)
from loopbench.harness.tools import ToolSet

REFERENCE = re.compile(r"#E(\d+)", re.IGNORECASE)


class PlannedStep(BaseModel):
    tool: str = Field(description="Name of the tool to call.")
    args: dict[str, Any] = Field(description="Its arguments; '#E1' stands for step 1's output.")
    why: str = Field(default="", description="What this step is for.")


class Plan(BaseModel):
    steps: list[PlannedStep] = Field(min_length=1)


class UnresolvedReference(HarnessFault, ValueError):
    """A planned step that needs the evidence of a step that failed: the step fails too."""


def substitute(value: Any, outputs: dict[int, str], failed: set[int], step: int) -> Any:
    """``value`` with every #En replaced by step n's output, in strings at any depth.

    Only outputs of steps that ran and succeeded are ever substituted.
    """
    if isinstance(value, str):

        def replace(match: re.Match[str]) -> str:
            # No plan has a billion steps: a longer number is read as one that has not run.
            # guard: rewoo-step-number-past-any
            n = int(match.group(1)) if len(match.group(1)) < 10 else 10**9
            # guard: rewoo-reference-failed-step
            if n in failed:
                raise UnresolvedReference(f"step {step} needs #E{n}, which failed")
            # guard: rewoo-reference-step-not-run
            if n not in outputs:
                raise UnresolvedReference(
                    f"step {step} needs #E{n}, which has not run (only steps before "
                    f"{step} can be referred to)"
                )
            return outputs[n]

        return REFERENCE.sub(replace, value)
    if isinstance(value, dict):
        return {k: substitute(v, outputs, failed, step) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, outputs, failed, step) for v in value]
    return value


PLANNER = (
    "Plan every tool call needed to answer the question, then call submit_plan. Later "
    "steps may use earlier results: write #E1 for step 1's output, #E2 for step 2's, "
    "and so on. Tools the plan may use:\n{{ tools }}"
)
SOLVER = "Answer the question from the evidence below, in a few words."
PROMPTS = Prompts(
    Slot(
        "planner",
        PLANNER,
        ("tools",),
        about="the planning call's system prompt; tools lists the tools and their arguments",
        needs=("tools",),
    ),
    Slot("solver", SOLVER, about="the answering call's system prompt"),
    Slot(
        "solver_request",
        "Question: {{ question }}\n\nEvidence:\n{{ evidence }}",
        ("question", "evidence"),
        about="the answering call's message; evidence is every step, its call and its output",
        needs=("question", "evidence"),
    ),
    JSON_REPLY_SLOT,
    GUARD_SLOT,
)


def described(tools: ToolSet) -> str:
    """The tools as the planner is told of them, one a line with their arguments' schema."""
    return "\n".join(
        f"- {t.name}: {t.description} Arguments: {json.dumps(t.spec.parameters['properties'])}"
        for t in tools
    )


class ReWOOOptions(ToolLoopOptions):
    output: OutputMode = "tool"
    """Structured output: tool calling, or prompted JSON for endpoints without it."""
    plan_steps: int = Field(default=8, ge=1)
    """The longest plan accepted; a longer one is refused."""

    @field_validator("history")
    @classmethod
    def _no_window(cls, value: str) -> str:
        # guard: rewoo-refuses-history-window
        if value != FULL:
            raise ValueError(
                "rewoo re-sends no steps (its planner never sees a result), so there is "
                "no history to compact; only full applies"
            )
        return value


@dataclass(frozen=True)
class ReWOO:
    options: ReWOOOptions
    name: str = "rewoo"

    def call_floor(self) -> CallFloor:
        # guard: rewoo-refusal
        return CallFloor(2, "one call to plan and one to answer")

    async def run(self, ctx: RunContext) -> Outcome:
        opts = self.options
        messages = [Message("user", ctx.question)]
        # guard: rewoo-refuses-task-set-without
        if not len(ctx.tools):
            return Outcome(
                "refused",
                messages=messages,
                error="rewoo plans tool calls and the task set offers no tools; choose a "
                "pattern that needs none, such as direct or cot",
            )
        planned = await ask_structured(
            ctx,
            Form(Plan, "submit_plan", "Submit the plan of tool calls."),
            Prompt(
                PROMPTS.render(ctx, "planner", tools=described(ctx.tools)),
                tuple(messages),
                json_reply=PROMPTS.render(ctx, "json_reply"),
            ),
            opts.output,
            1,
        )
        if planned.value is None:
            return Outcome(
                planned.failure or "unparsed", messages=messages, steps=1, error=planned.error
            )
        plan = planned.value
        ctx.emit(
            PlanEvent(
                step=1, steps=[PlannedCall(tool=s.tool, args=s.args, why=s.why) for s in plan.steps]
            )
        )
        if len(plan.steps) > opts.plan_steps:
            return Outcome(
                "refused",
                messages=messages,
                steps=1,
                error=f"the plan has {len(plan.steps)} steps; at most "
                f"{opts.plan_steps} are allowed",
            )
        evidence = await self._execute(ctx, plan)
        request_text = PROMPTS.render(
            ctx, "solver_request", question=ctx.question, evidence=evidence
        )
        request = ModelRequest(
            ctx.model_name,
            (Message("user", request_text),),
            system=PROMPTS.render(ctx, "solver"),
            max_output_tokens=200,
        )
        response = await ctx.model.complete(request)
        messages.append(response.message)
        return answer_reply(ctx, response, messages)

    async def _execute(self, ctx: RunContext, plan: Plan) -> str:
        actions = Actions(ctx, ctx.tools, self.options.guard, PROMPTS.render(ctx, "guard"))
        outputs: dict[int, str] = {}
        failed: set[int] = set()
        lines = []
        for number, step in enumerate(plan.steps, start=1):
            try:
                args = substitute(step.args, outputs, failed, number)
            except UnresolvedReference as exc:
                ctx.emit(StepFailedEvent(step=number, error=str(exc)))
                failed.add(number)
                evidence = f"Error: {exc}"
            else:
                result = await actions.run(number, step.tool, args)
                evidence = result.content
                # guard: rewoo-failed-tool-step-failed
                if result.ok and not result.guarded:
                    outputs[number] = result.content
                else:  # a failure, or the guard's warning: never an output to build on
                    ctx.emit(StepFailedEvent(step=number, error=result.content))
                    failed.add(number)
            lines.append(
                f"#E{number} = {step.tool}({json.dumps(step.args)}) [{step.why}]\n{evidence}"
            )
        return "\n\n".join(lines)


@register("rewoo", ReWOOOptions, "plan every tool call, run them, answer; always 2 calls", PROMPTS)
def rewoo(options: ReWOOOptions) -> ReWOO:
    return ReWOO(options)
