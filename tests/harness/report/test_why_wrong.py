"""The table counts the wrong grades the reading could not tell (a hedge, a retraction with
nothing after it, no answer), by why: in its summary, its printed table and every format,
from the columns' query and from the lines the record model reads."""

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from loopbench.graders.registry import GRADERS
from loopbench.graders.selftest import as_task, grade_one
from loopbench.harness.api import Results
from loopbench.harness.cli.main import main
from loopbench.harness.report.table import summarize
from loopbench.harness.results.columns import UNREAD, read_frame
from loopbench.harness.results.frames import records_frame
from loopbench.harness.results.grade_kinds import GRADE_KIND, KINDS, NONE, kind_code
from loopbench.harness.results.reading import read_records

FIXTURES = Path(__file__).parents[2] / "fixtures"
_CITIES = {"choices": ["Paris", "Lyon", "Nice"], "answer": "A"}
_MOOD = {"label": "positive", "labels": ["positive", "negative"]}

#: Replies graded by the graders themselves, with the kind their reason says.
GRADED = [
    ("number", 18, "Answer: 17 or 18", "hedged"),
    ("number", 18, "Answer: 18 or more", "hedged"),
    ("number", 18, "Answer: 18\n\nWait, I made an error.", "retracted"),
    ("number", 18, "", "no_answer"),
    ("number", 18, "I cannot say.", "no_answer"),
    ("number", 18, "Answer: 17", None),
    ("number", 18, "Answer: 18", None),
    ("choice", _CITIES, "Answer: A or B", "hedged"),
    ("choice", _CITIES, "Answer: B\n\nHmm, wait. Actually that's wrong.", "retracted"),
    ("choice", _CITIES, "I don't know.", "no_answer"),
    ("choice", _CITIES, "Answer: B", None),
    ("label", _MOOD, "positive or negative", "hedged"),
    ("label", _MOOD, "Hard to say.", "no_answer"),
    ("exact", {"numbers": [84], "entities": ["Rotterdam"], "distractors": ["Gdansk"]},
     "Rotterdam or Gdansk, 84", "hedged"),
    ("exact", {"numbers": [84]}, "", "no_answer"),
    ("f1", {"answers": ["Paris"]}, "", "no_answer"),
    ("json", {"fields": {"a": 1}}, '{"a": 1} or {"a": 2}', "hedged"),
    ("json", {"fields": {"a": 1}}, '{"a": 1}\nWait, that is wrong.', "retracted"),
    ("json", {"fields": {"a": 1}}, "no json here", "no_answer"),
    ("regex", {"pattern": "\\d+"}, "", "no_answer"),
    ("game24", {"numbers": [4, 9, 10, 13]}, "", "no_answer"),
]  # fmt: skip


@pytest.mark.parametrize(("grader", "expected", "reply", "kind"), GRADED)
def test_each_graders_reason_is_read_as_its_kind(grader, expected, reply, kind):
    info = GRADERS.lookup(grader)
    grade = grade_one(info, as_task(info, expected), reply, {})
    code = kind_code(grade.correct, grade.reason)
    assert (list(KINDS)[code] if code != NONE else None) == kind, grade.reason


def test_a_right_or_ungraded_run_has_no_kind_whatever_its_reason_says():
    assert kind_code(True, "hedged: chooses A, B") == NONE
    assert kind_code(None, "no answer") == NONE
    assert kind_code(False, "") == NONE
    assert kind_code(False, "expected numbers [25], found [84]") == NONE


def _record(arm, task, repeat, correct, reason, status="answered", **more):
    return {
        "schema_version": 2,
        "run_id": f"{arm}-{task}-{repeat}",
        "experiment_id": "e",
        "arm": arm,
        "pattern": arm,
        "options": {},
        "task_set": "s",
        "task_id": task,
        "repeat": repeat,
        "model": "m",
        "status": status,
        "answer": "18" if status == "answered" else None,
        "correct": correct if status == "answered" else None,
        "grade_reason": reason,
        "turns": 1,
        "latency_s": 1.0,
        "started_at": "2026-01-01T00:00:00Z",
        **more,
    }


#: cot: hedged 2, retracted 1, no answer 2 (one in each wording), one plain wrong, three
#: right (one whose reason starts "hedged:": never counted), and a run ended by its budget;
#: direct: right and plainly wrong only.
RUNS = [
    _record("cot", "t1", 0, False, "hedged: states 17, 18; expected 18"),
    _record("cot", "t2", 0, False, "hedged: chooses A, B"),
    _record("cot", "t3", 0, False, "retracted: corrected with no answer after it"),
    _record("cot", "t4", 0, False, "no answer"),
    _record("cot", "t5", 0, False, "states no number; expected 18"),
    _record("cot", "t6", 0, False, "final number 17; expected 18"),
    _record("cot", "t7", 0, True, "final number 18 matches"),
    _record("cot", "t8", 0, True, "final number 18 matches"),
    _record("cot", "t10", 0, True, "hedged: but right, says a grader of one's own"),
    _record("cot", "t9", 0, None, "not graded: step_budget", status="step_budget"),
    _record("direct", "t1", 0, True, "final number 18 matches"),
    _record("direct", "t2", 0, False, "final number 17; expected 18"),
]
COUNTS = {
    "cot": {"wrong_hedged": 2, "wrong_retracted": 1, "wrong_no_answer": 2},
    "direct": {"wrong_hedged": 0, "wrong_retracted": 0, "wrong_no_answer": 0},
}


def _folder(path, runs):
    path.mkdir()
    lines = [json.dumps(run) for run in runs]
    # Lines the query leaves to the record model: a comma before a bracket inside a string,
    # and a key given twice (the last counts).
    lines[0] = json.dumps(runs[0] | {"answer": "18 (f(a, b,) or {1, 2, })"})
    if len(runs) > 2 and "grade_reason" in runs[2]:
        twice = json.dumps(runs[2] | {"grade_reason": "no answer"})[:-1]
        lines[2] = f'{twice}, "grade_reason": {json.dumps(runs[2]["grade_reason"])}}}'
    (path / "runs.jsonl").write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def results(tmp_path):
    return _folder(tmp_path / "r", RUNS)


def _counts(summary):
    return {row["arm"]: {k: row[k] for k in COUNTS["cot"]} for _, row in summary.iterrows()}


def test_the_summary_counts_wrong_grades_by_why(results):
    assert _counts(summarize(read_frame(results, drop=UNREAD))) == COUNTS
    assert _counts(Results(results).table()) == COUNTS
    # The frame of records (the runs a session just made) counts alike.
    frame = records_frame(read_records(results))
    assert _counts(summarize(frame)) == COUNTS
    assert frame[GRADE_KIND].equals(read_frame(results)[GRADE_KIND])


def test_a_frame_built_without_the_kinds_reads_them_from_its_reasons(results):
    frame = records_frame(read_records(results)).drop(columns=[GRADE_KIND])
    assert _counts(summarize(frame)) == COUNTS
    assert _counts(summarize(frame.drop(columns=["grade_reason"])))["cot"]["wrong_hedged"] == 0


def test_the_kinds_take_one_byte_a_run(results):
    column = read_frame(results, drop=UNREAD)[GRADE_KIND]
    assert isinstance(column.dtype, pd.CategoricalDtype) and column.cat.codes.dtype.itemsize == 1


def table(*args):
    result = CliRunner().invoke(main, ["table", *map(str, args)])
    assert result.exit_code == 0, result.output
    return result.output


def test_the_printed_table_says_why_wrong_and_every_format_counts(results):
    printed = table(results)
    assert "why wrong" in printed and "hedged 2, retracted 1, no answer 2" in printed
    assert "why wrong: runs graded wrong because the reading could not tell" in printed
    rows = {row["arm"]: row for row in json.loads(table(results, "--format", "json"))}
    assert {arm: {k: rows[arm][k] for k in COUNTS["cot"]} for arm in rows} == COUNTS
    csv = pd.read_csv(pd.io.common.StringIO(table(results, "--format", "csv")))
    assert csv.set_index("arm").loc["cot", "wrong_no_answer"] == 2


def test_no_column_when_nothing_is_counted(tmp_path):
    plain = _folder(tmp_path / "plain", [run for run in RUNS if run["arm"] == "direct"])
    printed = table(plain)
    assert "why wrong" not in printed and "| direct" in printed
    rows = json.loads(table(plain, "--format", "json"))
    assert rows[0]["wrong_hedged"] == rows[0]["wrong_no_answer"] == 0


def test_an_older_folder_loads_and_counts_none(tmp_path):
    older = shutil.copytree(FIXTURES / "results-0.1.0", tmp_path / "older")
    rows = json.loads(table(older, "--format", "json"))
    assert rows and all(row["wrong_hedged"] == row["wrong_retracted"] == 0 for row in rows)
    assert all(row["wrong_no_answer"] == 0 for row in rows)
    assert "why wrong" not in table(older)
    # Records written before grade_reason was kept: the field absent from every line.
    bare = [{k: v for k, v in run.items() if k != "grade_reason"} for run in RUNS]
    rows = json.loads(table(_folder(tmp_path / "bare", bare), "--format", "json"))
    assert [row["wrong_hedged"] + row["wrong_no_answer"] for row in rows] == [0, 0]
