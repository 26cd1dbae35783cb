"""Two folders read at once (``loopbench.harness.results.two_folders``), as compare reads
them: the same frames, errors and warnings, in the same order, as one after the other."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from pandas.testing import assert_frame_equal

from loopbench.harness.cli.main import main
from loopbench.harness.results.columns import read_frame
from loopbench.harness.results.errors import ResultsError
from loopbench.harness.results.two_folders import read_two
from tests.harness.test_columns import folder, run


def recorded_twice(path: Path, first: int) -> Path:
    """A folder whose last line records its first run again (a warning when read)."""
    lines = [run(n) for n in range(first, first + 24)]
    return folder(path, [*lines, lines[0] | {"run_id": "again"}])


def test_two_folders_read_at_once_are_read_as_one_after_the_other(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = recorded_twice(tmp_path / "a", 0), recorded_twice(tmp_path / "b", 5)
    runs, others = read_two(first, second, None)
    said = capsys.readouterr().err
    assert said.index(str(first)) < said.index(str(second))  # the second's warning held
    assert_frame_equal(runs, read_frame(first))
    assert_frame_equal(others, read_frame(second))


def test_the_second_folder_says_nothing_when_the_first_cannot_be_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = folder(tmp_path / "a", [run(0), "{not json"])
    second = recorded_twice(tmp_path / "b", 0)
    with pytest.raises(ResultsError, match=str(first)):
        read_two(first, second, None)
    assert str(second) not in capsys.readouterr().err


def test_compare_says_the_baselines_warnings_first(tmp_path: Path) -> None:
    baseline, candidate = recorded_twice(tmp_path / "a", 0), recorded_twice(tmp_path / "b", 0)
    said = CliRunner().invoke(main, ["compare", str(baseline), str(candidate)]).stderr
    warned = [line for line in said.splitlines() if line.startswith("warning:")]
    assert len(warned) == 2, said
    assert str(baseline) in warned[0] and str(candidate) in warned[1], said
