"""How much of a reply grading reads: its last ``READ_CHARS`` characters.

An endpoint may send a reply of up to 32 MiB, and grading runs on the run's event loop, so
a grader reading all of a huge reply would hold the run, and Ctrl-C, for as long as it
reads (each grader reads in time at least in proportion to what it reads). A reply's final
answer comes at its end, so a reply longer than ``READ_CHARS`` is graded on its last
``READ_CHARS`` characters, its Answer line among them, and its grade's reason says so
("...; graded on the reply's last 20,000 of 812,345 characters"). What reads a reply whole
(the seed rule's numbers, a reply without an Answer line being its final answer whole)
reads that end only. The graders' canonical readings (what votes compare) and the checks
patterns run on answers read the same end. A grader given as a plain function
(``Experiment(grader=fn)``) gets the whole reply: its time is its author's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from loopbench.graders.base import AnswerCheck, Grader
from loopbench.graders.exact import Grade

#: Characters of a reply grading reads, from its end: more than any final answer needs,
#: few enough that every grader reads them in well under a second
#: (bench/grading_huge_replies.py).
READ_CHARS = 20_000


def read_part(reply: str) -> str:
    """What grading reads of ``reply``: all of it, or its last ``READ_CHARS`` characters."""
    # guard: grading-reads-huge-reply-last
    return reply if len(reply) <= READ_CHARS else reply[-READ_CHARS:]


def noted(grade: Grade, reply: str) -> Grade:
    """``grade`` of ``reply``, its reason saying when only the reply's end was read."""
    # guard: huge-reply-grade-says-only
    if len(reply) <= READ_CHARS:
        return grade
    said = f"graded on the reply's last {READ_CHARS:,} of {len(reply):,} characters"
    return replace(grade, reason=f"{grade.reason}; {said}")


async def grade_read(grader: Grader[Any], task: Any, reply: str) -> Grade:
    """``grader``'s verdict on ``reply``, read as the module says."""
    return noted(await grader.grade(task, read_part(reply)), reply)


def canonical_read(grader: Grader[Any], task: Any, reply: str) -> str:
    """``grader``'s canonical reading of ``reply``, read as the module says."""
    return grader.canonical(task, read_part(reply))


def check_read(check: AnswerCheck | None) -> AnswerCheck | None:
    """``check`` (a pattern's check of an answer), reading answers as the module says."""
    if check is None:
        return None
    run: Callable[[str], Grade] = check
    return lambda reply: noted(run(read_part(reply)), reply)
