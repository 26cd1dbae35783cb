"""promptfoo's tests, read as promptfoo reads them: each test's ``vars`` (the question is
the variable ``--question`` names, else ``question``, else a test's only variable), its
``assert`` list (graded by ``asserts``: loopbench/graders/asserts.py), its ``description`` as its id
(unique; a test without one keeps its ``vars.id``, else its number), ``metadata`` (not
read). An assert's value may name the test's variables as promptfoo's templates do,
``{{ name }}``; those are put in.

What would change what promptfoo grades and is not done here is refused in one line
naming the file, the test and the key, never ignored: another key of a test (``options``
but for those naming a grading model, ``threshold``, ``provider``...), an ``options.transform``
or ``postprocess`` (a program run on the output), an assert's ``transform`` or any key but
``type``, ``value``, ``weight`` and ``metric``, a variable holding a list (promptfoo would
run the test once per item) or a file (``file://...``), and a template other than
``{{ name }}``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from loopbench.graders.asserts import TYPES, unsupported_type
from loopbench.graders.promptfoo_checks import js_string
from loopbench.graders.task_models import TaskSetError
from loopbench.tasks.rows import Columns, Row

PROMPTFOO_GRADER = "asserts"
#: A test's keys read here; ``metadata`` is not read, and changes nothing graded.
TEST_KEYS = ("description", "vars", "assert", "metadata")
#: ``options`` keys that change nothing graded here: the model grading promptfoo's
#: model-graded asserts (which are refused) and its prompt, and running tests one by one.
HARMLESS_OPTIONS = ("provider", "rubricPrompt", "runSerially")
ASSERT_KEYS = ("type", "value", "weight", "metric")
#: The column a test's id is read from: its description, else ``vars.id``.
ID_COLUMN = "description"
_VARIABLE = re.compile(r"\{\{\s*([A-Za-z_$][\w$]*)\s*\}\}")
_TEMPLATE = ("{{", "{%", "{#")


class PromptfooTestError(TaskSetError):
    """A promptfoo test holding what would be graded otherwise than promptfoo grades it."""


def promptfoo_rows(rows: Sequence[Row], columns: Columns) -> tuple[list[Row], Columns, str]:
    """promptfoo tests as rows (``vars.NAME``, ``assert`` and the id), the columns they are
    read by, and their grader."""
    read = []
    for row in rows:
        variables = row.values.get("vars", {})
        if not isinstance(variables, dict):
            raise TaskSetError(
                f"{row.where}: column 'vars': expected a mapping of variable names to values, "
                f"got {variables!r}"
            )
        _check_test(row, variables)
        flat = {f"vars.{name}": value for name, value in variables.items()}
        values = {**flat, "assert": _rendered(row, row.values.get("assert"), variables)}
        described = row.values.get("description", variables.get(columns.id))
        if described is not None:
            values[ID_COLUMN] = described
        read.append(replace(row, values=values))
    question = _question_variable(rows, columns)
    id_column = f"vars.{columns.id}" if columns.id_named else ID_COLUMN
    mapped = Columns(f"vars.{question}", "assert", id_column, columns.id_named)
    return read, mapped, PROMPTFOO_GRADER


def _named(row: Row) -> str:
    """The test as a refusal names it: its place, and its description when it has one."""
    described = row.values.get("description")
    return f"{row.where} (test {described!r})" if isinstance(described, str) else row.where


def _check_test(row: Row, variables: Mapping[str, Any]) -> None:
    """Refuses what would be graded otherwise than promptfoo grades it."""
    for key in row.values:
        # guard: promptfoo-test-key-unsupported-refused
        if key not in (*TEST_KEYS, "options"):
            raise PromptfooTestError(
                f"{_named(row)}: key {key!r} is not read here, and promptfoo would act on "
                f"it; a test's keys read are {', '.join(TEST_KEYS)}"
            )
    check_options(_named(row), row.values.get("options"))
    for name, value in variables.items():
        # guard: promptfoo-list-variable-refused
        if isinstance(value, list):
            raise PromptfooTestError(
                f"{_named(row)}: vars.{name} holds a list, for which promptfoo runs the test "
                "once per item; write a test for each"
            )
        # guard: promptfoo-file-variable-refused
        if isinstance(value, str) and value.startswith("file://"):
            raise PromptfooTestError(
                f"{_named(row)}: vars.{name} names a file ({value!r:.60}), which is not read "
                "here; write its text in the test"
            )
    asserts = row.values.get("assert")
    for number, check in enumerate(asserts if isinstance(asserts, list) else [], start=1):
        if not isinstance(check, dict):
            continue  # refused by the asserts grader, which says what an assert is
        for key in check:
            # guard: promptfoo-assert-key-unsupported-refused
            if key not in ASSERT_KEYS:
                raise PromptfooTestError(
                    f"{_named(row)}: assert {number}: key {key!r} is not read here (promptfoo "
                    f"would act on it); an assert's keys read are {', '.join(ASSERT_KEYS)}"
                )
        if "type" in check and check["type"] not in TYPES:
            raise PromptfooTestError(
                f"{_named(row)}: assert {number}: {unsupported_type(check['type'])}"
            )


def check_options(where: str, options: Any) -> None:
    """A test's (or ``defaultTest``'s) ``options``: only those changing nothing graded."""
    if options is None:
        return
    if not isinstance(options, dict):
        raise PromptfooTestError(f"{where}: options: expected a mapping, got {options!r:.60}")
    for key in options:
        # guard: promptfoo-options-transform-refused
        if key not in HARMLESS_OPTIONS:
            raise PromptfooTestError(
                f"{where}: options.{key} is not applied here (a transform of the output, a "
                "prefix to the prompt... would change what is graded); remove it, or grade "
                "this file with promptfoo"
            )


def _rendered(row: Row, asserts: Any, variables: Mapping[str, Any]) -> Any:
    """The asserts, ``{{ name }}`` in a text value replaced by the variable's value."""
    if not isinstance(asserts, list):
        return asserts
    return [
        {**check, "value": _render(row, check["value"], variables)}
        if isinstance(check, dict) and "value" in check
        else check
        for check in asserts
    ]


def _render(row: Row, value: Any, variables: Mapping[str, Any]) -> Any:
    if isinstance(value, list):
        return [_render(row, item, variables) for item in value]
    if not isinstance(value, str) or not any(mark in value for mark in _TEMPLATE):
        return value

    def variable(found: re.Match[str]) -> str:
        name = found.group(1)
        if name not in variables:
            raise PromptfooTestError(
                f"{_named(row)}: an assert's value names {{{{ {name} }}}}, which is not one of "
                "the test's vars"
            )
        return js_string(variables[name])

    rendered = _VARIABLE.sub(variable, value)
    # guard: promptfoo-template-beyond-variables-refused
    if any(mark in _VARIABLE.sub("", value) for mark in _TEMPLATE):
        raise PromptfooTestError(
            f"{_named(row)}: an assert's value {value!r:.60} holds a template beyond "
            "{{ name }} (a filter, a tag), which is not rendered here"
        )
    return rendered


def _question_variable(rows: Sequence[Row], columns: Columns) -> str:
    """The variable holding the question: the one named, ``question``, or the only one."""
    if columns.question != "question":
        return columns.question
    names = {name for row in rows for name in row.values.get("vars") or {}}
    if "question" in names or not names:
        return "question"
    if len(names) == 1:
        return str(names.pop())
    raise TaskSetError(
        f"{rows[0].where}: column 'vars': the tests' variables are {', '.join(sorted(names))}; "
        "name the one holding the question with --question VAR (or [columns] question)"
    )
