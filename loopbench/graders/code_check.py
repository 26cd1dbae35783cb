"""What a pattern may run on a coding task's code besides asking the model (``CodeCheck``):
the grader builds it (``loopbench.graders.base``), the pattern receives it in its context."""

from __future__ import annotations

from typing import Protocol

from loopbench.sandbox.suite_result import SuiteResult


class CodeCheck(Protocol):
    """What a pattern may run on a coding task's code, besides asking the model: the task's
    feedback suite, or tests the model wrote. Never the held-out suite, which grades."""

    @property
    def entry_point(self) -> str: ...

    async def feedback(self, reply: str) -> SuiteResult:
        """Run the feedback suite on the code in ``reply``."""
        ...

    async def own_tests(self, reply: str, suite: str) -> SuiteResult:
        """Run ``suite`` (tests the model wrote, as a suite) on the code in ``reply``."""
        ...
