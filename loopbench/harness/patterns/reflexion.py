"""reflexion:check=evidence,attempts=N (seeds 003 and 004): retry only on an external check.

Answer with the tool loop, then run a check that does not ask the model: the
evidence check (every number used comes from an observation), or with ``check=grader``
the task set's answer check (its grader's verdict where it needs nothing hidden from the
model, e.g. Game of 24's; its reason is the failure shown). Only when it fails
is the model shown the check's specific failure and asked again, in the same
conversation. Each attempt's answer is traced with the check's verdict, so the
record can say whether the answer went wrong-to-right or right-to-wrong
(``first_correct`` beside ``correct``) and how often the check accepted a wrong one.

``max_steps`` holds the whole run, every attempt included; ``attempt_steps`` caps
one attempt's tool loop. When the calls left cannot hold another attempt, or a retry
ends without an answer, the last answer stands.

On coding tasks (seed 003, 3.5) the answer is code and an attempt is one call:

- ``check=tests``: the task's feedback suite runs on the code; on a failure the model
  is shown the first failing test (name, input, expected, actual) and asked for a fix;
  it stops as soon as the suite passes. The held-out suite, which grades, is never run
  or shown here.
- ``check=self_tests``: Reflexion's own method. The model first writes tests from the
  specification alone (one call, its own conversation), and those are the check. Tests
  that are wrong let wrong code through or reject right code, which the record shows
  as the check's false accepts and false rejects; a reply with no test accepts anything.

Both are refused on a task set without code, ``check=evidence`` on one with code, and
``check=grader`` on one whose grader offers no answer check.

The model writes no critique of its own here, so the ``critique`` slot frames the evidence
check's failure and ``retry`` asks again with it; on code the critique is the failing test
(``failure_report``), which ``code_retry`` asks again with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from loopbench.graders.code_check import CodeCheck
from loopbench.harness.events import AttemptUnfinishedEvent, CheckEvent, OwnTestsEvent
from loopbench.harness.models.types import Message
from loopbench.harness.patterns.base import (
    NO_ANSWER_CHECK,
    ONE_CALL,
    CallFloor,
    Outcome,
    RunContext,
    ToolLoopOptions,
)
from loopbench.harness.patterns.coding import (
    CODE_SLOT,
    OWN_TESTS_SLOTS,
    ask_again,
    failure_report,
    first_attempt,
    own_tests_request,
    suite_from_tests,
)
from loopbench.harness.patterns.evidence import check_evidence
from loopbench.harness.patterns.prompts import Prompts, Slot
from loopbench.harness.patterns.react import react_system
from loopbench.harness.patterns.registry import register
from loopbench.harness.patterns.tool_loop import Loop, tool_loop

PROMPTS = Prompts(
    Slot("attempt", react_system(False), about="the system prompt of each attempt's tool loop"),
    Slot(
        "critique",
        "A check of your answer failed: {{ failure }}.",
        ("failure",),
        about="how the evidence check's failure is told to the model",
        needs=("failure",),
        shown_in=("retry", "critique"),
    ),
    Slot(
        "retry",
        "{{ critique }} Look again and give a corrected answer.",
        ("critique",),
        about="the request for another attempt, with the critique",
        needs=("critique",),
    ),
    CODE_SLOT,
    *OWN_TESTS_SLOTS,
    Slot(
        "code_retry",
        "{{ critique }}\nFix the code.",
        ("critique",),
        about="the request for corrected code, with the failing test (coding tasks)",
        needs=("critique",),
    ),
)


class ReflexionOptions(ToolLoopOptions):
    max_steps: int = Field(default=16, ge=0)
    """Ceiling on model calls in the whole run, every attempt included."""
    check: Literal["evidence", "grader", "tests", "self_tests"] = "evidence"
    """The external check: evidence grounding, the task set's answer check (its grader's),
    the task's feedback suite, or tests the model writes itself."""
    attempts: int = Field(default=2, ge=1)
    """Answers allowed in all, the first included."""
    attempt_steps: int = Field(default=8, ge=1)
    """Model calls one attempt's tool loop may use."""


@dataclass(frozen=True)
class Reflexion:
    options: ReflexionOptions
    name: str = "reflexion"

    def call_floor(self) -> CallFloor:
        if self.options.check == "self_tests":
            # guard: self-tests-need-call-for
            return CallFloor(2, "one call for the tests, one for the code")
        return ONE_CALL

    async def run(self, ctx: RunContext) -> Outcome:
        opts = self.options
        messages = [Message("user", ctx.question)]
        if refusal := _misfit(opts, ctx):
            return Outcome("refused", messages=messages, error=refusal)
        if ctx.code is not None:
            return await self._repair_code(ctx, ctx.code)
        answered: Outcome | None = None
        system = PROMPTS.render(ctx, "attempt")
        for attempt in range(1, opts.attempts + 1):
            # guard: reflexion-attempts-share-max-steps
            budget = min(opts.attempt_steps, ctx.calls_left(opts))
            if budget < 1 and answered is not None:
                break  # no calls left for another attempt: the last answer stands
            started = len(ctx.trace.events)
            loop = Loop(opts, system, ctx.tools, budget, ctx.model.calls)
            outcome = await tool_loop(ctx, loop, messages)
            if outcome.status != "answered" or outcome.answer is None:
                # guard: reflexion-unfinished-retry-leaves
                if answered is None:
                    return outcome
                # A retry that did not finish takes nothing away: the last answer stands.
                ctx.emit(AttemptUnfinishedEvent(attempt=attempt, status=outcome.status))
                break
            failure = _failure(opts, ctx, outcome.answer, started)
            ctx.answer_given("attempt", outcome.answer, accepted=failure is None)
            ctx.emit(CheckEvent(attempt=attempt, failure=failure))
            outcome.metrics = {"attempts": attempt, "check_passed": float(failure is None)}
            answered = outcome
            if failure is None:
                break
            if attempt < opts.attempts:
                critique = PROMPTS.render(ctx, "critique", failure=failure)
                messages.append(Message("user", PROMPTS.render(ctx, "retry", critique=critique)))
        assert answered is not None  # the first attempt always runs (max_steps >= 1)
        answered.steps = ctx.model.calls
        return answered

    async def _repair_code(self, ctx: RunContext, check: CodeCheck) -> Outcome:
        opts = self.options
        system = PROMPTS.render(ctx, "code")
        first = await first_attempt(ctx, system)
        if first.status != "answered" or first.answer is None:
            return first
        suite, tests = "", 0
        if opts.check == "self_tests":
            request = PROMPTS.render(ctx, "own_tests_request", question=ctx.question)
            asked = own_tests_request(ctx, request, PROMPTS.render(ctx, "own_tests"))
            written = await ctx.model.complete(asked)
            suite, tests = suite_from_tests(written.message.content, check.entry_point)
            ctx.emit(OwnTestsEvent(tests=tests, truncated=written.truncated))
        answer, messages = first.answer, first.messages
        attempt = 1
        while True:
            passed, failure = await self._check_code(ctx, check, answer, (suite, tests), attempt)
            # guard: feedback-loop-stops-once-check
            if passed or attempt == opts.attempts or ctx.calls_left(opts) < 1:
                break
            request = PROMPTS.render(ctx, "code_retry", critique=failure)
            retry = await ask_again(ctx, messages, request, system)
            if retry.answer is None:  # a retry that did not finish: the last answer stands
                ctx.emit(AttemptUnfinishedEvent(attempt=attempt + 1, status=retry.status))
                break
            answer, attempt = retry.answer, attempt + 1
        metrics = {"attempts": float(attempt), "check_passed": float(passed)}
        if opts.check == "self_tests":
            metrics["own_tests"] = float(tests)
        return Outcome("answered", answer, messages, ctx.model.calls, metrics=metrics)

    async def _check_code(
        self,
        ctx: RunContext,
        check: CodeCheck,
        answer: str,
        own_tests: tuple[str, int],
        attempt: int,
    ) -> tuple[bool, str]:
        """Run the check on one attempt and trace both; a check with no test accepts it.
        ``own_tests``: the tests the model wrote, as a suite, and how many."""
        suite, tests = own_tests
        if self.options.check == "self_tests" and tests == 0:
            ctx.answer_given("attempt", answer, accepted=True)
            ctx.emit(CheckEvent(attempt=attempt, failure=None, tests=0))
            return True, ""
        if self.options.check == "tests":
            result = await check.feedback(answer)
        else:
            result = await check.own_tests(answer, suite)
        passed = result.status == "passed"
        failure = None if passed else failure_report(result)
        ctx.answer_given("attempt", answer, accepted=passed)
        ctx.emit(CheckEvent(attempt=attempt, failure=failure, result=result.to_json()))
        return passed, failure or ""


def _misfit(opts: ReflexionOptions, ctx: RunContext) -> str | None:
    """Why the check does not fit the task set, or None when it does."""
    if opts.check == "grader":
        fits = ctx.answer_check is not None and ctx.code is None
        return None if fits else NO_ANSWER_CHECK.format(option="check=grader")
    # guard: reflexion-refuses-check-does-not
    if (opts.check == "evidence") != (ctx.code is None):
        wanted = "check=tests or check=self_tests" if ctx.code else "check=evidence"
        kind = "coding tasks" if ctx.code else "tasks whose answer is not code"
        return f"check={opts.check} on {kind}; use {wanted}"
    return None


def _failure(opts: ReflexionOptions, ctx: RunContext, answer: str, started: int) -> str | None:
    """The text check's failure on ``answer`` (events from ``started`` on are this
    attempt's), or None when it passes."""
    if opts.check == "grader" and ctx.answer_check is not None:
        verdict = ctx.answer_check(answer)
        return None if verdict.correct else verdict.reason
    return check_evidence(ctx.question, ctx.trace, answer, since=started)


@register(
    "reflexion",
    ReflexionOptions,
    "tool loop (or code), external check, retry with the check's failure; up to max_steps "
    "calls in all (+1 for the model's own tests with check=self_tests)",
    PROMPTS,
)
def reflexion(options: ReflexionOptions) -> Reflexion:
    return Reflexion(options)
