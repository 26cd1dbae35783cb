"""The columnar reader gives the frame ``records_frame(read_records(...))`` gives, and the
same file:line error for a bad line. Older folders: ``test_columns_formats.py``."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import duckdb
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal
from pydantic import Field
from pydantic.fields import FieldInfo

from loopbench.harness.results import columns_sql
from loopbench.harness.results.columns import UNREAD, read_frame, read_frames
from loopbench.harness.results.frames import Pricing, records_frame
from loopbench.harness.results.prices import PriceError, load_prices
from loopbench.harness.results.reading import ResultsError, read_records
from loopbench.harness.results.records import RunRecord
from loopbench.harness.results.statuses import STATUSES

FIXTURE = Path(__file__).parents[1] / "fixtures" / "results-0.1.0"
PRICINGS = [None, Pricing(load_prices()), Pricing(load_prices(), "gpt-4o")]


def run(n: int, **fields: Any) -> dict[str, Any]:
    """A record as the writer lays it out, varied by ``n``."""
    status = STATUSES[n % len(STATUSES)]
    made = RunRecord(
        run_id=f"r{n}",
        experiment_id="e1",
        arm=["direct", "react_text:guard=on", "best_of_n"][n % 3],
        options=[{}, {"guard": True, "max_output_tokens": None}, {"n": 3, "t": 0.7}][n % 3],
        task_set="depot",
        task_id=f"task-{n % 4}",
        task_fingerprint="ab12",
        slice=["public", None][n % 2],
        repeat=n // 12,
        model=["gpt-5-mini", "unpriced-model"][n % 2],
        status=status,
        answer='84 «é»\n"quoted"' if status == "answered" else None,
        correct=[True, False, None][n % 3],
        grade_reason=f"reason {n}",
        turns=n % 5,
        tool_calls=n % 3,
        tokens_in=100 + n,
        tokens_out=10 + n,
        tokens_cached=n % 7,
        usage_missing=n % 2,
        first_correct=[None, True, False][n % 3],
        metrics=[{}, {"judged": 2.0, "judged_correct": 1.0}, {"agreement": 0.6}][n % 3],
        cost_usd=[None, 0.00012, 1e-7][n % 3],
        cache_hits=n % 2,
        cost_from_cache_usd=0.5 if n % 5 == 0 else None,
        latency_s=n / 3,
        error="HTTP 503" if status == "api_error" else None,
        started_at=f"2026-12-01T00:00:{n % 60:02d}+00:00",
        loopbench_version="0.2.0",
    )
    return json.loads(made.model_dump_json()) | fields


def folder(tmp_path: Path, lines: list[dict[str, Any] | str], end: str = "\n") -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    (tmp_path / "runs.jsonl").write_text(text + end, encoding="utf-8")
    return tmp_path


def assert_same(path: Path, pricing: Pricing | None = None) -> None:
    runs, replaced = read_frames(path, pricing)
    assert_frame_equal(runs, records_frame(read_records(path), pricing))
    assert_frame_equal(replaced, records_frame(read_records(path, superseded=True), pricing))
    assert_frame_equal(read_frame(path, pricing, superseded=True), replaced)


@contextmanager
def lines_the_model_reads(path: Path) -> Iterator[list[str]]:
    """The lines of ``path``'s runs.jsonl that the record model reads one by one within the
    block: those the columns cannot vouch for, or every line when the file is read line by
    line. The columns read the others without building a record for each."""
    text = (path / "runs.jsonl").read_text(encoding="utf-8-sig")
    lines = {line.strip() for line in text.split("\n")} - {""}
    read: list[str] = []
    validate = RunRecord.model_validate_json

    def counted(data: str | bytes, **kwargs: Any) -> RunRecord:
        line = (data.decode() if isinstance(data, bytes) else data).strip()
        if line in lines:
            read.append(line)
        return validate(data, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(RunRecord, "model_validate_json", counted)
        yield read


@pytest.mark.parametrize("pricing", PRICINGS)
def test_every_status_priced_and_not_reads_the_fast_path_to_the_same_frame(
    tmp_path: Path, pricing: Pricing | None
) -> None:
    path = folder(tmp_path, [run(n) for n in range(60)])
    with lines_the_model_reads(path) as by_model:
        runs, _ = read_frames(path, pricing)
    assert by_model == []
    assert_same(path, pricing)
    assert set(runs["status"]) == set(STATUSES)


@pytest.mark.parametrize("pricing", PRICINGS)
def test_schema_1_folder_is_upgraded_as_before_in_columns(pricing: Pricing | None) -> None:
    assert_same(FIXTURE, pricing)
    with lines_the_model_reads(FIXTURE) as by_model:
        frame = read_frame(FIXTURE)
    assert by_model == []
    assert frame["arm"].iloc[0] == "react"
    tot = frame[frame["pattern"] == "tot"]["options"].iloc[0]
    assert tot["beam"] == 1 and tot["propose"] == "sample" and "max_output_tokens" in tot


@pytest.mark.parametrize(
    "change",
    [
        {"correct": True, "first_correct": None, "cost_usd": None, "slice": None},
        {"error": None, "answer": None, "supersedes": None, "loopbench_version": None},
        {"metrics": {}, "options": {}, "cost_from_cache_usd": 0.25},
        {"correct": False, "first_correct": False, "cost_usd": 0.5},
    ],
)
def test_dtypes_follow_the_values_as_pandas_infers_them(
    tmp_path: Path, change: dict[str, Any]
) -> None:
    path = folder(tmp_path, [run(n) | change for n in range(6)])
    for pricing in PRICINGS:
        assert_same(path, pricing)


def test_supersedes_leave_out_the_replaced_and_return_them_alone(tmp_path: Path) -> None:
    first = run(8)  # api_error
    again = run(30) | {k: first[k] for k in ("arm", "task_id", "repeat", "model")}
    again |= {"run_id": "again", "supersedes": first["run_id"], "status": "api_error"}
    third = again | {"run_id": "third", "supersedes": "again", "status": "answered"}
    path = folder(tmp_path, [run(n) for n in range(8)] + [first, run(10), again, run(11), third])
    with lines_the_model_reads(path) as by_model:
        runs, replaced = read_frames(path, Pricing(load_prices()))
    assert by_model == []
    assert list(replaced["status"]) == ["api_error", "api_error"]
    assert "third" in set(runs["run_id"]) and first["run_id"] not in set(runs["run_id"])
    assert_same(path, Pricing(load_prices()))


def test_a_torn_last_line_ends_the_reading(tmp_path: Path) -> None:
    whole = json.dumps(run(2))
    for torn in (whole[:40], whole):  # cut short, or complete but for its newline
        path = folder(tmp_path / str(len(torn)), [run(0), run(1), torn], end="")
        assert len(read_frame(path)) == 2
        assert_same(path)


@pytest.mark.parametrize("text", ["", "\n\n", '{"arm": "dire'])
def test_no_complete_line_is_no_runs(tmp_path: Path, text: str) -> None:
    (tmp_path / "runs.jsonl").write_text(text, encoding="utf-8")
    assert_same(tmp_path)
    assert read_frame(tmp_path).empty


def test_what_the_model_converts_is_read_by_the_model_alone(tmp_path: Path) -> None:
    lenient = [
        run(0) | {"pattern": 0},  # the record model reads the pattern from the arm
        json.dumps(run(3))[:-1] + ', "task_id": "task-9"}',  # a key twice: the last counts
        run(4) | {"answer": "f(a, b,) or {1, 2, }"},  # a comma before a bracket in a string
    ]
    path = folder(tmp_path, [run(6), *lenient, "   ", run(7)])
    with lines_the_model_reads(path) as by_model:
        read_frames(path)
    assert by_model == [line if isinstance(line, str) else json.dumps(line) for line in lenient]
    assert_same(path, Pricing(load_prices()))
    assert read_frame(path)["task_id"].iloc[2] == "task-9"


def test_a_whole_number_is_read_exactly_to_64_bits(tmp_path: Path) -> None:
    big = [2**53 + 1, 2**63 - 1, 2**62 + 3]  # beyond what a DOUBLE holds exactly
    path = folder(tmp_path, [run(n) | {"tokens_out": value} for n, value in enumerate(big)])
    with lines_the_model_reads(path) as by_model:
        frame = read_frame(path)
    assert by_model == []
    assert frame["tokens_out"].tolist() == big
    assert_same(path)


BAD_LINES = {
    "not JSON": "{not json",
    "a missing field": {k: v for k, v in run(1).items() if k != "arm"},
    "a string where a number goes": run(1) | {"repeat": "first"},
    "a number where a string goes": run(1) | {"task_id": 5},
    "a fraction where an int goes": run(1) | {"turns": 2.5},
    "a whole fraction where an int goes": run(1) | {"repeat": 1.0},
    "an exponent where an int goes": run(1) | {"tokens_in": 1e3},
    "a string where a count goes": run(1) | {"repeat": "0"},
    "a string where an amount goes": run(1) | {"cost_usd": "0.5"},
    "a string where a verdict goes": run(1) | {"correct": "yes"},
    "a verdict where an amount goes": run(1) | {"latency_s": True},
    "a verdict where a count goes": run(1) | {"turns": True},
    "a negative count": run(1) | {"tokens_in": -5},
    "a negative repeat": run(1) | {"repeat": -1},
    "a negative cost": run(1) | {"cost_usd": -0.01},
    "a cost that is not a number": run(1) | {"cost_usd": math.nan},  # json writes NaN
    "an infinite latency": run(1) | {"latency_s": math.inf},
    "a schema version this reader does not know": run(1) | {"schema_version": 99},
    "a schema version below the first": run(1) | {"schema_version": 0},
    "an unknown status": run(1) | {"status": "exploded"},
    "a metric that is not a number": run(1) | {"metrics": {"agreement": "high"}},
    "null where a value is required": run(1) | {"latency_s": None},
    "null where the model fills a default": run(1) | {"turns": None},
    "null where a dict goes": run(1) | {"options": None},
    "a key the record does not have": run(1) | {"temperature": 0.7},
    "a trailing comma": json.dumps(run(1))[:-1] + ",}",
    "a trailing comma in a dict": json.dumps(run(1) | {"metrics": {}}).replace("{}", '{"a": 1, }'),
    "a trailing comma in a list": json.dumps(run(1) | {"options": {"tools": []}}).replace(
        "[]", "[1,]"
    ),
    "a sampling setting that is not a number": run(1) | {"sampling": {"temperature": "hot"}},
    "a list where a string goes": run(1) | {"model": ["a"]},
}


@pytest.mark.parametrize("bad", BAD_LINES.values(), ids=BAD_LINES.keys())
def test_a_bad_line_gives_the_error_read_records_gives(
    tmp_path: Path, bad: dict[str, Any] | str
) -> None:
    path = folder(tmp_path, [run(0), run(3), bad, run(4)])
    with pytest.raises(ResultsError) as expected:
        read_records(path)
    assert ":3:" in str(expected.value)
    with pytest.raises(ResultsError) as got:
        read_frames(path)
    assert str(got.value) == str(expected.value)


def test_a_run_recorded_twice_counts_once_and_both_readers_name_its_lines_alike(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    merged = run(3) | {"run_id": "other", "experiment_id": "e2", "status": "answered"}
    lines = ["", run(0), run(3), run(0), run(4), merged]
    # A warning is said once a process: each reader reads a copy of its own.
    path, copy = folder(tmp_path / "lines", lines), folder(tmp_path / "columns", lines)
    read_records(path)
    said = capsys.readouterr().err
    with lines_the_model_reads(copy) as by_model:
        read_frames(copy)
    assert by_model == []  # the columns read it all
    assert capsys.readouterr().err == said.replace(str(path), str(copy))
    assert f"warning: {path / 'runs.jsonl'}: 2 line(s) record again a run" in said
    assert "line 4 repeats line 2 (run ('gpt-5-mini', 'direct', 'task-0', 0))" in said
    assert (
        "line 6 repeats line 3 (run ('unpriced-model', 'direct', 'task-3', 0), "
        "experiment 'e2', line 3's 'e1')" in said
    )
    assert_same(path)
    assert list(read_frame(path)["run_id"]) == ["r0", "r3", "r4"]


def test_a_missing_folder_and_a_missing_price_say_what_they_said(tmp_path: Path) -> None:
    with pytest.raises(ResultsError, match="no such file"):
        read_frames(tmp_path / "nowhere")
    path = folder(tmp_path, [run(0)])
    with pytest.raises(PriceError, match="no price for 'nonesuch'"):
        read_frames(path, Pricing(load_prices(), "nonesuch"))


def test_drop_leaves_those_columns_out(tmp_path: Path) -> None:
    path = folder(tmp_path, [run(n) for n in range(12)])
    full = records_frame(read_records(path))
    assert_frame_equal(read_frame(path, drop=UNREAD), full.drop(columns=list(UNREAD)))


def test_runs_appended_while_reading_are_left_for_the_next_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = folder(tmp_path, [run(n) for n in range(5)])
    expected = records_frame(read_records(path))
    connect = duckdb.connect

    def appending(*args: Any, **kwargs: Any) -> duckdb.DuckDBPyConnection:
        """A writer adds a run as DuckDB starts to read."""
        with (tmp_path / "runs.jsonl").open("a", encoding="utf-8") as runs:
            runs.write(json.dumps(run(7)) + "\n")
        return connect(*args, **kwargs)

    monkeypatch.setattr(duckdb, "connect", appending)
    assert_frame_equal(read_frame(path), expected)


def test_a_new_record_field_needs_a_column_kind() -> None:
    with pytest.raises(TypeError, match=r"RunRecord\.tags: no column kind"):
        columns_sql._field("tags", FieldInfo.from_annotation(list[str]))
    seen = FieldInfo.from_annotated_attribute(bool | None, None)
    assert columns_sql._field("seen", seen) == columns_sql.Field("seen", "bool", True)
    count = FieldInfo.from_annotated_attribute(Annotated[int, Field(ge=0)] | None, None)
    assert columns_sql._field("count", count) == columns_sql.Field("count", "int", True, least=0)
    assert pd.api.types.is_object_dtype(read_frame(FIXTURE)["options"])


def old_frames(
    folder: Path | str, pricing: Pricing | None = None, *, drop: Any = ()
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """What the commands read before: every column, through RunRecord."""
    return (
        records_frame(read_records(folder), pricing),
        records_frame(read_records(folder, superseded=True), pricing),
    )


def old_frame(
    folder: Path | str, pricing: Pricing | None = None, *, superseded: bool = False, drop: Any = ()
) -> pd.DataFrame:
    return old_frames(folder, pricing)[1 if superseded else 0]


def outputs(monkeypatch: pytest.MonkeyPatch, old: bool, argv: list[list[str]]) -> list[Any]:
    from click.testing import CliRunner

    from loopbench.harness.cli import compare as compare_cli
    from loopbench.harness.cli import table as table_cli
    from loopbench.harness.results import two_folders

    with monkeypatch.context() as patched:
        if old:
            patched.setattr(table_cli, "read_frames", old_frames)
            patched.setattr(two_folders, "read_frame", old_frame)  # compare's two sides
        runner = CliRunner()
        made = []
        for args in argv:
            command = table_cli.table_command if args[0] == "table" else compare_cli.compare_command
            result = runner.invoke(command, args[1:])
            made.append((result.exit_code, result.output))
        return made


def test_table_and_compare_print_what_they_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def grid(seed: int) -> list[dict[str, Any]]:
        outcome = ("status", "correct", "first_correct", "tokens_in", "turns", "metrics")
        records = [run(n) | {k: run(n + seed)[k] for k in outcome} for n in range(72)]
        retry = records[8] | {"run_id": "again", "supersedes": records[8]["run_id"]}
        return [*records, retry | {"status": "answered", "correct": True}]

    before, after = folder(tmp_path / "before", grid(0)), folder(tmp_path / "after", grid(1))
    argv = [
        ["table", str(before)],
        ["table", str(before), "--format", "json", "--by", "slice"],
        ["table", str(before), "--format", "csv", "--vs", "direct", "--price-as", "gpt-5"],
        ["table", str(FIXTURE)],
        ["compare", str(before), str(after)],
        ["compare", str(before), str(after), "--format", "json", "--price-as", "gpt-4o"],
        ["table", str(tmp_path / "nowhere")],
    ]
    new = outputs(monkeypatch, False, argv)
    assert new == outputs(monkeypatch, True, argv)
    assert [code for code, _ in new] == [0, 0, 0, 0, new[4][0], new[5][0], 2]
    assert "Cost includes 1 runs" in new[0][1]
    assert "· direct |" in new[4][1] and json.loads(new[5][1].split("\nREGRESSED")[0])["arms"]


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1}',
        '{"a": 1.5, "b": "2"}',
        '{"a": true}',
        "{}",
        '{"a": 1e400}',
        '{"a": 0.1, "a": 2}',
        '{"a": 123456789012345678901234567890}',
        '{"a": "x"}',
        "[1]",
        '{"\\ud800": 1.0}',
    ],
)
def test_metrics_read_alone_are_what_the_record_reads(text: str) -> None:
    """Distinct metrics are read by the field's own validator, not in a whole record: the
    same dict, and the same refusal."""
    from loopbench.harness.results.columns_fill import Refused, _probe

    assert RunRecord.model_fields["metrics"].annotation == dict[str, float]
    line = '{"arm": "a", "task_id": "t", "repeat": 0, "status": "answered", "metrics": '
    try:
        expected: Any = RunRecord.model_validate_json(line + text + "}").metrics
    except ValueError:
        expected = Refused
    try:
        got: Any = _probe(columns_sql.FIELDS["metrics"], text)
    except Refused:
        got = Refused
    assert repr(got) == repr(expected)
