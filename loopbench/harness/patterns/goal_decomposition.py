"""goal_decomposition (seed 004): a goal broken into phases of concrete tasks.

One call decomposes the question into a typed ``Decomposition`` (the goal, and
phases each holding tasks). A phase that came without tasks gets them from a
planning call of its own (seed 004's plan-phase step); a decomposition with no
phases at all is planned as one phase, the goal itself. Tasks run in order, each as
its own short tool loop that sees the results before it; a failed task is marked
and the rest go on. A final call with no tools answers from the results. Every call
counts against ``max_steps``, and each phase leaves the later ones their calls.

Its prompts are slots: ``decompose`` and ``plan_phase`` are the two planning calls' system
prompts (a phase plan's message, ``plan_phase_request``), ``execute_task`` the message
asking for a task; a task's system prompt and the final answer's are those plan_execute
shares.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, Field

from loopbench.harness.events import (
    DecompositionEvent,
    PhasePlanEvent,
    PhaseStatusEvent,
    PlannedPhase,
    TaskStatusEvent,
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

DECOMPOSE_SYSTEM = (
    "Decompose the question into a goal and a few phases, each with one or more concrete "
    "tasks that a lookup or a calculation can do. Call decomposition with them."
)
PLAN_PHASE_SYSTEM = (
    "List the concrete tasks, each doable with a lookup or a calculation, that carry out "
    "this phase of the goal. Call phase_tasks with them."
)
PROMPTS = Prompts(
    Slot("decompose", DECOMPOSE_SYSTEM, about="the system prompt asking for the goal's phases"),
    Slot("plan_phase", PLAN_PHASE_SYSTEM, about="the system prompt asking for a phase's tasks"),
    Slot(
        "plan_phase_request",
        "Question: {{ question }}\nGoal: {{ goal }}\nPhase: {{ phase }}. {{ description }}\n"
        'Results so far:\n{{ results or "(nothing yet)" }}',
        ("question", "goal", "phase", "description", "results"),
        "a phase plan's message: the goal, the phase and the results so far (empty if none)",
        needs=("question", "phase"),
    ),
    step_request("execute_task", "the message asking for a task (its step)"),
    STEP_SYSTEM,
    SYNTHESIS,
    SYNTHESIS_REQUEST,
)


class Phase(BaseModel):
    name: str
    description: str = ""
    tasks: list[str] = Field(default_factory=list)


class Decomposition(BaseModel):
    goal: str
    phases: list[Phase] = Field(default_factory=list)


class PhaseTasks(BaseModel):
    tasks: list[str] = Field(min_length=1)


class GoalOptions(ToolLoopOptions):
    max_steps: int = Field(default=16, ge=0)
    """Ceiling on model calls in all: decomposition, phase planning, every task, answer."""
    step_budget: int = Field(default=3, ge=1)
    """Model calls each task may use."""
    output: OutputMode = "tool"
    """Structured output for the decomposition and phase plans: tool calling, or JSON."""


@dataclass(frozen=True)
class GoalDecomposition:
    options: GoalOptions
    name: str = "goal_decomposition"

    def call_floor(self) -> CallFloor:
        return PLANNED_FLOOR

    async def run(self, ctx: RunContext) -> Outcome:
        opts = self.options
        decomposed = await ask_structured(
            ctx,
            Form(Decomposition, "decomposition", "Submit the phases."),
            Prompt(PROMPTS.render(ctx, "decompose"), (Message("user", ctx.question),)),
            opts.output,
            1,
        )
        if decomposed.value is None:
            return Outcome(
                decomposed.failure or "unparsed", steps=ctx.model.calls, error=decomposed.error
            )
        goal = decomposed.value
        listed = [
            PlannedPhase(name=p.name, description=p.description, tasks=p.tasks) for p in goal.phases
        ]
        ctx.emit(DecompositionEvent(goal=goal.goal, phases=listed))
        phases = goal.phases or [Phase(name=goal.goal or ctx.question)]
        results: list[str] = []
        failed = planned_phases = 0
        for phase in phases:
            tasks = phase.tasks
            # guard: goal-decomposition-plans-empty-phase
            if not tasks:
                if not can_plan_again(ctx, opts):
                    ctx.emit(PhaseStatusEvent(phase=phase.name, status="skipped"))
                    continue
                tasks = await self._plan_phase(ctx, goal.goal, phase, results)
                planned_phases += 1
            for task in tasks:
                request = PROMPTS.render(
                    ctx,
                    "execute_task",
                    question=ctx.question,
                    results="\n".join(results),
                    step=task,
                )
                done = await run_step(ctx, opts, PROMPTS, request, opts.step_budget)
                ok = done.status == "answered" and bool(done.answer)
                ctx.emit(
                    TaskStatusEvent(phase=phase.name, task=task, status="done" if ok else "failed")
                )
                if ok:
                    results.append(f"{phase.name} / {task}: {done.answer}")
                else:
                    failed += 1
        metrics = {
            "tasks_done": float(len(results)),
            "tasks_failed": float(failed),
            "phases_planned": float(planned_phases),
        }
        return await synthesise(ctx, PROMPTS, "\n".join(results), metrics)

    async def _plan_phase(
        self, ctx: RunContext, goal: str, phase: Phase, results: list[str]
    ) -> list[str]:
        """The tasks of a phase that came without any; none if the reply gives none."""
        content = PROMPTS.render(
            ctx,
            "plan_phase_request",
            question=ctx.question,
            goal=goal,
            phase=phase.name,
            description=phase.description,
            results="\n".join(results),
        )
        planned = await ask_structured(
            ctx,
            Form(PhaseTasks, "phase_tasks", "Submit the phase's tasks."),
            Prompt(PROMPTS.render(ctx, "plan_phase"), (Message("user", content),)),
            self.options.output,
            ctx.model.calls + 1,
        )
        tasks = planned.value.tasks if planned.value else []
        ctx.emit(PhasePlanEvent(phase=phase.name, tasks=tasks, failure=planned.failure))
        return tasks


@register(
    "goal_decomposition",
    GoalOptions,
    "decompose into phases of tasks (a phase without tasks is planned), each task a short "
    "tool loop, then answer; up to max_steps calls",
    PROMPTS,
)
def goal_decomposition(options: GoalOptions) -> GoalDecomposition:
    return GoalDecomposition(options)
