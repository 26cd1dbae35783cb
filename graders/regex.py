"""The regex grader: right when the whole final answer (graders/final_answer.py, stripped)
matches the task's regular expression (Python's ``re.fullmatch``), matched under the
answer's time limit (graders/user_regex.py): a match that takes longer is graded wrong,
saying so."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

from graders import user_regex
from graders.answer_keys import Filled
from graders.answer_time import GradedWrong, answer_time
from graders.base import Grader, GraderSetup, SelfCase
from graders.exact import Grade
from graders.options import GraderOptions, read_options
from graders.reading import answer_text
from graders.squad import phrase_in
from graders.task_models import TaskBase


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
        # The sentence as written, or the phrase it answers with ("It was not X but Y").
        texts = [said, said.removesuffix(".").strip(), phrase_in(said, []).value or ""]
        try:
            with answer_time():
                matches = any(
                    user_regex.fullmatch(expected.pattern, text, expected.ignore_case)
                    for text in dict.fromkeys(texts)
                )
        except GradedWrong as exc:
            return Grade(False, exc.reason)
        if matches:
            return Grade(True, f"{said[:80]!r} matches {task.expected.pattern!r}")
        return Grade(False, f"{said[:80]!r} does not match {task.expected.pattern!r}")


def regex_grader(setup: GraderSetup) -> RegexGrader:
    read_options("regex", setup.options, GraderOptions)
    return RegexGrader()


def regex_from_target(target: Any, extras: Mapping[str, Any]) -> Any:
    given = {"ignore_case": extras["ignore_case"]} if "ignore_case" in extras else {}
    return {**given, "pattern": target}


_DATE = r"\d{4}-\d{2}-\d{2}"
REGEX_CASES = (
    SelfCase(_DATE, "2024-03-01", True, "a full match"),
    SelfCase(_DATE, "Working...\nAnswer: 2024-03-01", True, "the Answer line"),
    SelfCase(_DATE, "It was 2024-03-01.", False, "a match inside the answer is not whole"),
    SelfCase(_DATE, "2024-03-01 or 2024-03-02", False, "two dates: not a full match"),
    SelfCase({"pattern": "yes", "ignore_case": True}, "YES", True, "ignore_case"),
    SelfCase("yes", "YES", False, "case counts by default"),
)
