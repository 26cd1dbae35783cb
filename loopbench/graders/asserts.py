"""The ``asserts`` grader: a promptfoo test's asserts, every one of which must hold.

``expected`` is the test's list of asserts, ``[{"type": "contains", "value": "Paris"},
{"type": "is-json"}]``, each checked as promptfoo checks it (loopbench/graders/promptfoo_checks.py)
on the output: the model's final reply whole, as it came, not stripped and not cut to its
final answer (``reads_reply``; a pattern whose answer is not one reply, a vote, is graded on
its answer). The types: ``equals``, ``contains``, ``icontains``, ``contains-any``,
``contains-all``, ``icontains-any``, ``icontains-all``, ``starts-with``, ``regex``
(JavaScript's, loopbench/graders/js_regex.py) and ``is-json`` (a schema given as the value, a
mapping, is checked as the ``json`` grader checks one: loopbench/graders/json_schemas.py), each also
as ``not-...``. An assert may carry ``weight`` (0: it always holds, as in promptfoo) and
``metric`` (a name, not read). Any other type (``javascript``, ``llm-rubric``, ...) or key
(``transform``), a value the type cannot take, a regex JavaScript refuses and a schema
refused by loopbench/graders/json_schemas.py are refused when the set loads.

The regexes and schemas of one answer's asserts share its time limit
(loopbench/graders/answer_time.py): past it the answer is graded wrong, saying which took too long,
whatever ``not-`` the assert has.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from loopbench.graders import js_regex, user_regex
from loopbench.graders.answer_time import GradedWrong, answer_time
from loopbench.graders.base import Grader, GraderSetup
from loopbench.graders.exact import Grade
from loopbench.graders.promptfoo_checks import CHECKS
from loopbench.graders.register import GraderDetails, SelfCase, register_grader
from loopbench.graders.task_models import TaskBase, TaskSetError

TYPES = [*CHECKS, *(f"not-{name}" for name in CHECKS)]
#: What each type's value is: a text; a text or a number; a list or a comma-separated text.
_TEXT = ("starts-with", "regex")
_TEXT_OR_NUMBER = ("contains", "icontains")
_LISTS = ("contains-any", "contains-all", "icontains-any", "icontains-all")


def unsupported_type(kind: object) -> str:
    """Why an assert type is refused, in promptfoo's terms."""
    return (
        f"assert type {kind!r} is not graded here (it would need a model or code run); "
        f"the types graded are {', '.join(CHECKS)}, each also as not-TYPE"
    )


class Assert(BaseModel):
    """One promptfoo assert: its type, value, weight and metric (a name, not read)."""

    model_config = ConfigDict(extra="forbid")
    type: str
    value: Any = None
    weight: float = 1.0
    metric: str | None = None

    @field_validator("type")
    @classmethod
    def _supported(cls, kind: str) -> str:
        # guard: asserts-unsupported-type-refused
        if kind not in TYPES:
            raise ValueError(unsupported_type(kind))
        return kind

    @model_validator(mode="after")
    def _value_fits(self) -> Assert:
        base = self.type.removeprefix("not-")
        value = self.value
        if base == "equals" and "value" not in self.model_fields_set:
            raise ValueError(f"an {self.type} assert needs a value: the text or JSON to equal")
        if base in _TEXT and not (isinstance(value, str) and value):
            raise ValueError(f"a {self.type} assert's value must be a text")
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if base in _TEXT_OR_NUMBER and not ((isinstance(value, str) and value) or number):
            raise ValueError(f"a {self.type} assert's value must be a text or a number")
        if base in _LISTS and not _list_value(value):
            raise ValueError(
                f"a {self.type} assert's value must be a list of texts or numbers, or a "
                "comma-separated text"
            )
        if base == "regex":
            try:
                js_regex.compiled(value)
            except user_regex.NotARegex as exc:
                raise ValueError(f"regex {value!r} is not JavaScript's ({exc})") from None
        if base == "is-json" and value is not None:
            # guard: asserts-json-schema-written-test
            if not isinstance(value, dict):
                raise ValueError(
                    f"an {self.type} assert's value must be a JSON Schema written in the test "
                    f"(a mapping), not {value!r:.60}; a schema file is not read"
                )
            from loopbench.graders import (
                json_schemas,  # jsonschema, imported only where a schema is
            )

            # guard: asserts-json-schema-checked-when
            json_schemas.check(value)
        # guard: asserts-file-value-refused
        if isinstance(value, str) and value.startswith("file://"):
            raise ValueError(f"{self.type} value {value!r}: a file named as a value is not read")
        return self

    @property
    def said(self) -> str:
        return f"{self.type} {self.value!r}" if self.value is not None else self.type


def _list_value(value: Any) -> bool:
    if isinstance(value, str):
        return bool(value)
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(v, str | int | float) for v in value)
    )


class AssertsTask(TaskBase):
    """A promptfoo test: its question and its asserts."""

    expected: list[Assert] = Field(min_length=1)


class AssertsGrader(Grader[AssertsTask]):
    reads_reply = True

    async def grade(self, task: AssertsTask, answer: str) -> Grade:
        try:
            with answer_time():
                failed = next((check for check in task.expected if not _holds(check, answer)), None)
        # guard: regexes-slow-not-regex-assert
        except GradedWrong as exc:
            return Grade(False, exc.reason)
        if failed is not None:
            return Grade(False, f"fails {failed.said}")
        return Grade(True, f"meets {', '.join(check.said for check in task.expected)}")


def _holds(check: Assert, output: str) -> bool:
    """Whether ``check`` holds on the output; ``GradedWrong`` when that cannot be told
    within the answer's time."""
    # guard: asserts-weight-zero-always-holds
    if check.weight == 0:
        return True
    held = CHECKS[check.type.removeprefix("not-")](output, check.value)
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
    "every one of a promptfoo test's asserts (equals, contains, icontains, regex, is-json, "
    "...) holds on the whole reply, as promptfoo checks them",
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
            SelfCase([{"type": "equals", "value": "42"}], "42", True),
            SelfCase(
                [{"type": "equals", "value": "42"}],
                "I think 42.\nAnswer: 42",
                False,
                "equals reads the whole output, as promptfoo does",
            ),
            SelfCase([{"type": "equals", "value": "Paris"}], " Paris\n", False, "not stripped"),
            SelfCase([{"type": "regex", "value": r"^\d{4}$"}], "1889", True),
            SelfCase([{"type": "regex", "value": r"^\d{4}$"}], "1889\n", False, "$ is the end"),
            SelfCase([{"type": "is-json"}], ' {"city": "Rotterdam"}\n', True),
            SelfCase([{"type": "is-json"}], "Answer: Rotterdam", False, "not JSON"),
            SelfCase([{"type": "contains-any", "value": "Lyon, Paris"}], "Paris", True),
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
