"""plan_execute:replan=on|off (seed 004): a typed plan of steps with dependencies.

One planning call returns steps (id, description, depends_on). Steps run in
dependency order, each as its own short tool loop whose prompt holds the results of
every step completed before it (seed 004), not only of those it depends on; a step
whose dependency failed is skipped. Every step's status (pending, running, done,
failed, skipped) is traced. With ``replan=on``, the first failure triggers one
replanning call that replaces the steps not yet run; a replanned step may reuse a
failed step's id, and is then a new step that its dependents wait for. A replan that
cannot be used (it does not parse, is cut off, or its steps cannot be ordered) changes
nothing: what finished stays, and the current plan goes on without the failed step
(traced as ``replan_failed``). A final call with no tools answers from the results.
The plan, every step's calls, the replan and the final call all count against
``max_steps``, and each phase leaves the later ones their calls.

Its prompts are slots: ``plan`` and ``replan`` are the two planning calls' system prompts
(the replan's message, ``replan_request``), ``execute_step`` the message asking for a step;
a step's system prompt and the final answer's are those goal_decomposition shares.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field

from loopbench.harness.events import (
    PlanEvent,
    PlannedStep,
    ReplanEvent,
    ReplanFailedEvent,
    StepStatusEvent,
)
from loopbench.harness.models.types import Message
from loopbench.harness.patterns.base import CallFloor, Outcome, RunContext, ToolLoopOptions
from loopbench.harness.patterns.prompts import Prompts, Slot
from loopbench.harness.patterns.registry import register
from loopbench.harness.patterns.steps import (
    PLANNED_FLOOR,
    STEP_SYSTEM,
    SYNTHESIS,
    SYNTHESIS_REQUEST,
    can_plan_again,
    run_step,
    step_request,
    synthesise,
)
from loopbench.harness.patterns.structured import Form, OutputMode, Prompt, ask_structured

PLAN_SYSTEM = (
    "Break the question into a few steps, each small enough to do with a lookup or a "
    "calculation. Give each step an id (1, 2, ...) and list the ids of the steps whose "
    "results it needs. Call plan with the steps."
)
REPLAN_SYSTEM = (
    "A step of the plan failed. Given the results so far, call plan with new steps that "
    "replace the steps not yet done (ids must not repeat those already done)."
)
PROMPTS = Prompts(
    Slot("plan", PLAN_SYSTEM, about="the system prompt asking for the steps"),
    step_request("execute_step", "the message asking for a step"),
    STEP_SYSTEM,
    Slot("replan", REPLAN_SYSTEM, about="the system prompt asking for new steps after a failure"),
    Slot(
        "replan_request",
        "Question: {{ question }}\n{{ results }}\nStep {{ failed_id }} failed: {{ failed_step }}",
        ("question", "results", "failed_id", "failed_step"),
        "the replan's message: the steps done so far and the one that failed",
        needs=("question", "results", "failed_step"),
    ),
    SYNTHESIS,
    SYNTHESIS_REQUEST,
)


class StepDef(BaseModel):
    id: int
    description: str = Field(min_length=1)
    depends_on: list[int] = Field(default_factory=list)


class ExecutionPlan(BaseModel):
    steps: list[StepDef] = Field(min_length=1)


def dependency_order(steps: list[StepDef], done: set[int]) -> list[StepDef] | str:
    """Steps in an order that respects dependencies, or what is wrong with them."""
    ids = {s.id for s in steps}
    if len(ids) != len(steps):
        return "two steps share an id"
    if ids & done:
        return f"steps {sorted(ids & done)} reuse the ids of steps already done"
    for s in steps:
        unknown = set(s.depends_on) - ids - done
        if unknown:
            return f"step {s.id} depends on unknown steps {sorted(unknown)}"
    ordered: list[StepDef] = []
    placed = set(done)
    pending = sorted(steps, key=lambda s: s.id)
    while pending:
        ready = [s for s in pending if set(s.depends_on) <= placed]
        if not ready:
            return f"steps {[s.id for s in pending]} depend on each other in a cycle"
        ordered.append(ready[0])
        placed.add(ready[0].id)
        pending.remove(ready[0])
    return ordered


class PlanExecuteOptions(ToolLoopOptions):
    max_steps: int = Field(default=16, ge=0)
    """Ceiling on model calls in all: plan, every step's calls, replan, answer."""
    replan: bool = False
    """Revise the remaining plan once, after the first failed step."""
    step_budget: int = Field(default=3, ge=1)
    """Model calls each step may use."""
    output: OutputMode = "tool"
    """Structured output for the plan: tool calling, or prompted JSON."""


@dataclass(frozen=True)
class PlanExecute:
    options: PlanExecuteOptions
    name: str = "plan_execute"

    def call_floor(self) -> CallFloor:
        return PLANNED_FLOOR

    async def run(self, ctx: RunContext) -> Outcome:
        opts = self.options
        planned = await self._plan(ctx, PROMPTS.render(ctx, "plan"), ctx.question)
        if isinstance(planned, Outcome):
            return planned
        results: dict[int, str] = {}  # in the order the steps finished
        failed: set[int] = set()  # failed and skipped steps: their dependents cannot run
        replanned = replan_unusable = False
        queue = planned
        while queue:
            step = queue.pop(0)
            blocked = sorted(set(step.depends_on) & failed)
            if blocked:
                failed.add(step.id)
                ctx.emit(
                    StepStatusEvent(
                        id=step.id, status="skipped", reason=f"depends on failed steps {blocked}"
                    )
                )
                continue
            ctx.emit(StepStatusEvent(id=step.id, status="running"))
            # guard: plan-execute-step-sees-every
            context = "\n".join(f"Result of step {i}: {r}" for i, r in results.items())
            request = PROMPTS.render(
                ctx, "execute_step", question=ctx.question, results=context, step=step.description
            )
            done = await run_step(ctx, opts, PROMPTS, request, opts.step_budget)
            if done.status == "answered" and done.answer:
                results[step.id] = done.answer
                ctx.emit(StepStatusEvent(id=step.id, status="done", result=done.answer))
                continue
            failed.add(step.id)
            ctx.emit(StepStatusEvent(id=step.id, status="failed", reason=done.status))
            if opts.replan and not (replanned or replan_unusable) and can_plan_again(ctx, opts):
                revised = await self._replan(ctx, results, step)
                if isinstance(revised, Outcome):  # what finished stays; the plan goes on
                    replan_unusable = True
                    ctx.emit(ReplanFailedEvent(status=revised.status, error=revised.error))
                    # guard: plan-execute-unusable-replan-keeps
                    continue
                replanned = True
                for dropped in queue:  # before the new plan's steps, which may reuse their ids
                    ctx.emit(
                        StepStatusEvent(
                            id=dropped.id, status="skipped", reason="replaced by the replan"
                        )
                    )
                # guard: plan-execute-reused-id-new
                failed -= {s.id for s in revised}  # a reused id is a new step, not the failed one
                queue = _pending(ctx, revised)
        summary = "\n".join(f"Step {i}: {r}" for i, r in sorted(results.items()))
        metrics = {
            "steps_done": float(len(results)),
            "steps_failed": float(len(failed)),
            "replanned": float(replanned),
            "replan_unusable": float(replan_unusable),
        }
        return await synthesise(ctx, PROMPTS, summary, metrics)

    async def _plan(
        self, ctx: RunContext, system: str, content: str, done: set[int] | None = None
    ) -> list[StepDef] | Outcome:
        """A plan (or, with ``done``, the rest of one) in dependency order, or why not."""
        planned = await ask_structured(
            ctx,
            Form(ExecutionPlan, "plan", "Submit the steps."),
            Prompt(system, (Message("user", content),)),
            self.options.output,
            ctx.model.calls + 1,
        )
        if planned.value is None:
            return Outcome(
                planned.failure or "unparsed", steps=ctx.model.calls, error=planned.error
            )
        ordered = dependency_order(planned.value.steps, done or set())
        if isinstance(ordered, str):
            return Outcome("refused", steps=ctx.model.calls, error=f"unusable plan: {ordered}")
        steps = [
            PlannedStep(id=s.id, description=s.description, depends_on=s.depends_on)
            for s in ordered
        ]
        ctx.emit(PlanEvent(steps=steps) if done is None else ReplanEvent(steps=steps))
        return ordered if done is not None else _pending(ctx, ordered)

    async def _replan(
        self, ctx: RunContext, results: dict[int, str], failed: StepDef
    ) -> list[StepDef] | Outcome:
        so_far = "\n".join(f"Step {i} done: {r}" for i, r in sorted(results.items()))
        content = PROMPTS.render(
            ctx,
            "replan_request",
            question=ctx.question,
            results=so_far,
            failed_id=failed.id,
            failed_step=failed.description,
        )
        system = PROMPTS.render(ctx, "replan")
        return await self._plan(ctx, system, content, done=set(results))


def _pending(ctx: RunContext, steps: list[StepDef]) -> list[StepDef]:
    for step in steps:
        ctx.emit(StepStatusEvent(id=step.id, status="pending", description=step.description))
    return steps


@register(
    "plan_execute",
    PlanExecuteOptions,
    "typed plan with dependencies, each step a short tool loop, optional one replan, answer; "
    "up to max_steps calls",
    PROMPTS,
)
def plan_execute(options: PlanExecuteOptions) -> PlanExecute:
    return PlanExecute(options)
