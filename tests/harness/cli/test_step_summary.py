"""``compare`` appends its markdown to GitHub's job summary when GITHUB_STEP_SUMMARY is set,
whatever it prints; a summary it cannot write is one warning and changes nothing else."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.cli.step_summary import VARIABLE

from ..report.test_compare import before_keys, write


@pytest.fixture
def regressed(tmp_path):
    before = write(tmp_path / "b", {"react": 0.8, "cot": 0.5}, seed=1)
    right = [key for key in before_keys(before, "react") if key[2]][:11]
    flips = {(t, r) for t, r, _ in right}
    after = write(tmp_path / "a", {"react": 0.8, "cot": 0.5}, seed=1, flip=flips, flip_arm="react")
    return before, after


def compare(before, after, *args, summary=None):
    env = {VARIABLE: None if summary is None else str(summary)}  # None: unset
    return CliRunner().invoke(main, ["compare", before, after, *args], env=env)


@pytest.mark.parametrize("fmt", ["text", "md", "json", "junit"])
def test_the_markdown_is_appended_whatever_is_printed(tmp_path, regressed, fmt):
    summary = tmp_path / "summary.md"
    summary.write_text("## An earlier step's summary\n")
    plain = compare(*regressed, "--format", fmt)
    first = compare(*regressed, "--format", fmt, summary=summary)
    second = compare(*regressed, "--format", fmt, summary=summary)
    markdown = compare(*regressed, "--format", "md").stdout
    assert plain.exit_code == first.exit_code == second.exit_code == 1
    # The summary says nothing on the console: output and warnings as without it.
    assert (first.stdout, first.stderr) == (second.stdout, second.stderr)
    assert (first.stdout, first.stderr) == (plain.stdout, plain.stderr)
    written = summary.read_text()
    section = f"### loopbench compare\n\n{markdown}\n"
    assert written == "## An earlier step's summary\n" + section + section
    assert "**REGRESSED**" in markdown and "| react |" in markdown


def test_without_the_variable_no_summary_is_written(tmp_path, regressed, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = compare(*regressed)
    assert result.exit_code == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]


@pytest.mark.parametrize("where", ["a folder", "in a missing folder", "on a full disk"])
def test_a_summary_that_cannot_be_written_is_one_warning_and_the_exit_code_stays(
    tmp_path, regressed, where
):
    summary = {
        "a folder": tmp_path,
        "in a missing folder": tmp_path / "missing" / "summary.md",
        "on a full disk": Path("/dev/full"),  # every write fails: no space left
    }[where]
    if where == "on a full disk" and not summary.exists():
        pytest.skip("no /dev/full here")
    plain = compare(*regressed, "--format", "junit")
    result = compare(*regressed, "--format", "junit", summary=summary)
    assert result.exit_code == plain.exit_code == 1 and result.exception is not None
    assert isinstance(result.exception, SystemExit)  # the exit code, not an error raised
    assert result.stdout == plain.stdout
    extra = result.stderr.replace(plain.stderr, "", 1)
    assert extra.count("\n") == 1 and "Traceback" not in result.stderr
    assert extra.startswith(f"warning: job summary not written to {summary} ({VARIABLE}): ")
    assert not (tmp_path / "missing").exists()
