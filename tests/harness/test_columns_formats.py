"""Folders written by earlier versions read as columns: a field a line leaves out gets the
record's default, schema 1 is upgraded once per distinct arm and options, and the frame is
``records_frame(read_records(...))``'s with no line read by the model nor the file line by
line. A file the columns cannot read is read line by line, and a warning says so, once.
A carriage return inside a line is a space to both readers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pandas.testing import assert_frame_equal

from loopbench.harness.results import columns
from loopbench.harness.results.columns import read_frame, read_frames
from loopbench.harness.results.columns_sql import FIELDS
from loopbench.harness.results.reading import ResultsError, read_records

from .test_columns import FIXTURE, PRICINGS, assert_same, folder, lines_the_model_reads, run

#: The fields a folder written a week before lacked (bench/records_scale.py --older).
NEWER = ("usage_estimated", "cache_hits", "cost_from_cache_usd", "supersedes", "sampling")
OPTIONAL = [name for name, field in FIELDS.items() if not field.required]
#: Fields the model fills with a default when absent, and refuses null in.
NOT_NULL = [
    name
    for name, field in FIELDS.items()
    if not field.required and not field.nullable and name != "pattern"
]


def without(names: tuple[str, ...] | list[str], line: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in line.items() if key not in names}


@pytest.mark.parametrize("missing", [NEWER, *[(name,) for name in OPTIONAL]], ids="+".join)
def test_a_folder_without_a_field_is_read_as_columns_with_its_default(
    tmp_path: Path, missing: tuple[str, ...]
) -> None:
    older = [without(missing, run(n)) for n in range(24)]
    path = folder(tmp_path, older)
    with lines_the_model_reads(path) as by_model:
        read_frames(path)
    assert by_model == []
    for pricing in PRICINGS:
        assert_same(path, pricing)


def test_a_folder_resumed_by_a_newer_version_mixes_both(tmp_path: Path) -> None:
    lines = [without(NEWER, run(n)) if n < 12 else run(n) for n in range(24)]
    retry = lines[8] | {"run_id": "again", "supersedes": lines[8]["run_id"]}
    path = folder(tmp_path, [*lines, retry | {"status": "answered"}])
    with lines_the_model_reads(path) as by_model:
        _, replaced = read_frames(path)
    assert by_model == [] and len(replaced) == 1
    assert_same(path, PRICINGS[1])


@pytest.mark.parametrize("pattern", [None, ""])
def test_a_pattern_absent_null_or_empty_is_read_from_the_arm(
    tmp_path: Path, pattern: str | None
) -> None:
    path = folder(tmp_path, [run(n) | {"pattern": pattern} for n in range(6)])
    with lines_the_model_reads(path) as by_model:
        frame = read_frame(path)
    assert list(frame["pattern"][:3]) == ["direct", "react_text", "best_of_n"]
    assert by_model == []
    assert_same(path)


@pytest.mark.parametrize("name", NOT_NULL)
def test_null_where_the_model_fills_a_default_is_refused_as_it_refuses_it(
    tmp_path: Path, name: str
) -> None:
    path = folder(tmp_path, [run(0), run(1) | {name: None}])
    with pytest.raises(ResultsError) as expected:
        read_records(path)
    with pytest.raises(ResultsError) as got:
        read_frames(path)
    assert str(got.value) == str(expected.value)
    assert f":2: field {name!r}" in str(got.value)


def schema_1(**changes: Any) -> list[dict[str, Any]]:
    """The 0.1.0 fixture's first line of each pattern, changed."""
    lines, seen = [], set()
    for text in (FIXTURE / "runs.jsonl").read_text(encoding="utf-8").splitlines():
        line = json.loads(text)
        if line["pattern"] not in seen:
            seen.add(line["pattern"])
            lines.append({**line, **changes})
    return lines


@pytest.mark.parametrize(
    "lines",
    [
        schema_1(),
        [without(["pattern"], line) for line in schema_1()],
        [without(["options"], line) for line in schema_1()],  # absent: not upgraded
        schema_1(options={}),  # empty: upgraded
        [line | {"pattern": "", "arm": f"{line['pattern']}:max_steps=6"} for line in schema_1()],
    ],
    ids=["as written", "no pattern", "no options", "empty options", "arm with options"],
)
def test_schema_1_lines_are_upgraded_in_columns_as_records_are(
    tmp_path: Path, lines: list[dict[str, Any]]
) -> None:
    path = folder(tmp_path, [run(0), *lines, run(1)])  # schema 2 around them
    with lines_the_model_reads(path) as by_model:
        read_frames(path)
    assert by_model == []
    assert_same(path, PRICINGS[1])


def test_two_schema_1_arms_of_one_identity_are_one_run_recorded_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = schema_1()[0]
    again = first | {"arm": first["pattern"], "run_id": "again"}  # defaults left out
    path = folder(tmp_path, [first, again])
    with lines_the_model_reads(path) as by_model:
        assert len(read_frame(path)) == 1
    assert by_model == []
    assert (
        "line 2 repeats line 1 (run ('fake', 'react', 'predecessor-years', 0))"
        in capsys.readouterr().err
    )
    assert_same(path)


def bom(path: Path) -> None:
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())


def crlf(path: Path) -> None:
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))


def lone_cr(path: Path) -> None:  # JSON's whitespace, inside a line
    path.write_bytes(path.read_bytes().replace(b', "slice"', b',\r "slice"', 3))


def lone_cr_at_a_line_end(path: Path) -> None:
    path.write_bytes(path.read_bytes().replace(b"}\n", b"}\r\r\n", 2).replace(b"}\n", b"}\r \n", 1))


def too_large(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] = json.dumps(json.loads(lines[1]) | {"tokens_in": 2**70})
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize("damage", [bom, crlf, lone_cr, lone_cr_at_a_line_end])
def test_a_byte_order_mark_and_carriage_returns_are_read_as_columns(
    tmp_path: Path, damage: Any
) -> None:
    path = folder(tmp_path, [run(n) for n in range(6)])
    damage(path / "runs.jsonl")
    with lines_the_model_reads(path) as by_model:
        assert len(read_frame(path)) == 6
    assert len(read_records(path)) == 6 and by_model == []
    assert_same(path)


@pytest.mark.parametrize(
    ("damage", "why"),
    [
        (too_large, "tokens_in 1180591620717411303424 is beyond a 64-bit integer"),
    ],
)
def test_a_file_the_columns_cannot_read_is_read_line_by_line_and_says_so_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: Any, why: str
) -> None:
    path = folder(tmp_path, [run(n) for n in range(6)])
    damage(path / "runs.jsonl")
    assert_same(path)  # reads it three times
    warned = capsys.readouterr().err
    assert warned.count("read line by line") == 1 and why in warned


def test_the_last_line_end_is_found_across_blocks(tmp_path: Path) -> None:
    """The file's end is read back in blocks until a line end: a torn last line of any
    length, cut anywhere, is left out, and the lines before it are read as columns."""
    text = "".join(json.dumps(run(n)) + "\n" for n in range(4))
    long = "x" * (9 << 20)  # past the 8 MB read back at a time
    runs = tmp_path / "runs.jsonl"
    for torn in ('{"arm": "direct", "task_', "", long, '{"arm": "' + long):
        runs.write_text(text + torn, encoding="utf-8")
        with lines_the_model_reads(tmp_path) as by_model:
            assert len(read_frame(tmp_path)) == 4
        assert by_model == []
    runs.write_text("{" * (9 << 20), encoding="utf-8")
    assert read_frame(tmp_path).empty


def test_what_duckdb_cannot_read_and_the_model_can_is_read_line_by_line_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = folder(tmp_path, [run(n) for n in range(6)])
    expected = read_frames(path)
    monkeypatch.setattr(columns, "select", lambda names: "SELECT error('cannot') FROM range(?)")
    got = read_frames(path)
    for frame, frame_expected in zip(got, expected, strict=True):
        assert_frame_equal(frame, frame_expected)
    assert "read line by line, slowly: DuckDB cannot read it (" in capsys.readouterr().err


def test_no_warning_for_a_file_the_columns_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    read_frames(folder(tmp_path, [without(NEWER, run(n)) for n in range(6)]))
    read_frames(FIXTURE)
    assert capsys.readouterr().err == ""
