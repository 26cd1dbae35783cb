"""The regex grader: right when the answer the reply commits to matches the task's regular
expression whole (Python's ``re.fullmatch``): the committed sentence (loopbench/graders/reading.py)
without its final stop, or the phrase it answers with (loopbench/graders/phrases.py: "It was not X
but Y" is Y; "The wall fell on 1989-11-09" is its date). Matched under the answer's time
limit (loopbench/graders/user_regex.py): a match that takes longer is graded wrong, saying so."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from loopbench.graders import user_regex
from loopbench.graders.answer_keys import Filled
from loopbench.graders.answer_time import GradedWrong, answer_time
from loopbench.graders.base import Grader, GraderSetup, SelfCase
from loopbench.graders.exact import Grade
from loopbench.graders.options import GraderOptions, read_options
from loopbench.graders.phrases import phrase_in
from loopbench.graders.reading import answer_text
from loopbench.graders.register import GraderDetails, register_grader
from loopbench.graders.task_models import TaskBase


class RegexExpected(BaseModel):
    """A pattern, written alone or with ``ignore_case``; one that does not compile is
    refused when the set loads."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    pattern: Filled
    ignore_case: bool = False

    @model_validator(mode="before")
    @classmethod
    def _bare_pattern(cls, data: Any) -> Any:
        return {"pattern": data} if isinstance(data, str) else data

    @model_validator(mode="after")
    def _compiles(self) -> RegexExpected:
        try:
            user_regex.compiled(self.pattern, self.ignore_case)
        except user_regex.NotARegex as exc:
            raise ValueError(
                f"pattern {self.pattern!r} is not a regular expression ({exc})"
            ) from None
        return self


class RegexTask(TaskBase):
    expected: RegexExpected


class RegexGrader(Grader[RegexTask]):
    async def grade(self, task: RegexTask, answer: str) -> Grade:
        found = answer_text(answer)
        if found.value is None:
            return Grade(False, found.why)
        expected = task.expected
        said = found.value
        texts = [said, said.removesuffix(".").strip(), *_phrases(said)]
        try:
            with answer_time():
                matches = any(
                    user_regex.fullmatch(expected.pattern, text, expected.ignore_case)
                    for text in dict.fromkeys(texts)
                )
        # guard: regexes-regex-grader-grades-slow
        except GradedWrong as exc:
            return Grade(False, exc.reason)
        if matches:
            return Grade(True, f"{said[:80]!r} matches {task.expected.pattern!r}")
        return Grade(False, f"{said[:80]!r} does not match {task.expected.pattern!r}")


#: Where the answer of a sentence starts: after its verb or preposition ("The wall fell on
#: 1989-11-09").
_LAST_WORD = re.compile(r"\b(?:is|was|are|were|be|as|on|in|at|to)\s+|:\s+", re.IGNORECASE)


def _phrases(sentence: str) -> list[str]:
    """The phrase a sentence answers with, when it is more than the sentence less its end
    marks ("It was not X but Y" is Y; "The wall fell on 1989-11-09" is 1989-11-09); none
    from a sentence offering alternatives."""
    bare = sentence.strip(" .,;:!-")
    phrase = phrase_in(sentence, []).value
    if phrase is None or " or " in f" {bare} ":
        return []
    found = [] if phrase == bare else [phrase]
    ends = [m.end() for m in _LAST_WORD.finditer(phrase)]
    last = phrase[ends[-1] :] if ends else phrase
    return found + ([last] if last and last != phrase else [])


def regex_from_target(target: Any, extras: Mapping[str, Any]) -> Any:
    given = {"ignore_case": extras["ignore_case"]} if "ignore_case" in extras else {}
    return {**given, "pattern": target}


_DATE = r"\d{4}-\d{2}-\d{2}"
REGEX_CASES = (
    SelfCase(_DATE, "2024-03-01", True, "a full match"),
    SelfCase(_DATE, "Working...\nAnswer: 2024-03-01", True, "the Answer line"),
    SelfCase(_DATE, "It was 2024-03-01.", True, "a lead-in is not part of the answer"),
    SelfCase(_DATE, "2024-03-01 or 2024-03-02", False, "two dates: not a full match"),
    SelfCase({"pattern": "yes", "ignore_case": True}, "YES", True, "ignore_case"),
    SelfCase("yes", "YES", False, "case counts by default"),
)


@register_grader(
    "regex",
    RegexTask,
    "the whole final answer matches the expected regular expression",
    GraderDetails(
        example='{"id": "q1", "question": "...", "expected": "[0-9]{4}-[0-9]{2}-[0-9]{2}"}',
        cases=REGEX_CASES,
        from_target=regex_from_target,
    ),
)
def regex_grader(setup: GraderSetup) -> RegexGrader:
    read_options("regex", setup.options, GraderOptions)
    return RegexGrader()
