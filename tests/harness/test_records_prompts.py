"""An arm's prompt texts are stored once per results folder (prompts/<sha256>.json) and
referenced from each record; every reader puts them back, so records read as they did when
the texts were inline, as they still are in older folders."""

import hashlib
import json
import os

import pytest
from click.testing import CliRunner

import loopbench
from loopbench.harness.cli.main import main
from loopbench.harness.results.columns import read_frame
from loopbench.harness.results.reading import read_records

TERSE = "Think briefly, a line that is easy to find. End with a line 'Answer: X'."
TERSE_SLOTS = {"step": TERSE}


def run(out, *arms, limit=2):
    loopbench.Experiment(
        "depot", list(arms), model=lambda _: "Answer: 84", out=out, limit=limit
    ).run()
    return out


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def prompted(tmp_path):
    terse = tmp_path / "terse.toml"
    terse.write_text(f"step = {json.dumps(TERSE)}\n")
    (tmp_path / "say.toml").write_text("answer = 'Answer tersely, stage two.'\n")
    stage = f"pipeline:stages=direct>direct;prompts={tmp_path / 'say.toml'}"
    return run(tmp_path / "results", "cot", f"cot:prompts={terse}", stage)


def test_a_prompt_text_is_written_once_and_read_back_by_every_reader(prompted):
    runs = (prompted / "runs.jsonl").read_text()
    assert TERSE not in runs and "stage two" not in runs
    stored = sorted((prompted / "prompts").iterdir())
    assert len(stored) == 2  # one per distinct prompts dict, whatever the number of runs
    assert TERSE in "".join(p.read_text() for p in stored)
    for path in stored:
        assert path.name == f"{hashlib.sha256(path.read_bytes()).hexdigest()}.json"

    records = {r.arm: r for r in read_records(prompted)}
    assert records["cot:prompts=terse"].options["prompts"] == TERSE_SLOTS
    staged = records["pipeline:stages=direct>direct;prompts=say"].options["stages"]
    assert staged[1]["prompts"] == {"answer": "Answer tersely, stage two."}
    assert "prompts" not in records["cot"].options

    frame = read_frame(prompted)
    by_arm = dict(zip(frame["arm"], frame["options"], strict=False))
    assert by_arm["cot:prompts=terse"]["prompts"] == TERSE_SLOTS
    assert by_arm["pipeline:stages=direct>direct;prompts=say"]["stages"][1]["prompts"]


def test_table_export_report_and_resume_read_the_texts(prompted, tmp_path):
    assert cli("table", prompted).exit_code == 0
    exported = cli("export", prompted, "--format", "csv", "-o", tmp_path / "runs.csv")
    assert exported.exit_code == 0, exported.output
    assert TERSE in (tmp_path / "runs.csv").read_text()
    made = cli("report", prompted, "-o", tmp_path / "report.html")
    assert made.exit_code == 0, made.output
    assert "easy to find" in (tmp_path / "report.html").read_text()
    before = len(read_records(prompted))
    terse = tmp_path / "terse.toml"
    run(prompted, "cot", f"cot:prompts={terse}", limit=3)  # resumed: the options compared
    assert len(read_records(prompted)) == before + 2
    assert len(list((prompted / "prompts").iterdir())) == 2


def test_a_folder_with_the_texts_inline_reads_as_before(prompted, tmp_path):
    older = tmp_path / "older"
    older.mkdir()
    lines = [r.model_dump_json() for r in read_records(prompted)]
    (older / "runs.jsonl").write_text("\n".join(lines) + "\n")
    assert TERSE in (older / "runs.jsonl").read_text()
    assert read_records(older) == read_records(prompted)
    assert read_frame(older)["options"].tolist() == read_frame(prompted)["options"].tolist()


def _damage(folder, how):
    [path] = [p for p in (folder / "prompts").iterdir() if TERSE in p.read_text()]
    if how == "missing":
        path.unlink()
    elif how == "edited":
        path.write_text(path.read_text().replace("briefly", "at length"))
    elif how == "not-json":
        body = b"not json\n"
        path.unlink()
        (folder / "prompts" / f"{hashlib.sha256(body).hexdigest()}.json").write_bytes(body)
        runs = folder / "runs.jsonl"
        runs.write_text(runs.read_text().replace(path.stem, hashlib.sha256(body).hexdigest()))
    elif how == "FIFO":
        path.unlink()
        os.mkfifo(path)
    elif how == "outside":
        runs = folder / "runs.jsonl"
        runs.write_text(runs.read_text().replace(f"prompts/{path.name}", "../../etc/passwd"))
    return path


SAID = {
    "missing": "copy the folder's prompts/",
    "edited": "does not match the hash naming it",
    "not-json": "not a JSON object of prompt texts",
    "outside": 'is not {"$ref": "prompts/<sha256>.json"}',
    "FIFO": "a FIFO",
}


@pytest.mark.parametrize("how", list(SAID))
@pytest.mark.parametrize("command", ["table", "report", "export"])
def test_a_damaged_prompts_file_is_one_line_and_exit_2(prompted, tmp_path, how, command):
    _damage(prompted, how)
    args = [command, prompted]
    if command != "table":
        args += ["-o", tmp_path / ("out.html" if command == "report" else "out.csv")]
    result = cli(*args)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert SAID[how] in lines[0] and "Traceback" not in result.output
