"""For any lines near a record, the columnar reader gives what ``read_records`` gives: the
same frame, or the same error. Examples are derandomised, so CI sees the same ones."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pandas.testing import assert_frame_equal

from loopbench.harness.results.columns import read_frames
from loopbench.harness.results.frames import records_frame
from loopbench.harness.results.reading import ResultsError, read_records

from .test_columns import run

EXAMPLES = settings(
    max_examples=int(os.environ.get("LOOPBENCH_EXAMPLES", "200")),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
VALUE = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats()
    | st.sampled_from(["", "5", "0.5", "yes", "answered", "direct", "1e3"])
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=4,
)
OLD_ARMS = ["react_text:guard=off,max_steps=8,tool=plain", "tot:breadth=2,depth=2", "best_of_n"]


def lenient(value: Any) -> Any:
    """The value as the record model may also take it: a number as text or a float, a
    bool as text."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return float(value)
    if isinstance(value, float):
        return str(value)
    return value


@st.composite
def line(draw: st.DrawFn) -> str:
    """A record of loopbench's, some fields dropped, nulled, written as the model may take
    them or replaced, written compactly or not, with an unknown key or a trailing comma."""
    record = run(draw(st.integers(0, 11)))
    if draw(st.booleans()):
        record |= {"schema_version": 1, "arm": draw(st.sampled_from(OLD_ARMS))}
    for name in draw(st.lists(st.sampled_from(sorted(record)), max_size=2)):
        change = draw(st.sampled_from(["drop", "null", "lenient", "any"]))
        if change == "drop":
            record.pop(name, None)
        else:
            value = {"null": None, "lenient": lenient(record.get(name))}.get(change)
            record[name] = draw(VALUE) if change == "any" else value
    if draw(st.integers(0, 7)) == 0:
        record[draw(st.text(max_size=5))] = draw(VALUE)
    text = json.dumps(record, separators=draw(st.sampled_from([(",", ":"), (", ", ": ")])))
    return text[:-1] + ",}" if draw(st.integers(0, 9)) == 0 else text


def outcome(reader: Any) -> Any:
    try:
        return reader()
    except ResultsError as exc:
        return str(exc)
    except TypeError as exc:  # an older record's upgrade on a mistyped option
        return repr(exc)


@EXAMPLES
@given(st.lists(line(), min_size=1, max_size=4))
def test_the_columns_read_any_lines_as_the_records_do(lines: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "runs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        expected = outcome(lambda: records_frame(read_records(folder)))
        got = outcome(lambda: read_frames(folder)[0])
        if isinstance(expected, str):
            assert got == expected
        else:
            assert not isinstance(got, str), got
            assert_frame_equal(got, expected)


@pytest.mark.parametrize("line", ['{"arm": 1,}', '{"a": 1, "a": 2}', "[1, 2]", "5", '"x"'])
def test_lines_that_are_not_records_are_refused_alike(tmp_path: Path, line: str) -> None:
    (tmp_path / "runs.jsonl").write_text(json.dumps(run(0)) + "\n" + line + "\n")
    with pytest.raises(ResultsError) as expected:
        read_records(tmp_path)
    with pytest.raises(ResultsError) as got:
        read_frames(tmp_path)
    assert str(got.value) == str(expected.value)
