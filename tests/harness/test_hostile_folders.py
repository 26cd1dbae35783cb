"""Results folders no release writes, through every command that reads one: each is read,
or refused in one line naming the file and line (exit 2); never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.report.html._scan import traces_of
from loopbench.harness.results.reading import ResultsError, read_records

RECORD = {"run_id": "r0", "arm": "direct", "task_id": "t0", "repeat": 0, "status": "answered"}
DEEP = 100_000


def line(**fields: object) -> bytes:
    return json.dumps({**RECORD, **fields}, separators=(",", ":")).encode() + b"\n"


def folder_with(tmp_path: Path, runs: bytes, traces: bytes | None = None) -> Path:
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "runs.jsonl").write_bytes(line(run_id="ok", task_id="t9") + runs)
    if traces is not None:
        (folder / "traces.jsonl").write_bytes(traces)
    return folder


def commands(folder: Path, tmp_path: Path) -> list[list[str]]:
    return [
        ["table", str(folder)],
        ["failures", str(folder)],
        ["report", str(folder), "-o", str(tmp_path / "r.html")],
        ["export", str(folder), "--format", "csv", "-o", str(tmp_path / "x.csv")],
        ["export", str(folder), "--format", "otlp", "-o", str(tmp_path / "x.json")],
        ["compare", str(folder), str(folder)],
    ]


def run_all(folder: Path, tmp_path: Path) -> list[tuple[int, str]]:
    """Each command's exit and its error line; a traceback fails the test."""
    said = []
    for args in commands(folder, tmp_path):
        result = CliRunner().invoke(main, args)
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            args,
            result.exception,
        )
        assert "Traceback" not in result.output
        errors = [text for text in result.output.splitlines() if text.startswith("Error:")]
        said.append((result.exit_code, errors[0] if errors else ""))
    return said


@pytest.mark.parametrize(
    ("runs", "words"),
    [
        (line(cost_usd=0.5)[:-1].replace(b"0.5", b"NaN") + b"\n", ["runs.jsonl:2", "cost_usd"]),
        (line(answer="ab").replace(b"ab", b"a\xff\xfeb"), ["runs.jsonl:2", "not UTF-8"]),
        (
            line()[:-2] + b',"metrics":' + b"[" * DEEP + b"]" * DEEP + b"}\n",
            ["runs.jsonl:2", "recursion"],
        ),
    ],
    ids=["nan-cost", "invalid-utf8", "deep-metrics"],
)
def test_an_unusable_line_is_refused_in_one_line(tmp_path, runs, words):
    folder = folder_with(tmp_path, runs)
    for code, error in run_all(folder, tmp_path):
        assert code == 2 and all(w in error for w in words), error


def test_a_record_escaping_a_lone_surrogate_is_read_with_it_replaced_and_counted(tmp_path):
    folder = folder_with(tmp_path, line(answer="84 \ud800", error="\udfff", replaced_characters=1))
    assert [code for code, _ in run_all(folder, tmp_path)] == [0] * 6
    (_, record) = read_records(folder)
    assert (record.answer, record.error, record.replaced_characters) == ("84 \ufffd", "\ufffd", 3)


def test_a_truncated_last_line_and_a_huge_error_are_read(tmp_path):
    huge = line(run_id="big", task_id="t1", status="api_error", error="E" * (40 << 20))
    folder = folder_with(tmp_path, huge + line()[:-30])
    assert [code for code, _ in run_all(folder, tmp_path)] == [0] * 6
    assert len(read_records(folder)) == 2
    assert (tmp_path / "r.html").stat().st_size < 4 << 20  # the error shown cut, not whole


@pytest.mark.parametrize(
    "trace",
    [
        b'{"run_id": "ok", "events": ' + b"[" * DEEP + b"]" * DEEP + b"}\n",
        b'{"run_id": "ok", "events": [{"t": NaN, "kind": "x"}, {"t": 0, "kind": "y"]}\n',
        b'{"run_id": "ok", "events": [{"t": 0, "kind": "finish", "step": 1, "answer": "\\ud800"',
    ],
    ids=["deep", "not-json", "cut-short"],
)
def test_a_damaged_trace_is_named_or_read_never_a_traceback(tmp_path, trace):
    folder = folder_with(tmp_path, b"", trace)
    for code, error in run_all(folder, tmp_path):
        assert code == 0 or (code == 2 and "traces.jsonl:1" in error), error


def test_a_trace_escaping_a_lone_surrogate_is_read(tmp_path):
    event = {"t": 0, "kind": "pattern_error", "error": "boom \ud800"}
    folder = folder_with(
        tmp_path, b"", json.dumps({"run_id": "ok", "events": [event]}).encode() + b"\n"
    )
    assert [code for code, _ in run_all(folder, tmp_path)] == [0] * 6


@pytest.mark.parametrize(
    "events",
    [b"[" * DEEP + b"]" * DEEP, b"[{]", b'[{"t": 0, "kind": "request"}]'],
    ids=["deep", "not-json", "not-an-event"],
)
def test_the_reports_trace_scan_names_a_damaged_line(tmp_path, events):
    trace = b'{"run_id": "ok", "events": ' + events + b"}\n"
    folder = folder_with(tmp_path, b"", line().replace(b'"r0"', b'"x"') + trace)
    with pytest.raises(ResultsError, match=r"traces.jsonl:2: damaged trace line"):
        list(traces_of(folder, {"ok"}))
