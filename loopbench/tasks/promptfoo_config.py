"""A promptfoo config file (``promptfooconfig.yaml``) given as the task set: read for its
``tests``, a list written in it, a path (``file://`` or not; relative to the config's
folder) to a YAML, JSON or JSONL file of tests, or a list mixing both. Its
``defaultTest`` (``vars`` and ``assert``) is added to every test as promptfoo adds it.
Its ``prompts`` and ``providers`` are promptfoo's: loopbench sends each test's question as
its arms ask (docs/tasksets.md), to the endpoint ``run`` is given.

Only local files are read: a URL, a glob and a CSV of tests (promptfoo's ``__expected``
columns) are refused in one line, as is ``scenarios`` (which multiplies the tests).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from loopbench.graders.task_models import TaskSetError
from loopbench.tasks.promptfoo_tests import PromptfooTestError, check_options
from loopbench.tasks.rows import Row

TEST_FILE_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl")
_READING_TESTS = ContextVar("_READING_TESTS", default=False)


def config_rows(path: Path, config: dict[str, Any], read: Callable[[Path], list[Row]]) -> list[Row]:
    """The tests of the config ``path`` holds (``read`` reads a file of tests), each
    with its ``defaultTest``."""
    # guard: promptfoo-config-names-config-refused
    if _READING_TESTS.get():
        raise TaskSetError(
            f"{path}: a promptfoo config, named as a file of tests; name the tests file"
        )
    # guard: promptfoo-config-without-tests-hint
    if "tests" not in config:
        raise TaskSetError(
            f"{path}: holds a mapping without tests (keys: {', '.join(map(str, config))[:80]}); "
            "expected a list of tests, or a promptfoo config with tests: (give the tests file "
            "itself, or add tests: to the config)"
        )
    # guard: promptfoo-config-scenarios-refused
    if "scenarios" in config:
        raise PromptfooTestError(
            f"{path}: scenarios are not read here (they multiply the tests); write the tests out"
        )
    default = _default_test(path, config.get("defaultTest"))
    given = config["tests"]
    items = given if isinstance(given, list) else [given]
    rows: list[Row] = []
    for number, item in enumerate(items, start=1):
        if isinstance(item, str):
            with _reading_tests():
                rows += read(_tests_file(path, item))
        elif isinstance(item, dict):
            rows.append(Row(f"{path}: tests item {number}", len(rows) + 1, item))
        else:
            raise TaskSetError(
                f"{path}: tests item {number}: holds a {type(item).__name__}; expected a test "
                "(a mapping) or the path of a file of tests"
            )
    return [
        Row(row.where, number, _with_default(dict(row.values), default))
        for number, row in enumerate(rows, start=1)
    ]


@contextmanager
def _reading_tests() -> Iterator[None]:
    token = _READING_TESTS.set(True)
    try:
        yield
    finally:
        _READING_TESTS.reset(token)


def _tests_file(config: Path, named: str) -> Path:
    """The file of tests a config names, relative to its folder; only a local file."""
    text = named.removeprefix("file://")
    # guard: promptfoo-config-url-refused
    if "://" in text or any(mark in text for mark in "*?["):
        raise TaskSetError(
            f"{config}: tests {named!r}: only a local file of tests is read (not a URL or a "
            "glob); name each file"
        )
    file = config.parent / text
    # guard: promptfoo-config-csv-tests-refused
    if file.suffix.lower() not in TEST_FILE_SUFFIXES:
        raise TaskSetError(
            f"{config}: tests {named!r}: expected a YAML, JSON or JSONL file of tests (a CSV "
            "of promptfoo's __expected columns is not read)"
        )
    return file


def _default_test(config: Path, default: Any) -> dict[str, Any]:
    if default is None:
        return {}
    if not isinstance(default, dict):
        raise TaskSetError(
            f"{config}: defaultTest: expected a mapping written in the config (vars, assert), "
            f"not {default!r:.60}"
        )
    check_options(f"{config}: defaultTest", default.get("options"))
    return default


def _with_default(test: dict[str, Any], default: dict[str, Any]) -> dict[str, Any]:
    """``test`` with ``default`` added as promptfoo adds ``defaultTest``: its variables
    under the test's own, its asserts before the test's, its other keys where the test has
    none."""
    if not default:
        return test
    merged = {**default, **test}
    variables, own = default.get("vars") or {}, test.get("vars") or {}
    if isinstance(variables, dict) and isinstance(own, dict) and (variables or own):
        merged["vars"] = {**variables, **own}
    asserts, listed = default.get("assert") or [], test.get("assert") or []
    if isinstance(asserts, list) and isinstance(listed, list) and (asserts or listed):
        merged["assert"] = [*asserts, *listed]
    return merged
