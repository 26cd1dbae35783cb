"""pipeline (seed 004, "Pipeline"): patterns chained, the answer of one stage the input of
the next.

Each stage is an arm of its own, with its own options and prompts
(``pipeline:stages=plan_execute>react_text;guard=on``); ``loopbench.harness.arms`` parses them,
since the patterns cannot. The first stage is given the question, each later one the
``handover`` slot: by default the question and the previous stage's answer. A stage that
does not answer ends the pipeline with its status; the last stage's answer is the
pipeline's.

- One trace spans every stage: a ``stage`` event says where each starts, and a stage's
  step numbers carry on after the calls made before it (seed 001: a pattern that
  delegates renumbers its inner steps).
- The pipeline's run limits hold over the whole run, whatever the stages' own: each stage
  runs within its own limits and within the calls the pipeline's ``max_steps`` leaves it,
  less the call floors of the stages after it; a ``max_steps`` below the stages' floors
  added up is refused before any request.
- ``metrics``: ``stage_N_calls`` and ``stage_N_tokens`` for each stage that ran, its own
  measures as ``stage_N_NAME``, and ``stage_ended``, the stage whose outcome ended the run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from pydantic import Field, PrivateAttr

from loopbench.harness.events import Event, StageEvent
from loopbench.harness.models.counting import CountedClient
from loopbench.harness.models.types import ModelRequest, ModelResponse
from loopbench.harness.patterns.base import CallFloor, Outcome, Pattern, PatternOptions, RunContext
from loopbench.harness.patterns.limits import Limited
from loopbench.harness.patterns.prompts import Prompts, Slot
from loopbench.harness.patterns.registry import PatternInfo, register
from loopbench.harness.tools import ToolChoices
from loopbench.harness.trace import Trace

# guard: pipeline-handover-needs-answer
PROMPTS = Prompts(
    Slot(
        "handover",
        "{{ question }}\n\nAn earlier attempt at this question answered:\n{{ answer }}\n\n"
        "Check that answer, then give your own final answer to the question.",
        ("question", "answer", "stage"),
        "what each stage after the first is given: the question and the answer of the stage "
        "before it (stage: the number of the stage given it, from 2)",
        needs=("question", "answer"),
    ),
)


class Stage(Protocol):
    """What a pipeline needs of a stage: an arm (``loopbench.harness.arms.Arm``) is one."""

    @property
    def spec(self) -> str: ...

    @property
    def info(self) -> PatternInfo: ...

    @property
    def options(self) -> PatternOptions: ...

    @property
    def prompts(self) -> Mapping[str, str]: ...

    @property
    def built(self) -> Pattern | None:
        """Its pattern with its own options, built once with the arm."""


class PipelineOptions(PatternOptions):
    max_steps: int = Field(default=24, ge=0)
    """Ceiling on model calls in the whole pipeline, every stage's included."""
    stages: str = "plan_execute>react_text"
    """The stages in order, '>' between two; a stage's own options follow it after ';'
    (react_text;guard=on;prompts=terse.toml)."""
    _parsed: tuple[Stage, ...] = PrivateAttr(default=())

    def with_stages(self, stages: Sequence[Stage]) -> PipelineOptions:
        """These options holding their stages, as ``loopbench.harness.arms`` parsed them."""
        copy = self.model_copy()
        copy._parsed = tuple(stages)
        return copy

    @property
    def parsed_stages(self) -> tuple[Stage, ...]:
        return self._parsed

    def tool_options(self) -> ToolChoices:
        """Its stages' options for the tools (an arm whose stages differ is refused)."""
        merged: dict[str, Mapping[str, str]] = {}
        for stage in self._parsed:
            merged |= stage.options.tool_options()
        return merged


class _StageClient:
    """The run's client as a stage sees it: calls and tokens counted from the stage's
    start, as in a run of its own."""

    def __init__(self, model: CountedClient) -> None:
        self._model = model
        self._calls, self._tokens = model.calls, model.tokens_used

    @property
    def calls(self) -> int:
        return self._model.calls - self._calls

    @property
    def tokens_used(self) -> int:
        return self._model.tokens_used - self._tokens

    async def complete(self, request: ModelRequest) -> ModelResponse:
        return await self._model.complete(request)


@dataclass
class _StageTrace(Trace):
    """The run's trace as a stage writes it: its events go in the run's, their step numbers
    carried on past the ``offset`` calls made before the stage."""

    offset: int = 0

    def emit(self, event: Event) -> None:
        step = getattr(event, "step", None)
        if isinstance(step, int):
            # guard: pipeline-stage-step-numbers-carry
            event = event.model_copy(update={"step": step + self.offset})
        super().emit(event)


@dataclass(frozen=True)
class Pipeline:
    options: PipelineOptions
    name: str = "pipeline"

    def _floors(self) -> list[int]:
        stages = self.options.parsed_stages
        return [(s.built or s.info.build(s.options)).call_floor().calls for s in stages]

    def call_floor(self) -> CallFloor:
        floors = self._floors()
        each = zip(self.options.parsed_stages, floors, strict=True)
        added = ", ".join(f"{stage.spec} {calls}" for stage, calls in each)
        # guard: pipeline-refusal-below-stages-call
        return CallFloor(sum(floors), f"its stages' call floors added up: {added}")

    async def run(self, ctx: RunContext) -> Outcome:
        floors = self._floors()
        outcome = Outcome("refused", error="a pipeline's stages are parsed with its arm")
        metrics: dict[str, float] = {}
        answer = ""
        for number in range(1, len(floors) + 1):
            given = ctx.question
            if number > 1:
                variables = {"question": ctx.question, "answer": answer, "stage": number}
                # guard: pipeline-each-stage-after-first
                given = PROMPTS.render(ctx, "handover", **variables)
            outcome, measured = await self._stage(ctx, number, given, sum(floors[number:]))
            metrics |= measured | {"stage_ended": float(number)}
            if outcome.status != "answered" or outcome.answer is None:
                break
            answer = outcome.answer
        return replace(outcome, steps=ctx.model.calls, metrics=metrics)

    async def _stage(
        self, ctx: RunContext, number: int, given: str, reserved: int
    ) -> tuple[Outcome, dict[str, float]]:
        """Stage ``number``, given ``given``, leaving ``reserved`` calls to the stages after
        it; its outcome, and its metrics as the pipeline's."""
        stage = self.options.parsed_stages[number - 1]
        ctx.emit(StageEvent(stage=number, arm=stage.spec))
        own = stage.options
        # guard: pipeline-each-stage-within-what
        steps = min(own.max_steps, ctx.calls_left(self.options) - reserved)
        limits = own.model_copy(update={"max_steps": steps})
        client = _StageClient(ctx.model)
        trace = _StageTrace(
            ctx.trace.started, ctx.trace.events, ctx.trace.max_text, ctx.model.calls
        )
        inner = replace(ctx, question=given, model=client, trace=trace, prompts=stage.prompts)
        # The pipeline's own limits estimate a call that reported no usage: not the stage's too.
        # guard: pipeline-call-reported-no-usage
        outcome = await Limited(stage.info.build(limits), limits, estimate=None).run(inner)
        measured = {"calls": client.calls, "tokens": client.tokens_used} | outcome.metrics
        return outcome, {f"stage_{number}_{key}": float(v) for key, v in measured.items()}


@register(
    "pipeline",
    PipelineOptions,
    "patterns chained, each stage's answer the next one's input; the stages' calls, up to "
    "max_steps in all",
    PROMPTS,
)
def pipeline(options: PipelineOptions) -> Pipeline:
    return Pipeline(options)
