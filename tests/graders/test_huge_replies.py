"""Huge replies (an endpoint may send 32 MiB): grading reads a reply's last ``READ_CHARS``
characters (loopbench/graders/answer_size.py), says so in the reason, and every grader and answer
reader finishes in time proportional to what it reads. Bounds are generous (a hang, not a
speed, is what they catch); bench/grading_huge_replies.py measures."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

import loopbench.graders.asserts  # noqa: F401  (registers the asserts grader)
from loopbench.graders.answer_keys import Expected
from loopbench.graders.answer_size import READ_CHARS, check_read, grade_read, read_part
from loopbench.graders.base import Grader, GraderSetup
from loopbench.graders.exact import Grade
from loopbench.graders.hedges import strict_grade
from loopbench.graders.registry import GRADERS
from loopbench.graders.selftest import as_task, grade_one
from loopbench.graders.stated_numbers import stated_number
from loopbench.harness.grading import Grading
from loopbench.harness.patterns.self_consistency import reading_of
from loopbench.tasks.loading import load_taskset

#: Each grader's task, as bench/grading_huge_replies.py grades it.
EXPECTED: dict[str, Any] = {
    "exact": {"numbers": [79], "entities": ["Rotterdam"], "distractors": ["Gdansk", "Porto"]},
    "number": 18,
    "choice": {"choices": ["Paris", "Lyon", "Nice", "Lille"], "answer": "B"},
    "label": {"label": "positive", "labels": ["positive", "negative", "neutral"]},
    "em": ["Denver Broncos", "The Broncos"],
    "f1": ["Denver Broncos", "The Broncos"],
    "json": {"fields": {"city": "Rotterdam"}},
    "regex": r"\d{4}-\d{2}-\d{2}",
    "game24": {"numbers": [4, 9, 10, 13]},
    "asserts": [{"type": "regex", "value": r"\d+$"}, {"type": "is-json"}],
}
#: Shapes a huge reply takes: one long line, many lines, numbers, option letters, brackets,
#: braces, "=" (the number grader's worked answers), many Answer lines.
UNITS = [
    "the quick brown fox is not Lyon, ",
    "Step: the fox is not A or 17 = 9 + 8.\n",
    "1, 23 or 4,567 - ",
    "A B C D (A) or ",
    "((((((((((",
    '{"a": {',
    "1 = 2 = ",
    "Answer: the answer is 17 or B\n",
    "\\boxed{1} ",
    "B Lyon ",
    "((((+++++",
    "1 is 2: ",
]
MIB = 1 << 20


class Recording(Grader[Any]):
    """Says right, and keeps the longest answer it was given."""

    def __init__(self) -> None:
        self.longest = 0

    async def grade(self, task: Any, answer: str) -> Grade:
        self.longest = max(self.longest, len(answer))
        return Grade(True, "right")

    def canonical(self, task: Any, answer: str) -> str:
        self.longest = max(self.longest, len(answer))
        return answer[:10]


def test_grading_reads_a_huge_replys_end_and_says_so():
    reply = "x" * (3 * MIB) + "\nAnswer: 18"
    grader = Recording()
    verdict = asyncio.run(grade_read(grader, None, reply))
    assert grader.longest == READ_CHARS and read_part(reply).endswith("Answer: 18")
    assert verdict.correct
    assert (
        verdict.reason == f"right; graded on the reply's last 20,000 of {len(reply):,} characters"
    )
    small = asyncio.run(grade_read(grader, None, "Answer: 18"))
    assert small.reason == "right"


def test_a_patterns_check_of_an_answer_reads_its_end_too():
    given: list[int] = []

    def check(answer: str) -> Grade:
        given.append(len(answer))
        return Grade(False, "no")

    bounded = check_read(check)
    assert bounded is not None and check_read(None) is None
    assert "graded on the reply's last" in bounded("y" * MIB).reason
    assert given == [READ_CHARS]


def test_a_run_grades_a_huge_reply_by_its_end_and_a_plain_function_gets_it_whole():
    depot = load_taskset("depot")
    task = next(t for t in depot.tasks if t.id == "most-trucks")
    reply = "The depots... " * (MIB // 14) + "\nAnswer: Hamburg, 59 more than Bilbao"
    verdict = asyncio.run(Grading(depot).grade(task, reply))
    assert verdict.correct and "graded on the reply's last 20,000" in verdict.reason
    numbers = "59 " * (MIB // 3)  # no Answer line: the final answer is the reply whole
    assert len(Grading(depot).canonical(task)(numbers)) < 5 * READ_CHARS  # not 2 MB of them
    seen: list[int] = []
    whole = Grading(depot, function=lambda _task, answer: seen.append(len(answer)) or True)
    assert asyncio.run(whole.grade(task, reply)).correct and seen == [len(reply)]


def test_self_consistencys_vote_with_no_grader_reads_an_answers_end():
    read = reading_of(type("Context", (), {"canonical": None})())  # type: ignore[arg-type]
    numbers, _ = read("7 " * MIB + "18")
    assert len(numbers) == READ_CHARS // 2 and numbers[-1] == 18


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_grader_grades_huge_replies_of_every_shape_without_a_hang(name):
    info = GRADERS.lookup(name)
    task = as_task(info, EXPECTED[name])
    grader = info.build(GraderSetup(Path.cwd(), tasks=(task,)))
    start = time.monotonic()
    for unit in UNITS:
        reply = unit * (MIB // len(unit))
        verdict = asyncio.run(grade_read(grader, task, reply))
        assert "graded on the reply's last" in verdict.reason
        grader.canonical(task, read_part(reply))
    assert time.monotonic() - start < 30


def test_a_huge_replys_answer_line_still_decides_its_verdict():
    reply = "Working: 17 or 19, not 18.\n" * (MIB // 27) + "Answer: 18"
    verdict = grade_one(GRADERS.lookup("number"), as_task(GRADERS.lookup("number"), 18), reply, {})
    assert verdict.correct and verdict.reason.startswith("final number 18 matches; graded on")


@pytest.mark.parametrize("unit", ["1 = 2 = ", "1, 2, 3 not 4 ", "a " * 40 + "5 isn't it "])
def test_the_number_grader_reads_a_long_text_in_linear_time(unit):
    # Reading each number's clause from the text's start took minutes on 200,000 characters.
    text = unit * (200_000 // len(unit))
    start = time.monotonic()
    stated_number(text)
    assert time.monotonic() - start < 30


@pytest.mark.parametrize("unit", ["1, 23 or 4,567 - ", "not Rotterdam or ", "a, b or "])
def test_finding_an_offered_name_in_a_long_list_takes_linear_time(unit):
    # Copying the list so far at each item took minutes on 200,000 characters.
    text = unit * (200_000 // len(unit)) + "Rotterdam or Antwerp"
    start = time.monotonic()
    assert not strict_grade(text, Expected(entities=["Rotterdam"])).correct
    assert time.monotonic() - start < 30
