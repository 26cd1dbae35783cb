"""The time grading one answer may spend on what a task set's author wrote: the regexes of
the regex grader, promptfoo's regex asserts and a JSON Schema's patterns, and the whole
check of a schema.

The limit is one answer's, not one regex's: fifty regex asserts share it, so they cannot
take fifty seconds. Grading runs on the run's event loop, so the limit is also how long
Ctrl-C may wait for the loop to notice it. An answer over the limit is graded wrong with a
reason of its own (``GradedWrong``), recorded like any verdict.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from loopbench.harness.errors import HarnessFault

#: Seconds one answer's regexes and schema checks may take, together: short, since
#: Ctrl-C waits for the grading under way (measured by bench/interrupt_while_grading.py).
# guard: ctrl-c-one-answer-grading
LIMIT_S = 0.5

_DEADLINE: ContextVar[float | None] = ContextVar("answer_deadline", default=None)


class GradedWrong(HarnessFault):
    """What the task set's author wrote could not be judged on this answer (too slow, or a
    schema that fails on it): the answer is graded wrong with ``reason``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class TooSlow(GradedWrong):
    def __init__(self, what: str) -> None:
        super().__init__(f"{what} took longer than {LIMIT_S:g} s on this answer; graded wrong")


@contextmanager
def answer_time() -> Iterator[None]:
    """Grading one answer: ``time_left`` counts down ``LIMIT_S`` from here. Nested (a
    promptfoo test's is-json schema inside its asserts), the outer limit holds."""
    if _DEADLINE.get() is not None:
        yield
        return
    token = _DEADLINE.set(time.monotonic() + LIMIT_S)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def time_left(what: str) -> float:
    """Seconds the answer has left (the whole limit outside ``answer_time``); ``TooSlow``
    naming ``what`` when none is left."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return LIMIT_S
    # guard: regexes-one-answer-regexes-share
    left = deadline - time.monotonic()
    if left <= 0:
        raise TooSlow(what)
    return left
