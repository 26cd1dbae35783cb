"""The json grader: right when the final answer holds a JSON object whose expected fields
are equal (deeply: 1 equals 1.0, true equals only true) and, when the task gives one, that
meets its JSON Schema (checked with the ``jsonschema`` package; loopbench/graders/json_schemas.py
says which schemas are refused when the set loads, and how long checking one may take).

The object is the final answer's (loopbench/graders/reading.py, ``answer_line``) last ```json fence
holding an object, else its last ``{...}`` that parses (not one inside another); two different
objects joined by "or" are a hedge, wrong. When the final answer holds none (an ``Answer:`` line
that opens an object written over several lines), the same is looked for in the whole reply.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping
from itertools import pairwise
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from loopbench.graders.answer_time import GradedWrong, answer_time
from loopbench.graders.base import Grader, GraderSetup, SelfCase
from loopbench.graders.exact import Grade
from loopbench.graders.options import GraderOptions, read_options
from loopbench.graders.reading import answer_line, final
from loopbench.graders.register import GraderDetails, register_grader
from loopbench.graders.task_models import TaskBase

_FENCE = re.compile(r"```(?:json)?\s*\n(.*?)```", re.DOTALL | re.IGNORECASE)
_DECODER = json.JSONDecoder()
#: What joins alternatives: "or" (two objects so joined are a hedge).
_OR = re.compile(r"\s*,?\s*or\s*", re.IGNORECASE)


class JsonExpected(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)
    fields: dict[str, Any] = Field(default_factory=dict)
    """Each field the object must hold, with its value."""
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    """A JSON Schema the object must meet."""

    @model_validator(mode="after")
    def _checks_something(self) -> JsonExpected:
        if not self.fields and self.schema_ is None:
            raise ValueError(
                "expects nothing, so every object would be right; give fields, a schema or "
                'both, e.g. {"fields": {"city": "Rotterdam"}}'
            )
        if self.schema_ is not None:
            from loopbench.graders import json_schemas  # imported only where a schema is

            json_schemas.check(self.schema_)
        return self


class JsonTask(TaskBase):
    expected: JsonExpected


def answer_object(reply: str) -> tuple[dict[str, Any] | None, str]:
    """The JSON object the reply answers with (see the module's rule), or None with why."""
    answer = final(reply)
    # guard: json-another-object-offered-after
    if answer.revision is not None and answer.offers and _objects(answer.revision):
        return None, "hedged: offers another object after it"
    # guard: json-retracted-object-passes-nothing
    if answer.retracts and answer.revision is not None and not _objects(answer.revision):
        return None, "retracted: corrected with no answer after it"
    for text in dict.fromkeys((answer_line(reply), reply)):
        for part in [*reversed(_FENCE.findall(text)), text]:
            found = _objects(part)
            for (_, end, one), (start, _, other) in pairwise(found):
                if _OR.fullmatch(part[end:start]) and not same(one, other):
                    return None, f"hedged: offers {_short(one)} or {_short(other)}"
            if found:
                return found[-1][2], ""
    return None, "holds no JSON object"


def _objects(text: str) -> list[tuple[int, int, dict[str, Any]]]:
    """The JSON objects ``text`` holds, not those inside another, with where each is."""
    found: list[tuple[int, int, dict[str, Any]]] = []
    at = text.find("{")
    while at >= 0:
        try:
            value, end = _DECODER.raw_decode(text, at)
        except (ValueError, RecursionError):
            value, end = None, at + 1
        if isinstance(value, dict):
            found.append((at, end, value))
        at = text.find("{", end if isinstance(value, dict) else at + 1)
    return found


def _short(value: dict[str, Any]) -> str:
    shown = json.dumps(value)
    return shown if len(shown) <= 40 else shown[:37] + "..."


def same(a: Any, b: Any) -> bool:
    """JSON values equal: numbers as numbers (1 is 1.0), booleans only as booleans."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers):
        return a == b
    return type(a) is type(b) and a == b


def schema_grade(answer: str, schema: Mapping[str, Any]) -> Grade:
    """Whether the reply's object (``answer_object``) meets ``schema``, checked when its set
    loaded (loopbench/graders/json_schemas.py); ``GradedWrong`` when that cannot be told in time."""
    found, why = answer_object(answer)
    if found is None:
        return Grade(False, why)
    return _schema_met(found, schema) or Grade(True, "the schema met")


def _schema_met(found: dict[str, Any], schema: Mapping[str, Any]) -> Grade | None:
    """The wrong grade of an object that does not meet ``schema``; None when it does."""
    from loopbench.graders import json_schemas

    problem = json_schemas.problem(schema, found)
    if problem is None:
        return None
    where = "/".join(map(str, problem.absolute_path)) or "(the object)"
    return Grade(False, f"does not meet the schema at {where}: {problem.message}")


class JsonGrader(Grader[JsonTask]):
    async def grade(self, task: JsonTask, answer: str) -> Grade:
        found, why = answer_object(answer)
        if found is None:
            return Grade(False, why)
        expected = task.expected
        wrong = [k for k, v in expected.fields.items() if k not in found or not same(found[k], v)]
        if wrong:
            shown = ", ".join(f"{k}: {json.dumps(found.get(k, '(missing)'))[:40]}" for k in wrong)
            return Grade(False, f"fields differ: {shown}")
        if expected.schema_ is not None:
            try:
                with answer_time():
                    unmet = _schema_met(found, expected.schema_)
            # guard: schemas-json-grader-grades-slow
            except GradedWrong as exc:
                return Grade(False, exc.reason)
            if unmet is not None:
                return unmet
        return Grade(
            True,
            f"{len(expected.fields)} fields equal"
            + (" and the schema met" if expected.schema_ is not None else ""),
        )

    def canonical(self, task: JsonTask, answer: str) -> str:
        """The object, keys sorted; "" when there is none (or a hedge)."""
        found, _ = answer_object(answer)
        return "" if found is None else json.dumps(found, sort_keys=True)


def json_from_target(target: Any, extras: Mapping[str, Any]) -> Any:
    """An object, or its JSON text, with the row's ``schema``."""
    if isinstance(target, str):
        with contextlib.suppress(ValueError):  # not JSON: the model says what it expects
            target = json.loads(target)
    given = {"schema": extras["schema"]} if "schema" in extras else {}
    return {**given, "fields": target}


_CITY = {"fields": {"city": "Rotterdam", "trucks": 79}}
_SCHEMA = {"type": "object", "required": ["city"], "properties": {"trucks": {"type": "integer"}}}
JSON_CASES = (
    SelfCase(_CITY, '{"city": "Rotterdam", "trucks": 79}', True, "the object"),
    SelfCase(
        _CITY, 'Here:\n```json\n{"trucks": 79.0, "city": "Rotterdam"}\n```', True, "fenced, 79.0"
    ),
    SelfCase(_CITY, 'It is {"city": "Rotterdam", "trucks": 79, "more": 1}.', True, "extra fields"),
    SelfCase(_CITY, '{"city": "Gdansk", "trucks": 79}', False, "a field differs"),
    SelfCase(_CITY, '{"city": ["Rotterdam", "Gdansk"], "trucks": 79}', False, "a hedge"),
    SelfCase(_CITY, '{"city": "Rotterdam"}', False, "a field missing"),
    SelfCase(_CITY, "city: Rotterdam, trucks: 79", False, "not JSON"),
    SelfCase({"fields": {"ok": True}}, '{"ok": 1}', False, "1 is not true"),
    SelfCase({"schema": _SCHEMA}, '{"city": "Leeds", "trucks": 3}', True, "the schema met"),
    SelfCase({"schema": _SCHEMA}, '{"city": "Leeds", "trucks": "3"}', False, "the schema not met"),
    SelfCase(
        {"fields": {"city": "Rotterdam"}},
        'The format is {"city": "..."}. My answer: {"city": "Rotterdam"}',
        True,
        "the last object",
    ),
    SelfCase(
        {"fields": {"city": "Rotterdam"}},
        '{"city":"Rotterdam"} or {"city":"Gdansk"}',
        False,
        "two objects joined by or: a hedge",
    ),
)


@register_grader(
    "json",
    JsonTask,
    "the final answer is a JSON object with the expected fields (and schema)",
    GraderDetails(
        example='{"id": "q1", "question": "...", "expected": {"fields": {"city": "Rotterdam"}}}',
        cases=JSON_CASES,
        from_target=json_from_target,
    ),
)
def json_grader(setup: GraderSetup) -> JsonGrader:
    read_options("json", setup.options, GraderOptions)
    return JsonGrader()
