"""Other tools' sample files, read as they are: Inspect's samples and promptfoo's tests.

Inspect: objects with ``input`` (a text, or chat messages: the last user message's text is
the question), ``target`` (a text or a list of texts), optional ``choices`` (then graded by
``choice``, the target a letter; in a file mixing samples with and without choices, by
``choice_or``: choice for those with choices, the set's grader for the others), ``id`` and
``metadata`` (not read). promptfoo: tests with ``vars`` and ``assert``, read by
``loopbench.tasks.promptfoo_tests``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from loopbench.graders.task_models import TaskSetError
from loopbench.tasks.promptfoo_tests import PROMPTFOO_GRADER, promptfoo_rows
from loopbench.tasks.rows import Columns, Row, has_choices

__all__ = ["PROMPTFOO_GRADER", "inspect_rows", "is_inspect", "is_promptfoo", "promptfoo_rows"]

#: The grader each format's rows are graded with unless another is named.
INSPECT_GRADER, INSPECT_CHOICE_GRADER = "em", "choice"
#: The grader of a file mixing samples with choices and without: each graded as its kind asks.
MIXED_GRADER = "choice_or"


def is_promptfoo(row: Row) -> bool:
    return "vars" in row.values or "assert" in row.values


def is_inspect(row: Row, columns: Columns) -> bool:
    return "input" in row.values and columns.question not in row.values


def inspect_rows(rows: Sequence[Row]) -> tuple[list[Row], Columns, str]:
    """Inspect samples as rows, the columns they are read by, and their grader: ``choice``
    when every sample has choices, ``choice_or`` when some have (each sample then graded
    as its kind asks: ``loopbench/graders/choice_or.py``), else ``em``."""
    read = [replace(row, values={**row.values, "input": _input(row)}) for row in rows]
    with_choices = sum(has_choices(row) for row in rows)
    if with_choices == len(rows):
        choices = Columns("input", "target", extras={"choices": "choices"})
        return read, choices, INSPECT_CHOICE_GRADER
    return read, Columns("input", "target"), MIXED_GRADER if with_choices else INSPECT_GRADER


def _input(row: Row) -> Any:
    """An Inspect sample's question: its input text, or its last user message's."""
    given = row.values["input"]
    if not isinstance(given, list):
        return given
    users = [m for m in given if isinstance(m, dict) and m.get("role") == "user"]
    content = users[-1].get("content") if users else None
    if isinstance(content, list):  # content parts: their texts
        content = "\n".join(p["text"] for p in content if isinstance(p, dict) and "text" in p)
    if not isinstance(content, str):
        raise TaskSetError(
            f"{row.where}: column 'input': holds no user message with text; expected a text "
            'or chat messages, e.g. [{"role": "user", "content": "..."}]'
        )
    return content
