"""``loopbench export``: one row per run, every record field a column, readable back."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from click.testing import CliRunner

from loopbench.harness.cli.export import export_command
from loopbench.harness.results.reading import read_records
from loopbench.harness.results.records import RunRecord

FIXTURE = Path(__file__).parents[2] / "fixtures" / "results-0.1.0"


def written(folder: Path) -> Path:
    folder.mkdir()
    records = [
        RunRecord(
            run_id=f"r{n}",
            arm=["direct", "best_of_n"][n % 2],
            options=[{}, {"n": 3, "verifier": "evidence", "max_output_tokens": None}][n % 2],
            task_id=f"t{n}",
            repeat=0,
            status=["answered", "api_error", "step_budget"][n % 3],
            answer='a, "quoted"\nanswer «é»' if n % 3 == 0 else None,
            correct=[True, None, False][n % 3],
            metrics=[{}, {"judged": 2.0}][n % 2],
            cost_usd=0.25 if n % 2 else None,
        )
        for n in range(6)
    ]
    retried = records[1].model_copy(update={"run_id": "again", "supersedes": "r1"})
    lines = [r.model_dump_json() for r in [*records, retried]]
    (folder / "runs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def export(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(export_command, list(args))
    return result.exit_code, result.output


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_every_run_and_field_comes_back(tmp_path: Path, fmt: str) -> None:
    results = written(tmp_path / "results")
    out = tmp_path / f"runs.{fmt}"
    code, said = export(str(results), "--format", fmt, "-o", str(out))
    assert code == 0, said
    assert said == f"wrote {out} (6 runs, {len(RunRecord.model_fields)} columns)\n"
    back = duckdb.sql(f"SELECT * FROM '{out}'").df()
    assert list(back.columns) == list(RunRecord.model_fields)
    expected = read_records(results)
    assert list(back["run_id"]) == [r.run_id for r in expected]  # r1 superseded by "again"
    for row, record in zip(back.to_dict("records"), expected, strict=True):
        assert json.loads(row["options"]) == record.options
        assert json.loads(row["metrics"]) == record.metrics
        assert (None if pd.isna(row["answer"]) else row["answer"]) == record.answer
        assert (None if pd.isna(row["correct"]) else bool(row["correct"])) == record.correct


def test_pandas_reads_the_parquet_export_in_loopbench_s_own_environment(tmp_path: Path) -> None:
    out = tmp_path / "runs.parquet"
    results = written(tmp_path / "results")
    assert export(str(results), "-o", str(out))[0] == 0
    back = pd.read_parquet(out)  # the engine a fresh install has: fastparquet, a dependency
    assert list(back.columns) == list(RunRecord.model_fields)
    expected = read_records(results)
    assert list(back["run_id"]) == [r.run_id for r in expected]
    assert [None if pd.isna(a) else a for a in back["answer"]] == [r.answer for r in expected]
    assert [json.loads(o) for o in back["options"]] == [r.options for r in expected]
    assert list(back["repeat"]) == [0] * len(expected)


def test_parquet_keeps_the_types(tmp_path: Path) -> None:
    out = tmp_path / "runs.parquet"
    assert export(str(written(tmp_path / "results")), "-o", str(out))[0] == 0
    types = {row[0]: row[1] for row in duckdb.sql(f"DESCRIBE SELECT * FROM '{out}'").fetchall()}
    assert types["repeat"] == "BIGINT" and types["correct"] == "BOOLEAN"
    assert types["cost_usd"] == "DOUBLE" and types["options"] == "VARCHAR"


def test_older_records_are_exported_as_read_today(tmp_path: Path) -> None:
    out = tmp_path / "old.csv"
    assert export(str(FIXTURE), "--format", "csv", "-o", str(out))[0] == 0
    back = pd.read_csv(out)
    assert len(back) == 360 and back["arm"].iloc[0] == "react"


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    results = written(tmp_path / "results")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "runs.jsonl").write_text('{"arm": "direct"}\n', encoding="utf-8")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "runs.jsonl").write_text("", encoding="utf-8")
    cases = {
        "no such file": [str(tmp_path / "nowhere"), "-o", str(tmp_path / "x.parquet")],
        "runs.jsonl:1: field 'task_id'": [str(bad), "-o", str(tmp_path / "x.parquet")],
        "no finished runs yet": [str(empty), "-o", str(tmp_path / "x.parquet")],
        "is a folder": [str(results), "-o", str(tmp_path)],
        "cannot be written": [str(results), "-o", str(tmp_path / "no" / "such" / "x.csv")],
    }
    for expected, args in cases.items():
        code, said = export(*args)
        assert code == 2 and expected in said and said.count("\n") == 1, said
