"""What loopbench writes is safe to open: hostile ids, names and answers in a results folder.

Task ids holding a spreadsheet formula or a terminal's escape sequences, an arm named
after a prompt file holding one, a model's name and an answer holding both: every CSV
loopbench writes has them as text (a leading ``'``, OWASP's rule; read back, and opened
in LibreOffice where it is installed), and no command prints an escape sequence raw.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.cli.table import table_command
from loopbench.harness.errors import BadInput, UnknownName
from loopbench.harness.results.records import RunRecord
from loopbench.harness.spreadsheet import FORMULA_STARTS, text_cell
from loopbench.harness.terminal import ERROR_CHARS, printable

TITLE = "\x1b]0;pwn\x07"
CLEAR = "\x1b[2J"
FORMULA = '=HYPERLINK("http://x","y")'
TASKS = [FORMULA, TITLE, "-2+3", "@SUM(A1)", "+1", "\t=1", "\r=2", f"t{CLEAR}", "two\nlines"]
HOSTILE_ARM = f"direct:prompts=p{TITLE}\x7f"
ARMS = ["direct", HOSTILE_ARM]
ANSWER = f"{FORMULA} {TITLE}"
MODEL = f"fake{CLEAR}"
RAW = ("\x1b", "\x07", "\r")


def folder(path: Path, hostile_right: bool = True) -> Path:
    """A results folder of both arms on every task: ``direct`` right on every task,
    the hostile arm right on all (``hostile_right``) or wrong on all."""
    path.mkdir()
    records = [
        RunRecord(
            run_id=f"{path.name}-{a}-{t}",
            arm=arm,
            pattern="direct",
            task_set=f"set{TITLE}",
            task_id=task,
            repeat=0,
            model=MODEL,
            status="answered",
            answer=ANSWER,
            correct=arm == "direct" or hostile_right,
            grade_reason=f"{FORMULA} matches {TITLE}",
            turns=1,
            tokens_in=10,
            tokens_out=5,
            cost_usd=0.001,
        )
        for a, arm in enumerate(ARMS)
        for t, task in enumerate(TASKS)
    ]
    lines = [r.model_dump_json() for r in records]
    (path / "runs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def loopbench(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result
    return result.exit_code, result.output


def text_cells(rows: list[list[str]], header: list[str], numbers: set[str]) -> list[str]:
    return [c for row in rows for name, c in zip(header, row, strict=True) if name not in numbers]


def test_export_csv_writes_formula_cells_as_text_and_keeps_numbers(tmp_path):
    out = tmp_path / "runs.csv"
    code, said = loopbench("export", folder(tmp_path / "r"), "--format", "csv", "-o", out)
    assert code == 0, said
    with out.open(encoding="utf-8", newline="") as file:
        header, *rows = list(csv.reader(file))
    numbers = {"schema_version", "repeat", "turns", "tokens_in", "tokens_out", "cost_usd"}
    numbers |= {"tool_calls", "parse_failures", "repeated_actions", "retries", "latency_s"}
    numbers |= {"tokens_cached", "usage_missing", "usage_estimated", "cache_hits", "score"}
    assert not [c for c in text_cells(rows, header, numbers) if c.startswith(FORMULA_STARTS)]
    ids = {row[header.index("task_id")] for row in rows}
    assert ids == {f"'{t}" if t.startswith(FORMULA_STARTS) else t for t in TASKS}
    assert {row[header.index("answer")] for row in rows} == {f"'{ANSWER}"}
    assert {row[header.index("arm")] for row in rows} == set(ARMS)  # 'direct:...' is no formula
    # The numbers read back as numbers; the text, one leading ' dropped, as it was.
    back = duckdb.sql(f"SELECT * FROM '{out}'").df()
    assert back["tokens_in"].dtype.kind == "i" and back["cost_usd"].dtype.kind == "f"
    assert {t[1:] if t.startswith("'") else t for t in back["task_id"]} == set(TASKS)


def test_export_parquet_keeps_every_value_as_it_is(tmp_path):
    out = tmp_path / "runs.parquet"
    assert loopbench("export", folder(tmp_path / "r"), "-o", out)[0] == 0
    back = duckdb.sql(f"SELECT task_id, answer FROM '{out}'").df()
    assert set(back["task_id"]) == set(TASKS) and set(back["answer"]) == {ANSWER}


def test_failures_csv_writes_formula_cells_as_text(tmp_path):
    code, said = loopbench("failures", folder(tmp_path / "r", False), "--format", "csv")
    assert code == 0, said
    header, *rows = list(csv.reader(io.StringIO(said)))
    assert header == ["arm", "label", "runs", "failed", "share", "examples"]
    cells = text_cells(rows, header, {"runs", "failed", "share"})
    assert not [c for c in cells if c.startswith(FORMULA_STARTS)]
    examples = [row[5] for row in rows if row[5]]
    assert examples and all(e.startswith("'=HYPERLINK") for e in examples)
    assert not any(raw in said for raw in RAW) and "\\x1b]0;pwn\\x07" in said


def test_table_csv_writes_text_cells_as_text_and_a_negative_difference_as_a_number(tmp_path):
    results = folder(tmp_path / "r", hostile_right=False)
    code, said = loopbench("table", results, "--by", "task", "--vs", "direct", "--format", "csv")
    assert code == 0, said
    back = pd.read_csv(io.StringIO(said))
    hostile = back[back["arm"] == "direct:prompts=p\\x1b]0;pwn\\x07\\x7f"]
    assert len(hostile) == len(TASKS)
    assert (hostile["vs_difference"] == -1.0).all()  # a number, not the text '-1.0
    # Printed, so its control characters shown (a tab is kept).
    assert set(back["task"]) == {printable(text_cell(t)) for t in TASKS}


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice is not installed")
def test_libreoffice_opens_the_exported_csv_with_no_formula(tmp_path):
    """Calc reads the CSV as a user opening it would; its flat ODS says which cells are
    formulas. A CSV written without the rule is read with formulas, so the check can fail."""
    out = tmp_path / "runs.csv"
    assert loopbench("export", folder(tmp_path / "r"), "--format", "csv", "-o", out)[0] == 0
    raw = tmp_path / "raw.csv"
    raw.write_text(f'id,n\n"{FORMULA.replace(chr(34), chr(34) * 2)}",-3\n', encoding="utf-8")
    opened = {path.stem: calc(path, tmp_path) for path in (out, raw)}
    assert "table:formula" in opened["raw"] and 'office:value="-3"' in opened["raw"]
    assert "table:formula" not in opened["runs"]
    assert "&apos;=HYPERLINK(&quot;http://x&quot;,&quot;y&quot;)" in opened["runs"]
    assert 'office:value-type="float" office:value="10"' in opened["runs"]  # tokens_in


def calc(path: Path, workdir: Path) -> str:
    """``path`` opened in LibreOffice Calc (UTF-8, comma-separated) and saved as flat ODS."""
    profile = (workdir / "profile").as_uri()
    subprocess.run(
        [
            "soffice",
            f"-env:UserInstallation={profile}",
            "--headless",
            "--norestore",
            "--infilter=CSV:44,34,76,1",
            "--convert-to",
            "fods",
            "--outdir",
            str(workdir / "opened"),
            str(path),
        ],
        check=True,
        capture_output=True,
        timeout=120,
        env={**os.environ, "HOME": str(workdir)},
    )
    return (workdir / "opened" / f"{path.stem}.fods").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "args",
    [
        ["failures"],
        ["table"],
        ["table", "--by", "task"],
        ["table", "--failures"],
        ["table", "--format", "latex"],
        ["table", "--format", "html"],
        ["table", "--format", "json"],
        ["table", "--columns", "arm,accuracy,tokens_in"],
    ],
    ids=" ".join,
)
def test_printed_tables_show_escapes_and_never_print_them_raw(tmp_path, args):
    code, said = loopbench(args[0], folder(tmp_path / "r", False), *args[1:])
    assert code == 0, said
    assert not [raw for raw in RAW if raw in said], said
    if "latex" in args:
        assert "\\textbackslash{}x1b]0;pwn\\textbackslash{}x07" in said  # its escape, escaped
    elif "json" not in args:
        assert "\\x1b]0;pwn\\x07" in said  # shown, not dropped


def test_compare_shows_escapes_in_its_table_and_its_regressed_line(tmp_path):
    before, after = folder(tmp_path / "before"), folder(tmp_path / "after", False)
    code, said = loopbench("compare", before, after)
    assert code == 1  # the hostile arm regressed
    assert not [raw for raw in RAW if raw in said], said
    assert "| direct:prompts=p\\x1b]0;pwn\\x07\\x7f |" in said
    assert "REGRESSED: direct:prompts=p\\x1b]0;pwn\\x07\\x7f: " in said
    assert "\\x1b]0;pwn\\x07, " in said  # a flipped task id in its cell
    assert ", t\\x1b[2J, two\\nlines |" in said  # one line, escapes shown, not dropped


def test_tasks_list_shows_a_hostile_file_name_and_reason(tmp_path):
    tasks = tmp_path / f"t{TITLE}.jsonl"
    tasks.write_text('{"id": "a", "question": "q", "answer": "4"}\n', encoding="utf-8")
    code, said = loopbench("tasks", "list", "--tasks", tasks)
    assert code == 0, said
    assert not [raw for raw in RAW if raw in said] and "t\\x1b]0;pwn\\x07.jsonl" in said


def test_grade_shows_an_escape_in_the_answer_it_quotes():
    code, said = loopbench("grade", "--answer", f"7{TITLE}", "--expected", '{"numbers": [7]}')
    assert code == 0 and not [raw for raw in RAW if raw in said], said


def refusing(message: str):
    def refuse(*_args, **_kwargs):
        raise BadInput(message)

    return refuse


def test_an_error_line_of_143_megabytes_is_one_short_line(tmp_path, monkeypatch):
    error = "big.jsonl: line 2: " + ("x" * 1023 + "\n") * (143 * 1024)
    monkeypatch.setattr("loopbench.harness.cli.table.read_frames", refusing(error))
    result = CliRunner().invoke(main, ["table", str(tmp_path)])
    assert result.exit_code == 2
    [line] = result.output.splitlines()
    assert line.startswith("Error: big.jsonl: line 2: xxx")
    assert len(line) <= len("Error: ") + ERROR_CHARS and "characters cut" in line


def test_an_error_line_holding_escapes_and_newlines_is_one_line_shown(tmp_path, monkeypatch):
    message = f"tasks.csv: line 3: id {TITLE!s}\nsecond line{CLEAR}"
    monkeypatch.setattr("loopbench.harness.cli.table.read_frames", refusing(message))
    result = CliRunner().invoke(main, ["table", str(tmp_path)])
    assert result.exit_code == 2
    assert result.output == (
        "Error: tasks.csv: line 3: id \\x1b]0;pwn\\x07\\nsecond line\\x1b[2J\n"
    )


def test_a_usage_error_quoting_a_hostile_value_is_one_line_shown():
    result = CliRunner().invoke(main, ["table", "--format", f"md{TITLE}", "."])
    assert result.exit_code == 2
    assert not [raw for raw in RAW if raw in result.output], result.output
    assert [line for line in result.output.splitlines() if line.startswith("Error:")]


def test_a_table_cell_is_one_line_its_escapes_shown_not_dropped(tmp_path):
    code, said = loopbench("table", folder(tmp_path / "r"), "--by", "task")
    assert code == 0, said
    rows = [line for line in said.splitlines() if line.startswith("| direct")]
    assert len(rows) == len(ARMS) * len(TASKS)  # no cell broke its row
    for shown in ("two\\nlines", "\\t=1", "\\x0d=2", "t\\x1b[2J"):
        assert any(f"| {shown} " in row for row in rows), shown


def test_table_json_is_valid_json_holding_the_names_as_recorded(tmp_path):
    code, said = loopbench("table", folder(tmp_path / "r"), "--format", "json")
    assert code == 0 and "\x7f" not in said, said
    assert {row["arm"] for row in json.loads(said)} == set(ARMS)


def test_a_path_said_by_a_command_is_printed_with_its_escapes_shown(tmp_path):
    out = tmp_path / f"runs{TITLE}.csv"
    code, said = loopbench("export", folder(tmp_path / "r"), "--format", "csv", "-o", out)
    assert code == 0 and out.is_file()
    assert said.startswith(f"wrote {tmp_path}/runs\\x1b]0;pwn\\x07.csv (18 runs, ")


def test_a_wrong_name_is_one_short_line(tmp_path, monkeypatch):
    def refuse(*_args, **_kwargs):
        raise UnknownName(f"no arm {TITLE}" + "y" * 10_000)

    monkeypatch.setattr("loopbench.harness.cli.table.read_frames", refuse)
    result = CliRunner().invoke(main, ["table", str(tmp_path)])
    assert result.exit_code == 2
    [line] = result.output.splitlines()
    assert line.startswith("Error: no arm \\x1b]0;pwn\\x07yyy") and "\x07" not in result.output
    assert len(line) <= len("Error: ") + ERROR_CHARS


def test_a_refusal_is_one_short_line_without_the_group_too(tmp_path, monkeypatch):
    monkeypatch.setattr(
        "loopbench.harness.cli.table.read_frames", refusing("f.csv: " + "z\n" * 5000)
    )
    result = CliRunner().invoke(table_command, [str(tmp_path)])
    assert result.exit_code == 2
    [line] = result.output.splitlines()
    assert line.startswith("Error: f.csv: z\\nz\\n") and len(line) <= len("Error: ") + ERROR_CHARS


def test_a_wrong_option_before_the_subcommand_is_one_short_line_shown():
    result = CliRunner().invoke(main, [f"--x{TITLE}", "table"])
    assert result.exit_code == 2 and not [raw for raw in RAW if raw in result.output]
    assert result.output == "Error: No such option '--x\\x1b]0;pwn\\x07' (see 'main --help')\n"
    result = CliRunner().invoke(main, ["--" + "x" * 10_000, "table"])
    [line] = result.output.splitlines()
    assert line.startswith("Error: No such option '--xxx") and "characters cut" in line
    assert len(line) <= len("Error: ") + ERROR_CHARS
