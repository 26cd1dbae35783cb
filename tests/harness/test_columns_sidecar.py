"""runs.jsonl's columns kept in a sidecar: the same frame and the same tables with it
as without, read only while it agrees with runs.jsonl, rebuilt when stale or damaged."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner
from pandas.testing import assert_frame_equal

from loopbench.harness.cli.main import main
from loopbench.harness.report.html import _scan
from loopbench.harness.results import columns, columns_sidecar, reading
from loopbench.harness.results.columns import read_frames
from loopbench.harness.results.columns_sidecar import SIDECAR, fresh_sidecar
from loopbench.harness.results.frames import records_frame
from loopbench.harness.results.reading import read_records
from loopbench.harness.results.store import RecordWriter

from .test_columns import FIXTURE, PRICINGS, folder, run
from .test_columns_formats import NEWER, without


@pytest.fixture
def every_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sidecar for any runs.jsonl, however small."""
    monkeypatch.setattr(columns_sidecar, "SIDECAR_FROM", 0)


#: What a sidecar's reader fetches for the rows superseding compares alone, when not asked.
LAZY = ["run_id", "supersedes", "experiment_id"]


def lines(count: int, **fields: Any) -> list[dict[str, Any] | str]:
    made = [run(n, **fields) for n in range(count)]
    retry = made[4] | {"run_id": "again", "supersedes": made[4]["run_id"], "status": "answered"}
    twice = json.dumps(made[9])[:-1] + ', "task_id": "task-9"}'  # the model reads this line
    return [*made, retry, made[7] | {"run_id": "copied"}, twice, made[10] | {"pattern": 0}]


def json_query_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on, reading runs.jsonl's JSON fails: only a sidecar can give the frame."""

    def refused(names: list[str]) -> str:
        raise AssertionError("runs.jsonl read as JSON")

    monkeypatch.setattr(columns, "select", refused)


def assert_same_as_records(path: Path) -> None:
    for pricing in PRICINGS:
        runs, replaced = read_frames(path, pricing)
        assert_frame_equal(runs, records_frame(read_records(path), pricing))
        assert_frame_equal(replaced, records_frame(read_records(path, superseded=True), pricing))


@pytest.mark.usefixtures("every_size")
@pytest.mark.parametrize("older", [False, True], ids=["current", "older"])
def test_the_sidecar_gives_the_frame_runs_jsonl_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, older: bool
) -> None:
    made = lines(36)
    if older:
        made = [without(NEWER, line) if isinstance(line, dict) else line for line in made]
    path = folder(tmp_path, made)
    read_frames(path)  # writes it
    assert fresh_sidecar(path / "runs.jsonl") is not None
    json_query_refused(monkeypatch)
    assert_same_as_records(path)


@pytest.mark.usefixtures("every_size")
@pytest.mark.parametrize("schema_1", [False, True], ids=["current", "schema-1"])
def test_a_sidecar_read_without_run_ids_supersedes_as_records_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, schema_1: bool
) -> None:
    """run_id, supersedes and experiment_id left out of the frame are fetched for the rows
    superseding compares alone: the retried run, the copied one and the line the record
    model reads count as with them."""
    if schema_1:
        path = tmp_path / "old"
        shutil.copytree(FIXTURE, path)
    else:
        path = folder(tmp_path, lines(36))
    read_frames(path)  # writes it
    json_query_refused(monkeypatch)
    for pricing in PRICINGS:
        runs, replaced = read_frames(path, pricing, drop=LAZY)
        expected = records_frame(read_records(path), pricing).drop(columns=LAZY)
        assert_frame_equal(runs, expected)
        gone = records_frame(read_records(path, superseded=True), pricing)
        assert_frame_equal(replaced, gone.drop(columns=LAZY, errors="ignore"))


@pytest.mark.usefixtures("every_size")
def test_a_schema_1_folder_reads_the_same_through_its_sidecar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "old"
    shutil.copytree(FIXTURE, path)
    read_frames(path)
    json_query_refused(monkeypatch)
    assert_same_as_records(path)


def test_the_table_is_the_same_with_and_without_the_sidecar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = folder(tmp_path / "out", lines(48))
    commands = [["table", str(path)], ["failures", str(path)], ["compare", str(path), str(path)]]

    def outputs() -> list[str]:
        said = []
        for args in commands:  # each warning said again, as by a command of its own
            monkeypatch.setattr(reading, "_SAID", set())
            said.append(CliRunner().invoke(main, args).output)
        return said

    without_one = outputs()
    assert not (path / SIDECAR).exists()  # a small file has none
    monkeypatch.setattr(columns_sidecar, "SIDECAR_FROM", 0)
    with_one = outputs()
    assert (path / SIDECAR).is_file()
    assert with_one == without_one and "repeats line" in with_one[0]


@pytest.mark.usefixtures("every_size")
def test_runs_appended_make_the_sidecar_stale_and_it_is_rebuilt(tmp_path: Path) -> None:
    path = folder(tmp_path, lines(24))
    runs = path / "runs.jsonl"
    assert len(read_frames(path)[0]) == 25
    with runs.open("a") as handle:
        handle.write(json.dumps(run(50)) + "\n")
    assert fresh_sidecar(runs) is None
    assert len(read_frames(path)[0]) == 26
    assert fresh_sidecar(runs) is not None
    assert_same_as_records(path)


@pytest.mark.usefixtures("every_size")
def test_a_file_rewritten_to_the_same_size_and_times_is_not_read_from_the_sidecar(
    tmp_path: Path,
) -> None:
    path = folder(tmp_path, lines(24))
    runs = path / "runs.jsonl"
    read_frames(path)
    seen = runs.stat()
    text = runs.read_text().replace('"turns": 1', '"turns": 2')
    runs.write_text(text)
    os.utime(runs, ns=(seen.st_atime_ns, seen.st_mtime_ns))
    assert runs.stat().st_size == seen.st_size
    assert fresh_sidecar(runs) is None
    assert_same_as_records(path)


@pytest.mark.usefixtures("every_size")
@pytest.mark.parametrize("damage", [b"", b"PK\x03\x04 not a zip", b"\x00" * 4096])
def test_a_damaged_sidecar_is_ignored_and_rebuilt(tmp_path: Path, damage: bytes) -> None:
    path = folder(tmp_path, lines(24))
    (path / SIDECAR).write_bytes(damage)
    assert_same_as_records(path)
    assert fresh_sidecar(path / "runs.jsonl") is not None


@pytest.mark.usefixtures("every_size")
def test_another_folders_sidecar_is_not_taken(tmp_path: Path) -> None:
    other = folder(tmp_path / "other", lines(24, model="another-model"))
    read_frames(other)
    path = folder(tmp_path / "this", lines(24))
    shutil.copy(other / SIDECAR, path / SIDECAR)
    assert fresh_sidecar(path / "runs.jsonl") is None
    assert set(read_frames(path)[0]["model"]) == {"gpt-5-mini", "unpriced-model"}


@pytest.mark.usefixtures("every_size")
def test_a_sidecar_that_is_a_link_is_replaced_not_followed(tmp_path: Path) -> None:
    path = folder(tmp_path, lines(24))
    read_frames(path)
    target = tmp_path / "elsewhere.parquet"
    (path / SIDECAR).rename(target)
    (path / SIDECAR).symlink_to(target)
    before = target.read_bytes()
    assert_same_as_records(path)
    assert not (path / SIDECAR).is_symlink() and (path / SIDECAR).is_file()
    assert target.read_bytes() == before


@pytest.mark.usefixtures("every_size")
def test_a_folder_where_nothing_can_be_written_is_read_without_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = folder(tmp_path, lines(24))

    def refused(*args: object, **kwargs: object) -> str:
        raise PermissionError("read-only")

    monkeypatch.setattr(tempfile, "mkdtemp", refused)
    assert_same_as_records(path)
    assert sorted(p.name for p in path.iterdir()) == ["runs.jsonl"]


@pytest.mark.usefixtures("every_size")
def test_a_file_that_changes_while_its_sidecar_is_written_gets_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = folder(tmp_path, lines(24))
    keys = iter(["before", "after"])
    monkeypatch.setattr(columns_sidecar, "key_of", lambda runs: next(keys))
    assert columns_sidecar.write_sidecar(path / "runs.jsonl") is None
    assert sorted(p.name for p in path.iterdir()) == ["runs.jsonl"]


def test_a_small_folder_gets_no_sidecar(tmp_path: Path) -> None:
    path = folder(tmp_path, lines(24))
    read_frames(path)
    assert not (path / SIDECAR).exists()


@pytest.mark.usefixtures("every_size")
def test_a_run_ending_writes_the_sidecar_and_a_run_killed_does_not(tmp_path: Path) -> None:
    path = folder(tmp_path / "ended", lines(24))
    with RecordWriter(path):
        pass
    assert fresh_sidecar(path / "runs.jsonl") is not None
    killed = folder(tmp_path / "killed", lines(24))
    with pytest.raises(KeyboardInterrupt), RecordWriter(killed):
        raise KeyboardInterrupt
    assert not (killed / SIDECAR).exists()


@pytest.mark.usefixtures("every_size")
@pytest.mark.parametrize("blank", [False, True], ids=["lines-as-rows", "a-blank-line"])
def test_a_report_parses_only_the_lines_the_sidecar_puts_its_runs_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, blank: bool
) -> None:
    """The sampled runs' records are the scan's: the first line of a run recorded twice,
    in file order; a blank line (rows and lines part) has the file read through."""
    made = lines(40)
    if blank:
        made.insert(5, "")
    path = folder(tmp_path, made)
    read_frames(path)  # writes the sidecar
    wanted = {"r3", "r9", "r17", "again", "copied", "r39"}
    located = _scan._located(path / "runs.jsonl", wanted)
    assert blank or located is not None
    monkeypatch.setattr(_scan, "_located", lambda *_: None)
    scanned = _scan.records_of(path, wanted)
    assert len(scanned) == len(wanted)
    assert located is None or located == scanned


@pytest.mark.parametrize("block", [7, 64, 1 << 20])
def test_lines_are_picked_out_by_number_across_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    monkeypatch.setattr(_scan, "_BLOCK", block)
    monkeypatch.setattr(_scan, "_STEP", 5)
    text = [f"line {n} " + "x" * (n * 7 % 23) for n in range(60)]
    path = tmp_path / "runs.jsonl"
    path.write_bytes(("\n".join(text) + "\nlast line cut").encode())
    wanted = [0, 1, 2, 9, 10, 33, 58, 59, 60]
    found = dict(_scan._lines_at(path, wanted))
    assert found == {n: (text[n] + "\n").encode() for n in wanted if n < 60}


def located_and_scanned(
    path: Path, wanted: set[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[Any, Any]:
    """The records of ``wanted`` as the report finds them by the sidecar, and as the scan
    finds them with that way out of reach."""
    located = _scan._located(path / "runs.jsonl", wanted)
    monkeypatch.setattr(_scan, "_located", lambda *_: None)
    return located, _scan.records_of(path, wanted)


@pytest.mark.usefixtures("every_size")
def test_a_report_reads_its_runs_where_the_sidecar_says_their_lines_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each line's length is in the sidecar: the sampled runs' lines are read where they
    start, none counted to, and they are the scan's records."""
    path = folder(tmp_path, lines(40))
    read_frames(path)  # writes the sidecar
    wanted = {"r3", "r9", "r17", "again", "copied", "r39"}

    def counted(*_: object) -> None:
        raise AssertionError("lines counted to")

    monkeypatch.setattr(_scan, "_lines_at", counted)
    located, scanned = located_and_scanned(path, wanted, monkeypatch)
    assert located == scanned


@pytest.mark.usefixtures("every_size")
@pytest.mark.parametrize("spaced", [0, 5, 39], ids=["first", "middle", "last"])
def test_a_line_with_spaces_around_it_has_the_lines_counted_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spaced: int
) -> None:
    """DuckDB reads a line's JSON without the spaces around it: the lengths no longer say
    where the lines after it start, and the lines are counted to instead."""
    made: list[Any] = lines(40)
    made[spaced] = "  " + json.dumps(made[spaced]) + " "
    path = folder(tmp_path, made)
    read_frames(path)
    wanted = {"r3", "r9", "r17", "again", "copied", "r39"}
    located, scanned = located_and_scanned(path, wanted, monkeypatch)
    assert located == scanned


@pytest.mark.usefixtures("every_size")
def test_spaces_that_put_a_line_where_another_ends_do_not_cut_a_line_short(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Spaces after the first line as long as a run's line move where the lengths put that
    run onto the end of the longer line before it: that piece of a line is not read as one
    (it would be a damaged line); the lines are counted to."""
    made = [line if isinstance(line, str) else json.dumps(line) for line in lines(40)]
    row = next(n for n in range(2, 40) if len(made[n - 1]) > len(made[n]) + 1)
    made[0] += " " * (len(made[row]) + 1)
    path = folder(tmp_path, made)
    read_frames(path)
    wanted = {f"r{row}"}
    located, scanned = located_and_scanned(path, wanted, monkeypatch)
    assert located == scanned


@pytest.mark.usefixtures("every_size")
def test_an_earlier_releases_parquet_sidecar_is_not_read_and_is_removed(tmp_path: Path) -> None:
    """runs.columns.parquet, the sidecar earlier releases wrote, is never read (it would give
    another folder's runs here) and goes when this release's is written."""
    other = folder(tmp_path / "other", lines(24, model="another-model"))
    path = folder(tmp_path / "this", lines(24))
    earlier = path / columns_sidecar.EARLIER_SIDECAR
    with duckdb.connect() as con:  # a Parquet file of another folder's runs
        con.execute(
            f"COPY (SELECT json FROM read_json_objects('{other / 'runs.jsonl'}')) TO '{earlier}' "
            "(FORMAT parquet)"
        )
    assert set(read_frames(path)[0]["model"]) == {"gpt-5-mini", "unpriced-model"}
    assert not earlier.exists() and fresh_sidecar(path / "runs.jsonl") is not None


@pytest.mark.usefixtures("every_size")
def test_an_earlier_sidecar_that_cannot_be_removed_is_left_and_the_new_one_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = folder(tmp_path, lines(24))
    earlier = path / columns_sidecar.EARLIER_SIDECAR
    earlier.mkdir()
    (earlier / "kept").write_text("not ours to empty")
    json_query_refused(monkeypatch)  # the first read, too, from the sidecar it writes
    assert_same_as_records(path)
    assert (earlier / "kept").is_file()
