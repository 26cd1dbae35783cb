"""best_of_n:n=K,verifier=evidence|model (seed 003): draw candidates until one is accepted.

Each candidate is an independent tool-loop run. The verifier is either the evidence
check (code, no model call) or a model call whose only tool is a typed verdict. The
first accepted candidate is returned; when none is, the first answered candidate is
returned and the record says nothing was accepted. More candidates raise the chance
of returning something accepted, not the precision of what is returned.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from harness.models.types import Message
from harness.patterns.base import Outcome, RunContext, ToolLoopOptions
from harness.patterns.evidence import check_evidence
from harness.patterns.react import react_system
from harness.patterns.registry import register
from harness.patterns.structured import OutputMode, ask_structured
from harness.patterns.tool_loop import tool_loop
from harness.trace import Trace

VERIFIER_SYSTEM = (
    "You verify answers. Using only the conversation above, call verdict: accept true if "
    "the last answer is supported by the observations, false otherwise."
)


class Verdict(BaseModel):
    accept: bool = Field(description="True if the answer is supported.")
    reason: str = Field(default="", description="Why.")


class BestOfNOptions(ToolLoopOptions):
    n: int = Field(default=3, ge=1)
    """Candidates drawn at most."""
    verifier: Literal["evidence", "model"] = "evidence"
    """Who accepts a candidate: the evidence check, or a model call."""
    temperature: float = Field(default=0.7, ge=0)
    """Sampling temperature of the candidates."""
    output: OutputMode = "tool"
    """Structured output for the model verifier's verdict."""


@dataclass(frozen=True)
class BestOfN:
    options: BestOfNOptions
    name: str = "best_of_n"

    async def run(self, ctx: RunContext) -> Outcome:
        opts = self.options
        if opts.max_steps < 1:
            return Outcome("refused", error="max_steps must be at least 1")
        steps = 0
        first: Outcome | None = None
        last = Outcome("refused")
        for drawn in range(1, opts.n + 1):
            candidate_trace = Trace()
            last = await tool_loop(
                _forked(ctx, candidate_trace),
                opts,
                [Message("user", ctx.question)],
                react_system(False),
                ctx.tools,
                max_steps=opts.max_steps,
                first_step=steps,
                temperature=opts.temperature,
            )
            steps += last.steps
            if last.status == "api_error":
                break
            if last.status != "answered" or last.answer is None:
                continue
            first = first or last
            accepted, reason = await self._verify(ctx, candidate_trace, last, steps)
            if opts.verifier == "model":
                steps += 1  # the verdict call
            ctx.emit(
                "candidate", candidate=drawn, answer=last.answer, accepted=accepted, reason=reason
            )
            if accepted:
                last.steps, last.metrics = steps, {"candidates": drawn, "accepted": 1.0}
                return last
        chosen = first or last
        chosen.steps, chosen.metrics = steps, {"candidates": opts.n, "accepted": 0.0}
        return chosen

    async def _verify(
        self, ctx: RunContext, trace: Trace, candidate: Outcome, step: int
    ) -> tuple[bool, str]:
        assert candidate.answer is not None
        if self.options.verifier == "evidence":
            failure = check_evidence(ctx.question, trace, candidate.answer)
            return failure is None, failure or "every number is grounded"
        verdict = await ask_structured(
            ctx,
            system=VERIFIER_SYSTEM,
            messages=tuple(candidate.messages),
            schema=Verdict,
            name="verdict",
            description="Accept or reject the answer.",
            mode=self.options.output,
            step=step + 1,
        )
        if verdict.value is None:
            return False, f"no verdict ({verdict.failure})"
        return verdict.value.accept, verdict.value.reason


def _forked(ctx: RunContext, trace: Trace) -> RunContext:
    """The same run, with this candidate's events also kept apart for its evidence check."""
    return RunContext(ctx.question, ctx.model, ctx.model_name, ctx.tools, _Tee(ctx.trace, trace))


class _Tee(Trace):
    def __init__(self, main: Trace, own: Trace) -> None:
        super().__init__(started=main.started, events=main.events)
        self._own = own

    def emit(self, kind: str, **data: object) -> None:
        super().emit(kind, **data)
        self._own.emit(kind, **data)


@register(
    "best_of_n",
    BestOfNOptions,
    "up to n tool-loop candidates until the verifier accepts one (+1 call each if model)",
)
def best_of_n(options: BestOfNOptions) -> BestOfN:
    return BestOfN(options)
