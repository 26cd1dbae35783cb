"""No input makes a reader raise anything but its documented error.

The arm-spec parser raises ArmError or UnknownPattern, the task loader TaskSetError and
the records reader ResultsError; the grader's number reader never raises and returns
finite numbers. Examples are derandomised, so CI sees the same ones every time.
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopbench.graders.exact import grade, numbers_in
from loopbench.harness.arms import ArmError, expand_grid, parse_arm, parse_arms
from loopbench.harness.patterns.catalog import registered
from loopbench.harness.patterns.registry import UnknownPattern
from loopbench.harness.results.reading import ResultsError, read_records
from loopbench.harness.results.records import RunRecord
from loopbench.tasks.loading import load_taskset
from loopbench.tasks.taskset import TaskSetError

BOUNDED = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def refused_in_one_line(call: Callable[[], object], *documented: type[Exception]) -> None:
    """``call`` returns, or raises a documented error whose message is one line."""
    try:
        call()
    except documented as exc:
        assert str(exc).strip() and "\n" not in str(exc), str(exc)


PATTERNS = sorted(registered())
OPTIONS = sorted({f for info in registered().values() for f in info.options_model.model_fields})
VALUES = ["on", "off", "true", "0", "1", "-1", "7", "1e999", "nan", "plain", "improved", "", " "]


def either(words: list[str]) -> st.SearchStrategy[str]:
    """A word from the list (so the parser gets past its first checks), or any text."""
    return st.one_of(st.sampled_from(words), st.text(max_size=12))


@st.composite
def arm_specs(draw: st.DrawFn) -> str:
    names = "|".join(draw(st.lists(either(PATTERNS), min_size=1, max_size=3)))
    pairs = draw(
        st.lists(
            st.tuples(
                either(OPTIONS),
                st.sampled_from(["=", "", "=="]),
                st.lists(either(VALUES), min_size=1, max_size=3).map("|".join),
            ).map("".join),
            max_size=4,
        )
    )
    return names + draw(st.sampled_from([":", "", "::"])) + ",".join(pairs)


SPECS = st.one_of(arm_specs(), st.text(max_size=60))


@BOUNDED
@given(SPECS)
def test_parse_arm_raises_only_its_errors(text: str) -> None:
    refused_in_one_line(lambda: parse_arm(text), ArmError, UnknownPattern)


@BOUNDED
@given(st.lists(SPECS, max_size=3))
def test_parse_arms_raises_only_its_errors(texts: list[str]) -> None:
    refused_in_one_line(lambda: parse_arms(texts), ArmError, UnknownPattern)


@BOUNDED
@given(SPECS)
def test_expand_grid_gives_arms_or_an_arm_error(text: str) -> None:
    try:
        arms = expand_grid(text)
    except ArmError:
        return
    assert arms and all(isinstance(a, str) for a in arms)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=8,
)


def near(good: dict[str, Any], fields: dict[str, st.SearchStrategy[Any]]) -> Any:
    """The good object with some fields replaced, dropped or added."""
    return st.fixed_dictionaries(
        {}, optional={k: st.one_of(st.just(v), JSON) for k, v in good.items()} | fields
    )


EXPECTED = near(
    {"numbers": [84], "entities": ["Rotterdam"], "tolerance": 0.5},
    {"numbers": st.lists(st.floats() | st.integers() | st.text(max_size=3), max_size=3)},
)
TASK = near(
    {"id": "q1", "question": "How far?", "slice": "public"},
    {"expected": EXPECTED | JSON, "id": st.text(max_size=3), "extra": JSON},
)
TASK_LINES = st.lists(st.one_of(TASK.map(json.dumps), st.text(max_size=20)), max_size=4).map(
    lambda lines: "\n".join(lines)
)
CONFIG_LINES = st.lists(
    st.tuples(
        either(["name", "description", "tools", "grader", "[x]"]),
        st.sampled_from([" = ", "=", " "]),
        either(['"mine"', '["lookup", "calc"]', '["calc"]', '"exact"', "3", "[1]", "true"]),
    ).map("".join),
    max_size=4,
).map("\n".join)
BOOK = near(
    {"entries": {"A": "a", "B": "b"}, "related": {"A": ["B"]}, "naming": "by name"},
    {"entries": st.dictionaries(st.text(max_size=3), JSON), "related": JSON},
)


def content(structured: st.SearchStrategy[str]) -> st.SearchStrategy[bytes]:
    """Mostly text shaped like the file (a BOM or not), else any text or any bytes."""
    shaped = st.tuples(st.sampled_from(["", "\ufeff"]), structured).map("".join)
    return st.one_of(shaped, shaped, st.text(max_size=40)).map(str.encode) | st.binary(max_size=40)


GOOD_FILES = {
    "taskset.toml": b'name = "mine"\ntools = ["lookup", "calc"]\n',
    "tasks.jsonl": b'{"id": "q1", "question": "How far?", "expected": {"numbers": [84]}}\n',
    "encyclopedia.json": b'{"entries": {"A": "a", "B": "b"}, "related": {"A": ["B"]}}',
}


def load_with(name: str, data: bytes) -> None:
    """Load a task set whose files are good but for ``name``, which holds ``data``."""
    with tempfile.TemporaryDirectory() as folder:
        for file, good in GOOD_FILES.items():
            (Path(folder) / file).write_bytes(data if file == name else good)
        refused_in_one_line(lambda: load_taskset(Path(folder)), TaskSetError)


@BOUNDED
@given(content(CONFIG_LINES))
def test_any_taskset_toml_raises_only_task_set_errors(data: bytes) -> None:
    load_with("taskset.toml", data)


@BOUNDED
@given(content(TASK_LINES))
def test_any_tasks_jsonl_raises_only_task_set_errors(data: bytes) -> None:
    load_with("tasks.jsonl", data)


@BOUNDED
@given(content(BOOK.map(json.dumps)))
def test_any_encyclopedia_json_raises_only_task_set_errors(data: bytes) -> None:
    load_with("encyclopedia.json", data)


NUMBERISH = st.text(
    alphabet=st.sampled_from("0123456789,.-\u2212 eE+٣𝟙") | st.characters(), max_size=40
)
ANSWERS = st.one_of(
    st.text(max_size=60),
    NUMBERISH,
    st.lists(
        st.sampled_from(["twenty-one", "forty", "Zero", "ninety-nine", "-3", "2,954.5", "9" * 400])
        | st.text(max_size=6),
        max_size=6,
    ).map(" ".join),
)


@BOUNDED
@given(ANSWERS)
def test_numbers_in_never_raises_and_gives_finite_floats(text: str) -> None:
    assert all(math.isfinite(n) for n in numbers_in(text))


@BOUNDED
@given(
    ANSWERS,
    st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=3),
    st.lists(st.text(max_size=8), max_size=2),
    st.none() | st.floats(min_value=0, allow_infinity=False),
)
def test_grade_never_raises(
    answer: str, numbers: list[float], entities: list[str], tolerance: float | None
) -> None:
    verdict = grade(answer, numbers, entities, tolerance)
    assert isinstance(verdict.correct, bool) and "\n" not in verdict.reason


RECORD = json.loads(
    RunRecord(arm="direct", task_id="t1", repeat=0, status="answered").model_dump_json()
)
RECORDS = near(RECORD, {"repeat": JSON, "status": JSON, "schema_version": st.integers()})
RUN_LINES = st.lists(st.one_of(RECORDS.map(json.dumps), st.text(max_size=20)), max_size=4).map(
    lambda lines: "\n".join(lines)
)


@BOUNDED
@given(content(RUN_LINES))
def test_read_records_raises_only_results_errors(runs: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "runs.jsonl").write_bytes(runs)
        refused_in_one_line(lambda: read_records(folder), ResultsError)
