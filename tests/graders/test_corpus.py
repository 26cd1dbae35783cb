"""The labelled corpus of replies (loopbench/graders/corpus/): well formed, large enough, every
answer grader and style in it, shipped in the wheel; and its runner
(loopbench/graders/corpus_check.py)."""

import json
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from loopbench.graders import corpus_check
from loopbench.graders.corpus_check import (
    REPLIES,
    RESTYLED,
    STYLES,
    CorpusError,
    agreement_lines,
    check,
    check_restyled,
    load_replies,
    load_restyled,
    tally,
)
from loopbench.harness.cli.main import main

ROOT = Path(__file__).parents[2]
#: Every grader that reads a reply's answer (code_tests runs code, and is not in it).
ANSWER_GRADERS = {"choice", "number", "label", "exact", "em", "f1", "json", "regex", "game24"}
RESTYLED_GRADERS = {"choice", "number", "label", "em", "f1", "exact", "game24"}
REPLY_KEYS = {"grader", "expected", "reply", "correct", "why", "style"}
ANSWER_KEYS = {"id", "grader", "expected", "correct", "why", "replies"}


def lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_every_reply_line_is_well_formed():
    rows = lines(REPLIES)
    assert len(rows) >= 400
    for row in rows:
        assert REPLY_KEYS <= set(row) <= REPLY_KEYS | {"options"}, row
        assert row["grader"] in ANSWER_GRADERS and row["style"] in STYLES, row
        assert isinstance(row["correct"], bool) and row["reply"].strip(), row
        assert row["why"].strip() and "\n" not in row["why"], row
    assert len({(r["grader"], json.dumps(r["expected"]), r["reply"]) for r in rows}) == len(rows)


def test_every_restyled_answer_is_well_formed():
    rows = lines(RESTYLED)
    assert len(rows) >= 30
    assert len({row["id"] for row in rows}) == len(rows)
    for row in rows:
        assert ANSWER_KEYS <= set(row) <= ANSWER_KEYS | {"options"}, row
        assert len(row["replies"]) >= 5, row["id"]
        assert {r["style"] for r in row["replies"]} <= set(STYLES), row["id"]
        assert len({r["reply"] for r in row["replies"]}) == len(row["replies"]), row["id"]
    assert {row["grader"] for row in rows} >= RESTYLED_GRADERS
    assert {row["correct"] for row in rows} == {True, False}


def test_the_shipped_files_load_with_every_grader_and_style_right_and_wrong():
    replies = load_replies()
    assert {(r.grader, r.case.correct) for r in replies} == {
        (grader, correct) for grader in ANSWER_GRADERS for correct in (True, False)
    }
    assert {r.style for r in replies} == set(STYLES)
    answers = load_restyled()
    assert len(answers) >= 30 and all(len(a.replies) >= 5 for a in answers)
    assert {len({r.case.correct for r in a.replies}) for a in answers} == {1}


def test_about_half_the_replies_are_right():
    replies = load_replies()
    right = sum(r.case.correct for r in replies)
    assert 0.4 <= right / len(replies) <= 0.6


def test_the_corpus_is_package_data_of_the_wheel():
    from setuptools.config.pyprojecttoml import apply_configuration
    from setuptools.dist import Distribution

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dist = apply_configuration(Distribution(), ROOT / "pyproject.toml")
        build = dist.get_command_obj("build_py")
        build.ensure_finalized()
        build.manifest_files = {}  # what package-data ships, without a manifest run
        shipped = build.find_data_files("loopbench.graders", str(ROOT / "loopbench" / "graders"))
    names = {Path(name).relative_to(ROOT / "loopbench" / "graders").as_posix() for name in shipped}
    assert {"corpus/replies.jsonl", "corpus/restyled.jsonl"} <= names


def write(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


NUMBER = {"grader": "number", "expected": 18, "style": "terse"}


def tiny(tmp_path):
    """A corpus of two replies: the grader agrees with one verdict and passes the other."""
    right = {**NUMBER, "reply": "Answer: 18", "correct": True, "why": "answer line 18"}
    wrong = {**NUMBER, "reply": "Answer: 18 or 20", "correct": True, "why": "labelled wrongly"}
    return write(tmp_path / "replies.jsonl", [right, wrong])


def test_the_runner_grades_each_reply_against_its_verdict(tmp_path):
    checked = check(load_replies(tiny(tmp_path)))
    assert [one.agrees for one in checked] == [True, False]
    assert [one.false_pass for one in checked] == [False, False]
    counts = tally(checked)["number"]
    assert (counts.total, counts.agree, counts.false_passes, counts.false_fails) == (2, 1, 0, 1)


def test_a_pass_the_careful_reader_refuses_is_a_false_pass(tmp_path):
    row = {**NUMBER, "reply": "Answer: 18", "correct": False, "why": "labelled wrongly"}
    (checked,) = check(load_replies(write(tmp_path / "r.jsonl", [row])))
    assert checked.false_pass and not checked.agrees
    assert "1 false passes" in agreement_lines([checked], [])[0]


def test_restyled_answers_are_alike_when_every_restyling_gets_one_verdict(tmp_path):
    replies = [{"style": "terse", "reply": "18"}, {"style": "gsm8k", "reply": "#### 18"}]
    mixed = [*replies, {"style": "hedge", "reply": "18 or 20"}]
    rows = [
        {**NUMBER, "id": "same", "correct": True, "why": "18", "replies": replies},
        {**NUMBER, "id": "mixed", "correct": True, "why": "18", "replies": mixed},
    ]
    for row in rows:
        del row["style"]
    answers = check_restyled(load_restyled(write(tmp_path / "s.jsonl", rows)))
    assert [answer.alike for answer in answers] == [True, False]
    assert "1/2 answers graded alike" in agreement_lines([], answers)[-1]


@pytest.mark.parametrize(
    ("row", "said"),
    [
        ('{"grader": "number", "expected": 18}', "field 'reply'"),
        ("not json", "not JSON"),
        ({**NUMBER, "reply": "18", "correct": "yes", "why": "w"}, "field 'correct'"),
        ({**NUMBER, "grader": "nope", "reply": "18", "correct": True, "why": "w"}, "'grader'"),
        ({**NUMBER, "expected": "many", "reply": "18", "correct": True, "why": "w"}, "expected"),
        (
            {**NUMBER, "options": {"tolerance": -1}, "reply": "18", "correct": True, "why": "w"},
            "options",
        ),
        (
            {**NUMBER, "grader": "code_tests", "reply": "x", "correct": True, "why": "w"},
            "runs code",
        ),
    ],
)
def test_a_bad_line_is_refused_in_one_line_naming_it(tmp_path, row, said):
    good = {**NUMBER, "reply": "18", "correct": True, "why": "w"}
    path = tmp_path / "replies.jsonl"
    text = row if isinstance(row, str) else json.dumps(row)
    path.write_text(json.dumps(good) + "\n" + text + "\n", encoding="utf-8")
    with pytest.raises(CorpusError) as refused:
        load_replies(path)
    message = str(refused.value)
    assert message.startswith(f"{path}:2: ") and said in message and "\n" not in message


def test_self_test_prints_the_corpus_agreement_and_fails_on_it_only_when_it_must(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(corpus_check, "REPLIES", tiny(tmp_path))
    informing = CliRunner().invoke(main, ["grade", "--self-test"])
    assert informing.exit_code == 0, informing.output
    assert "corpus number  1/2 agree (50%), 0 false passes, 1 false fails" in informing.output
    assert "answers graded alike" in informing.output
    assert informing.output.splitlines()[-1].endswith(" 0 failed")
    monkeypatch.setattr(corpus_check, "CORPUS_MUST_AGREE", True)
    failing = CliRunner().invoke(main, ["grade", "--self-test"])
    assert failing.exit_code == 1
    assert "FAIL number 'Answer: 18 or 20'" in failing.output
