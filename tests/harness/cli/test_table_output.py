"""``table -o FILE``: the table written to a file, as it would be printed, its path checked
before the folder is read, as ``report``, ``export`` and ``plot`` do."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from tests.harness.report.test_table import record

KEY = "sk-proj-Ab3dEf9hIjKlMn0pQrStUv"


def folder(where: Path, model: str = "gpt-5-mini") -> Path:
    where.mkdir()
    runs = [record(arm=arm, task=f"t{i}", model=model) for arm in ("cot", "direct") for i in (1, 2)]
    (where / "runs.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in runs))
    return where


def table(*args: str | Path, env: dict[str, str] | None = None):
    return CliRunner().invoke(main, ["table", *map(str, args)], env=env)


@pytest.mark.parametrize("fmt", ["md", "csv", "json", "latex", "html"])
def test_the_file_holds_what_would_be_printed(tmp_path, fmt):
    results = folder(tmp_path / "r")
    printed = table(results, "--format", fmt, "--step-budget")
    out = tmp_path / f"table.{fmt}"
    written = table(results, "--format", fmt, "--step-budget", "-o", out)
    assert printed.exit_code == written.exit_code == 0, written.output
    assert written.stdout == f"wrote {out}\n"
    assert out.read_text(encoding="utf-8") == printed.stdout


def test_a_folder_or_a_path_that_cannot_be_written_is_refused_before_reading(tmp_path):
    missing = tmp_path / "no-results-here"
    said = table(missing, "-o", tmp_path)
    assert said.exit_code == 2 and said.stderr == (
        f"Error: {tmp_path}: is a folder; give -o a file name, e.g. {tmp_path / 'table.md'}\n"
    )
    said = table(missing, "-o", tmp_path / "none" / "t.md")
    assert said.exit_code == 2 and "t.md: cannot be written" in said.stderr
    assert not (tmp_path / "none").exists()


def test_a_file_there_is_kept_when_the_folder_is_refused(tmp_path):
    out = tmp_path / "t.md"
    out.write_text("before\n")
    said = table(tmp_path / "none", "-o", out)
    assert said.exit_code == 2 and "no such file" in said.stderr
    assert out.read_text() == "before\n"
    made = tmp_path / "new.md"
    assert table(tmp_path / "none", "-o", made).exit_code == 2 and not made.exists()


def test_the_file_is_redacted_of_the_key_held(tmp_path):
    results = folder(tmp_path / "r", model=f"m-{KEY}")
    out = tmp_path / "t.md"
    said = table(results, "-o", out, env={"OPENAI_API_KEY": KEY})
    assert said.exit_code == 0, said.output
    text = out.read_text()
    assert "[redacted]" in text and KEY[8:16] not in text
