"""The code-test grader: the code in a reply, run against a coding task's suites in the sandbox.

A run is graded on its task's held-out suite only; a repair loop's check runs the
feedback suite, or tests the model wrote (``SuiteCheck``), and never the held-out one.
Results are kept by (code, suite): arms that start from the same first attempt, and
attempts that did not change the code, are run once.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass

from loopbench.graders.exact import Grade
from loopbench.graders.extract import extract_code
from loopbench.sandbox.run import Sandbox, Suite
from loopbench.sandbox.suite_result import SuiteResult


@dataclass(frozen=True)
class CodeSuites:
    """A coding task's tests, read from its suite folder (or made from a HumanEval problem)."""

    entry_point: str
    feedback: str
    """Tests a repair loop may run and show the model."""
    heldout: str
    """Tests never shown and never used to stop anything: what correctness means."""
    reference: str
    """A solution both suites accept."""
    preamble: str = ""
    """Imports put before the model's code (those the prompt already showed it)."""


NO_CODE = "no Python code found in the reply"


def no_code() -> SuiteResult:
    return SuiteResult(
        status="syntax_error", passed=0, failed=0, first_failure=None, seconds=0.0, detail=NO_CODE
    )


def code_in(reply: str, entry_point: str) -> str | None:
    """The code a reply holds, as it is run: what grading and the edit counts compare."""
    return extract_code(reply, entry_point)


class CodeGrader:
    """Runs replies' code against suites through one shared sandbox (a bounded pool)."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self._runs: dict[str, asyncio.Future[SuiteResult]] = {}

    async def run(self, reply: str, suite: Suite) -> SuiteResult:
        code = code_in(reply, suite.entry_point)
        if code is None:
            return no_code()
        key = _digest(code, suite)
        known = self._runs.get(key)
        if known is not None:
            return await asyncio.shield(known)
        future: asyncio.Future[SuiteResult] = asyncio.get_running_loop().create_future()
        self._runs[key] = future
        try:
            result = await self.sandbox.run(code, suite)
        except BaseException as exc:  # not kept: the next asker runs it again
            del self._runs[key]
            future.set_exception(exc)
            future.exception()  # retrieved, so an unawaited failure is not reported twice
            raise
        future.set_result(result)
        return result

    async def grade(self, suites: CodeSuites, answer: str) -> tuple[Grade, SuiteResult]:
        # guard: run-graded-held-out-suite
        result = await self.run(answer, heldout(suites))
        return Grade(result.status == "passed", describe(result, "held-out")), result


def feedback(suites: CodeSuites) -> Suite:
    return Suite("feedback", suites.feedback, suites.entry_point, suites.preamble)


def heldout(suites: CodeSuites) -> Suite:
    return Suite("heldout", suites.heldout, suites.entry_point, suites.preamble)


def describe(result: SuiteResult, label: str) -> str:
    """One line on a suite's result, as a record's grade_reason (its text printable already,
    see ``loopbench.sandbox.suite_result``)."""
    if result.status == "passed":
        return f"{label} suite passed ({result.passed} tests)"
    counts = f"{result.passed} passed, {result.failed} failed"
    # guard: grade-reason-says-output-was
    cut = f"; output cut after {result.output_bytes} bytes" if result.output_cut else ""
    failure = result.first_failure
    if failure is not None:
        first = (
            f"first failure {failure.test}: {failure.input} gave {failure.actual}, "
            f"expected {failure.expected}"
        )
        return f"{label} suite {result.status} ({counts}); {first}{cut}"
    return f"{label} suite {result.status} ({counts}): {result.detail}{cut}"


@dataclass(frozen=True)
class SuiteCheck:
    """One coding task's checks for a pattern (``ctx.code``): the feedback suite, or the
    model's own tests. Never the held-out suite."""

    grader: CodeGrader
    suites: CodeSuites

    @property
    def entry_point(self) -> str:
        return self.suites.entry_point

    async def feedback(self, reply: str) -> SuiteResult:
        return await self.grader.run(reply, feedback(self.suites))

    async def own_tests(self, reply: str, suite: str) -> SuiteResult:
        own = Suite("self_tests", suite, self.suites.entry_point, self.suites.preamble)
        return await self.grader.run(reply, own)


def _digest(code: str, suite: Suite) -> str:
    # guard: suite-results-kept-code-suite
    parts = (code, suite.name, suite.source, suite.entry_point, suite.preamble)
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()
