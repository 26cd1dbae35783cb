"""goal_decomposition (seed 004): a goal broken into phases of concrete tasks.

One call decomposes the question into a typed ``Decomposition`` (the goal, and
phases each holding tasks). Tasks run in order, each as its own short tool loop that
sees the results before it; a failed task is marked and the rest go on. A final call
with no tools answers from the results.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field

from harness.models.types import Message
from harness.patterns.base import Outcome, RunContext, ToolLoopOptions
from harness.patterns.executor import run_step, synthesise
from harness.patterns.registry import register
from harness.patterns.structured import OutputMode, ask_structured

DECOMPOSE_SYSTEM = (
    "Decompose the question into a goal and a few phases, each with one or more concrete "
    "tasks that a lookup or a calculation can do. Call decomposition with them."
)


class Phase(BaseModel):
    name: str
    description: str = ""
    tasks: list[str] = Field(min_length=1)


class Decomposition(BaseModel):
    goal: str
    phases: list[Phase] = Field(min_length=1)


class GoalOptions(ToolLoopOptions):
    max_steps: int = Field(default=16, ge=0)
    """Ceiling on model calls in all: decomposition, every task's calls, answer."""
    step_budget: int = Field(default=3, ge=1)
    """Model calls each task may use."""
    output: OutputMode = "tool"
    """Structured output for the decomposition: tool calling, or prompted JSON."""


@dataclass(frozen=True)
class GoalDecomposition:
    options: GoalOptions
    name: str = "goal_decomposition"

    async def run(self, ctx: RunContext) -> Outcome:
        opts = self.options
        if opts.max_steps < 3:
            return Outcome("refused", error="goal_decomposition needs max_steps of at least 3")
        decomposed = await ask_structured(
            ctx,
            system=DECOMPOSE_SYSTEM,
            messages=(Message("user", ctx.question),),
            schema=Decomposition,
            name="decomposition",
            description="Submit the phases.",
            mode=opts.output,
            step=1,
        )
        if decomposed.value is None:
            return Outcome(
                decomposed.failure or "unparsed", steps=ctx.model.calls, error=decomposed.error
            )
        ctx.emit("decomposition", **decomposed.value.model_dump())
        results: list[str] = []
        failed = 0
        for phase in decomposed.value.phases:
            for task in phase.tasks:
                context = "\n".join(results)
                done = await run_step(ctx, opts, task, context, opts.step_budget)
                if done.status == "api_error":
                    return Outcome("api_error", steps=ctx.model.calls, error=done.error)
                ok = done.status == "answered" and bool(done.answer)
                ctx.emit(
                    "task_status", phase=phase.name, task=task, status="done" if ok else "failed"
                )
                if ok:
                    results.append(f"{phase.name} / {task}: {done.answer}")
                else:
                    failed += 1
        metrics = {"tasks_done": float(len(results)), "tasks_failed": float(failed)}
        return await synthesise(ctx, "\n".join(results) or "(none)", metrics)


@register(
    "goal_decomposition",
    GoalOptions,
    "decompose into phases of tasks, each a short tool loop, then answer; up to max_steps calls",
)
def goal_decomposition(options: GoalOptions) -> GoalDecomposition:
    return GoalDecomposition(options)
