"""best_of_n:n=K,verifier=evidence|model|check (seed 003, 3.6): draw candidates until one is
accepted.

Each candidate is an independent tool-loop run. The verifier is the evidence check (code,
no model call), a model call whose only tool is a typed verdict, or the task set's answer
check (``check``: the chapter's "free checker", e.g. Game of 24's grader, which needs nothing
hidden from the model; no model call). The evidence check is the chapter's: the evidence
entries exist (a candidate answers in text, so its evidence is what its own look-ups found,
and it must have found at least one entry), and every number used appears in an
observation (``check_evidence``). ``verifier=check`` on a set whose grader offers no
answer check is refused before any request. The first accepted candidate is returned.
When candidates were answered but none was accepted, the run ends ``none_accepted``:
nothing is returned, nothing is graded, and the run counts as not correct. More
candidates raise the chance of returning something accepted, not the precision of what
is returned.

Every answered candidate is traced with its verdict; the runner grades them all, so
the table can show coverage, precision and the verifier's measured acceptance rates
on right and wrong candidates (r and f in the chapter's notation).

``max_steps`` holds the whole run; ``candidate_steps`` caps one candidate's tool loop.
With the model verifier, a candidate is drawn only while the calls left hold it and
its verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from pydantic import BaseModel, Field

from loopbench.harness.events import Event, VerdictEvent
from loopbench.harness.models.types import Message
from loopbench.harness.patterns.base import (
    NO_ANSWER_CHECK,
    CallFloor,
    Outcome,
    RunContext,
    ToolLoopOptions,
)
from loopbench.harness.patterns.evidence import check_evidence, entries_found
from loopbench.harness.patterns.prompts import Prompts, Slot
from loopbench.harness.patterns.react import react_system
from loopbench.harness.patterns.registry import register
from loopbench.harness.patterns.structured import Form, OutputMode, Prompt, ask_structured
from loopbench.harness.patterns.tool_loop import Loop, tool_loop
from loopbench.harness.trace import Trace

VERIFIER_SYSTEM = (
    "You verify answers. Using only the conversation above, call verdict: accept true if "
    "the last answer is supported by the observations, false otherwise."
)
PROMPTS = Prompts(
    Slot("candidate", react_system(False), about="the system prompt of each candidate's tool loop"),
    Slot("verifier", VERIFIER_SYSTEM, about="the system prompt of the model verifier's call"),
)


class Verdict(BaseModel):
    accept: bool = Field(description="True if the answer is supported.")
    reason: str = Field(default="", description="Why.")


class BestOfNOptions(ToolLoopOptions):
    max_steps: int = Field(default=24, ge=0)
    """Ceiling on model calls in the whole run: every candidate and every verdict."""
    n: int = Field(default=3, ge=1)
    """Candidates drawn at most."""
    candidate_steps: int = Field(default=6, ge=1)
    """Model calls one candidate's tool loop may use."""
    verifier: Literal["evidence", "model", "check"] = "evidence"
    """Who accepts a candidate: the evidence check, a model call, or the task set's answer
    check (its grader's, where it offers one)."""
    temperature: float = Field(default=0.7, ge=0)
    """Sampling temperature of the candidates."""
    output: OutputMode = "tool"
    """Structured output for the model verifier's verdict."""


@dataclass(frozen=True)
class BestOfN:
    options: BestOfNOptions
    name: str = "best_of_n"

    def call_floor(self) -> CallFloor:
        if self.options.verifier == "model":
            # guard: best-n-refusal
            return CallFloor(2, "a candidate and its verdict")
        return CallFloor(1, "one candidate")

    async def run(self, ctx: RunContext) -> Outcome:
        opts = self.options
        # guard: best-n-verifier-check-refused
        if opts.verifier == "check" and ctx.answer_check is None:
            return Outcome("refused", error=NO_ANSWER_CHECK.format(option="verifier=check"))
        # guard: best-n-reserves-verdict
        verdict_calls = int(opts.verifier == "model")
        drawn = answered = 0
        last = Outcome("step_budget")
        system = PROMPTS.render(ctx, "candidate")
        for candidate in range(1, opts.n + 1):
            budget = min(opts.candidate_steps, ctx.calls_left(opts) - verdict_calls)
            if budget < 1:
                break  # the calls left cannot hold another candidate and its verdict
            drawn = candidate
            candidate_trace = Trace()
            loop = Loop(
                opts,
                system,
                ctx.tools,
                budget,
                first_step=ctx.model.calls,
                temperature=opts.temperature,
            )
            last = await tool_loop(
                _forked(ctx, candidate_trace), loop, [Message("user", ctx.question)]
            )
            if last.status != "answered" or last.answer is None:
                continue
            answered += 1
            traced = ctx.answer_given("candidate", last.answer)  # kept if a limit hits next
            accepted, reason = await self._verify(ctx, candidate_trace, last)
            traced.accepted = accepted
            ctx.emit(VerdictEvent(candidate=candidate, accepted=accepted, reason=reason))
            if accepted:
                last.steps = ctx.model.calls
                last.metrics = {"candidates": float(drawn), "answered": float(answered)}
                last.metrics["accepted"] = 1.0
                return last
        metrics = {"candidates": float(drawn), "answered": float(answered), "accepted": 0.0}
        # guard: best-n-none-accepted-not
        if answered:
            return Outcome(
                "none_accepted",
                messages=last.messages,
                steps=ctx.model.calls,
                error=f"the verifier accepted none of {answered} answered candidates",
                metrics=metrics,
            )
        last.steps, last.metrics = ctx.model.calls, metrics
        last.error = last.error or (
            f"no candidate of {drawn} answered within candidate_steps={opts.candidate_steps} "
            f"or the {opts.max_steps} calls of max_steps"
        )
        return last

    async def _verify(self, ctx: RunContext, trace: Trace, candidate: Outcome) -> tuple[bool, str]:
        assert candidate.answer is not None
        if self.options.verifier == "check":
            assert ctx.answer_check is not None  # refused before any candidate otherwise
            checked = ctx.answer_check(candidate.answer)
            return checked.correct, checked.reason
        if self.options.verifier == "evidence":
            # guard: best-n-evidence-entries-exist
            if not (found := entries_found(trace)):
                return False, "the answer rests on no entry: no look-up found one"
            failure = check_evidence(ctx.question, trace, candidate.answer)
            return failure is None, failure or f"rests on {', '.join(dict.fromkeys(found))}"
        verdict = await ask_structured(
            ctx,
            Form(Verdict, "verdict", "Accept or reject the answer."),
            Prompt(PROMPTS.render(ctx, "verifier"), tuple(candidate.messages)),
            self.options.output,
            ctx.model.calls + 1,
        )
        if verdict.value is None:
            return False, f"no verdict ({verdict.failure})"
        return verdict.value.accept, verdict.value.reason


def _forked(ctx: RunContext, trace: Trace) -> RunContext:
    """The same run, with this candidate's events also kept apart for its evidence check."""
    return replace(ctx, trace=_Tee(ctx.trace, trace))


class _Tee(Trace):
    def __init__(self, main: Trace, own: Trace) -> None:
        super().__init__(started=main.started, events=main.events)
        self._own = own

    def emit(self, event: Event) -> None:
        super().emit(event)
        self._own.events.append(event)  # stamped once, by the run's trace


@register(
    "best_of_n",
    BestOfNOptions,
    "up to n tool-loop candidates until the verifier (evidence, model or the set's check) "
    "accepts one (+1 call each if model); "
    "max_steps calls in all",
    PROMPTS,
)
def best_of_n(options: BestOfNOptions) -> BestOfN:
    return BestOfN(options)
