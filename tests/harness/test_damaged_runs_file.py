"""A damaged runs.jsonl (a carriage return inside a line, lines copied, lines of two
experiments merged, lines lost) is counted alike by every reader: the line reader, the
columns, ``load()``, ``table``, ``compare``, the stopping rule's footnote and resume. A run
recorded twice is named and counted once, and a resumed run adds exactly the runs
missing. A runs file that is a FIFO or a device is refused in one line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest
from click.testing import CliRunner
from nbclient import NotebookClient

import loopbench
from loopbench.harness.cli.main import main
from loopbench.harness.grid import recorded_runs
from loopbench.harness.models.types import ModelRequest
from loopbench.harness.results.columns import read_frame
from loopbench.harness.results.reading import ResultsError, read_records
from loopbench.harness.stats.separation import SeparationRule, StoppedRun
from tests.depot_answers import RIGHT

DEPOT = loopbench.load_taskset("depot")
ARMS = ["direct", "cot"]
ROOT = Path(__file__).parents[2]


def half_right(request: ModelRequest) -> str:
    question = request.messages[-1].content
    task = next(t for t in DEPOT.tasks if t.question == question)
    return f"Answer: {RIGHT[question] if task.slice == 'public' else 'no idea'}"


def experiment(out: Path) -> loopbench.Experiment:
    return loopbench.Experiment("depot", ARMS, repeats=2, model=half_right, out=out)


def lines_of(folder: Path) -> list[bytes]:
    """The file's lines, each ending at its newline (a carriage return ends none)."""
    with (folder / "runs.jsonl").open("rb") as handle:
        return handle.readlines()


def carriage_returns(lines: list[bytes]) -> list[bytes]:
    """A bare CR inside line 4 and one before line 7's newline; line 9 ends \\r\\n."""
    lines[3] = lines[3].replace(b',"task_id"', b',\r"task_id"', 1)
    lines[6] = lines[6][:-1] + b"\r\n"
    lines[8] = lines[8][:-1] + b"\r \n"
    return lines


def lost(lines: list[bytes]) -> list[bytes]:
    return carriage_returns(lines)[:10] + lines[15:]


def copied(lines: list[bytes]) -> list[bytes]:
    return carriage_returns(lines) + lines[:45]


def merged(lines: list[bytes], other: list[bytes]) -> list[bytes]:
    """Another experiment's lines of the same grid, some added to a folder that lost them."""
    return carriage_returns(lines)[:30] + other[20:]


DAMAGES: dict[str, Callable[..., list[bytes]]] = {
    "a carriage return inside a line": carriage_returns,
    "lines lost": lost,
    "lines copied": copied,
    "lines of two experiments": merged,
}


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two experiments of the same 48-run grid, in folders "one" and "other"."""
    base = tmp_path_factory.mktemp("made")
    for name in ("one", "other"):
        assert experiment(base / name).run().ran == 48
    return base


def damaged(tmp_path: Path, made: Path, damage: str) -> Path:
    """Folder "one" with its runs.jsonl damaged."""
    out = tmp_path / "r"
    shutil.copytree(made / "one", out)
    one, other = lines_of(made / "one"), lines_of(made / "other")
    merging = damage == "lines of two experiments"
    lines = DAMAGES[damage](one, other) if merging else DAMAGES[damage](one)
    (out / "runs.jsonl").write_bytes(b"".join(lines))
    return out


def distinct_runs(folder: Path) -> int:
    """The runs the file records, judged here from its lines as JSON reads them."""
    keys = set()
    for raw in (folder / "runs.jsonl").read_bytes().split(b"\n"):
        if raw.strip():
            line = json.loads(raw)
            keys.add((line["model"], line["arm"], line["task_id"], line["repeat"]))
    return len(keys)


def counts(folder: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many runs each reader counts, and what each said on stderr."""
    table = CliRunner().invoke(main, ["table", str(folder), "--format", "json"])
    assert table.exit_code == 0, table.output
    compared = loopbench.load(folder).compare(loopbench.load(folder))
    footnote = StoppedRun(SeparationRule(max_repeats=2), ARMS, [t.id for t in DEPOT.tasks])
    spent = footnote.footnote_of(read_frame(folder)).split(" runs made")[0].rsplit(" ", 1)[1]
    done, _ = recorded_runs(read_records(folder), DEPOT)
    return {
        "line reader": len(read_records(folder)),
        "columns": len(read_frame(folder)),
        "load()": len(loopbench.load(folder).frame()),
        "table": sum(row["n"] for row in json.loads(table.stdout)),
        "compare": sum(arm.paired.n_pairs for arm in compared.arms),
        "--until-separated": int(spent),
        "resume": len(done),
    }


@pytest.mark.parametrize("damage", DAMAGES)
def test_every_reader_counts_a_damaged_file_alike_and_resume_adds_only_what_is_missing(
    tmp_path: Path,
    made: Path,
    damage: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = damaged(tmp_path, made, damage)
    expected = distinct_runs(folder)
    assert set(counts(folder, monkeypatch).values()) == {expected}
    before = len(lines_of(folder))
    resumed = experiment(folder).run()
    assert (resumed.ran, resumed.skipped) == (48 - expected, expected)
    assert len(lines_of(folder)) == before + 48 - expected
    assert set(counts(folder, monkeypatch).values()) == {48}
    assert "read line by line" not in capsys.readouterr().err


@pytest.mark.parametrize("damage", ["lines copied", "lines of two experiments"])
def test_every_reader_names_the_lines_of_a_run_recorded_twice(
    tmp_path: Path, made: Path, damage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    readers: dict[str, Callable[[Path], object]] = {
        "line reader": read_records,
        "columns": read_frame,
        "load()": lambda folder: loopbench.load(folder).table(),
        "resume": lambda folder: experiment(folder).run(),
    }
    said = {}
    for name, read in readers.items():  # a warning is said once a process: a copy each
        folder = damaged(tmp_path / name, made, damage)
        read(folder)
        said[name] = capsys.readouterr().err.replace(str(folder), "FOLDER")
    folder = damaged(tmp_path / "table", made, damage)
    table = CliRunner().invoke(main, ["table", str(folder)]).stderr
    said["table"] = table.replace(str(folder), "FOLDER")
    repeated = len(lines_of(folder)) - distinct_runs(folder)
    first = said["line reader"]
    assert f"FOLDER/runs.jsonl: {repeated} line(s) record again a run" in first
    assert "repeats line" in first and f"; and {repeated - 5} more" in first
    if damage == "lines of two experiments":
        assert "experiment '" in first  # the two experiments named
    assert all(first in text for text in said.values()), said


@pytest.mark.parametrize("special", ["a FIFO", "a link to /dev/zero"])
def test_a_runs_file_that_is_not_a_regular_file_is_refused_in_one_line(
    tmp_path: Path, special: str
) -> None:
    runs = tmp_path / "runs.jsonl"
    if special == "a FIFO":
        os.mkfifo(runs)
    else:
        runs.symlink_to("/dev/zero")
    for command in (["table", str(tmp_path)], ["compare", str(tmp_path), str(tmp_path)]):
        # A subprocess with a timeout: a reader that opened the FIFO would wait for ever.
        done = subprocess.run(
            [sys.executable, "-m", "loopbench.harness.cli", *command],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=ROOT,
        )
        assert done.returncode == 2 and done.stdout == ""
        [line] = done.stderr.splitlines()
        assert "runs.jsonl: is a" in line and "not a regular file" in line
    with pytest.raises(ResultsError, match="not a regular file"):
        loopbench.load(tmp_path)


def test_inside_a_jupyter_kernel_load_reads_the_columns_quietly(tmp_path: Path, made: Path) -> None:
    """A kernel without ipywidgets refuses DuckDB's progress-bar setting."""
    shutil.copy(made / "one" / "runs.jsonl", tmp_path / "runs.jsonl")
    code = f"import loopbench\nprint(len(loopbench.load({str(tmp_path)!r}).frame()))"
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    os.environ.setdefault("JUPYTER_PLATFORM_DIRS", "1")
    NotebookClient(notebook, timeout=120, kernel_name="python3").execute(cwd=str(ROOT))
    outputs = notebook.cells[0].outputs
    assert [(o.output_type, o.get("name"), o.get("text")) for o in outputs] == [
        ("stream", "stdout", "48\n")
    ]
