"""The ``asserts`` grader: a promptfoo test's asserts, every one of which must hold.

``expected`` is the test's list of asserts, ``[{"type": "contains", "value": "Paris"},
{"type": "is-json"}]``, each judged on the final answer (graders/reading.py, ``answer_line``):
``equals`` (the same text, stripped; a JSON value given: the same JSON), ``contains`` and
``icontains`` (a substring, the second in any case), ``regex`` (the pattern found in it,
as promptfoo's regex passes), ``is-json`` (it parses as JSON; a schema given as the value,
a mapping, is checked as the ``json`` grader checks one: graders/json_schemas.py). Each has
its ``not-`` form. Any other type (``javascript``, ``llm-rubric``, ...), an assert but
``is-json`` without a value, a regex that does not compile and a schema refused by
graders/json_schemas.py are refused when the set loads.

The regexes and schemas of one answer's asserts share its time limit
(graders/answer_time.py): past it the answer is graded wrong, saying which took too long,
whatever ``not-`` the assert has.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from graders import user_regex
from graders.answer_time import GradedWrong, answer_time
from graders.base import Grader, GraderSetup
from graders.exact import Grade
from graders.json_answer import schema_grade
from graders.reading import answer_line
from graders.register import GraderDetails, SelfCase, register_grader
from graders.task_models import TaskBase, TaskSetError


def _equals(said: str, value: Any) -> bool:
    if isinstance(value, str):
        return said.strip() == value.strip()
    try:
        return bool(json.loads(said) == value)
    except ValueError:
        return False


def _is_json(said: str, value: Any) -> bool:
    try:
        json.loads(said)
    except ValueError:
        return False
    return True


CHECKS: dict[str, Callable[[str, Any], bool]] = {
    "equals": _equals,
    "contains": lambda said, value: value in said,
    "icontains": lambda said, value: value.lower() in said.lower(),
    "regex": lambda said, value: user_regex.search(value, said),
    "is-json": _is_json,
}
TYPES = [*CHECKS, *(f"not-{name}" for name in CHECKS)]


class Assert(BaseModel):
    """One promptfoo assert; its weight, metric and the like are not read."""

    model_config = ConfigDict(extra="ignore")
    type: str
    value: Any = None

    @field_validator("type")
    @classmethod
    def _supported(cls, kind: str) -> str:
        if kind not in TYPES:
            raise ValueError(
                f"assert type {kind!r} is not graded here; the types read are {', '.join(TYPES)}"
            )
        return kind

    @model_validator(mode="after")
    def _value_fits(self) -> Assert:
        base = self.type.removeprefix("not-")
        if base == "equals" and "value" not in self.model_fields_set:
            raise ValueError(f"an {self.type} assert needs a value: the text or JSON to equal")
        if base in ("contains", "icontains", "regex") and not isinstance(self.value, str):
            raise ValueError(f"a {self.type} assert's value must be a text")
        if base == "regex":
            try:
                user_regex.compiled(self.value)
            except user_regex.NotARegex as exc:
                raise ValueError(f"regex {self.value!r} does not compile ({exc})") from None
        if base == "is-json" and self.value is not None:
            # guard: asserts-json-schema-written-test
            if not isinstance(self.value, dict):
                raise ValueError(
                    f"an {self.type} assert's value must be a JSON Schema written in the test "
                    f"(a mapping), not {self.value!r:.60}; a schema file is not read"
                )
            from graders import json_schemas  # jsonschema, imported only where a schema is

            # guard: asserts-json-schema-checked-when
            json_schemas.check(self.value)
        return self

    @property
    def said(self) -> str:
        return f"{self.type} {self.value!r}" if self.value is not None else self.type


class AssertsTask(TaskBase):
    """A promptfoo test: its question and its asserts."""

    expected: list[Assert] = Field(min_length=1)


class AssertsGrader(Grader[AssertsTask]):
    async def grade(self, task: AssertsTask, answer: str) -> Grade:
        said = answer_line(answer)
        try:
            with answer_time():
                failed = next((check for check in task.expected if not _holds(check, said)), None)
        # guard: regexes-slow-not-regex-assert
        except GradedWrong as exc:
            return Grade(False, exc.reason)
        if failed is not None:
            return Grade(False, f"fails {failed.said}")
        return Grade(True, f"meets {', '.join(check.said for check in task.expected)}")


def _holds(check: Assert, said: str) -> bool:
    """Whether ``check`` holds on the final answer; ``GradedWrong`` when that cannot be told
    within the answer's time."""
    base = check.type.removeprefix("not-")
    if base == "is-json" and check.value is not None:
        held = schema_grade(said, check.value).correct
    else:
        held = CHECKS[base](said, check.value)
    return held != check.type.startswith("not-")


def asserts_from_target(target: Any, extras: Mapping[str, Any]) -> Any:
    """A test's asserts, as they are: a list of objects each with a type."""
    if not (isinstance(target, list) and all(isinstance(a, dict) for a in target)):
        raise TaskSetError(
            f"expected a list of asserts, each a mapping with a type, not {target!r}"
        )
    return target


@register_grader(
    "asserts",
    AssertsTask,
    "every one of a promptfoo test's asserts (equals, contains, icontains, regex, is-json) "
    "holds on the final answer",
    GraderDetails(
        example='{"id": "t1", "question": "...", "expected": [{"type": "icontains", "value": '
        '"paris"}]}',
        cases=(
            SelfCase([{"type": "icontains", "value": "paris"}], "Answer: Paris", True),
            SelfCase(
                [{"type": "contains", "value": "Paris"}, {"type": "not-contains", "value": "Lyon"}],
                "Answer: Paris or Lyon",
                False,
                "a hedge naming a refused option fails its not-contains",
            ),
            SelfCase([{"type": "equals", "value": "42"}], "I think 42.\nAnswer: 42", True),
            SelfCase([{"type": "regex", "value": r"^\d{4}$"}], "Answer: 1889", True),
            SelfCase([{"type": "is-json"}], 'Answer: {"city": "Rotterdam"}', True),
            SelfCase([{"type": "is-json"}], "Answer: Rotterdam", False, "not JSON"),
        ),
        from_target=asserts_from_target,
    ),
)
def asserts_grader(setup: GraderSetup) -> AssertsGrader:
    if setup.options:
        raise TaskSetError(
            f"grader asserts takes no options, not {', '.join(map(repr, setup.options))}; "
            "the asserts are the tests' own"
        )
    return AssertsGrader()
