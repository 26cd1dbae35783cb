"""The exact grader's two rules: strict (the default; the final answer, hedges refused) and
seed 003's (every expected entity named, nothing else checked), which still gives the
committed reference run's verdicts."""

import asyncio
import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from loopbench.graders.base import GraderSetup
from loopbench.graders.registry import GRADERS
from loopbench.graders.task_models import Task
from loopbench.harness.errors import BadInput
from loopbench.tasks.loading import load_taskset

ROOT = Path(__file__).parents[2]
REFERENCE = ROOT / "results" / "reference"


def exact(**options):
    return GRADERS.lookup("exact").build(GraderSetup(Path("."), options=options))


def verdict(expected, answer, **options):
    task = Task(id="q", question="Which depot, and who runs it?", expected=expected)
    return asyncio.run(exact(**options).grade(task, answer))


ROTTERDAM = {"numbers": [79], "entities": ["Rotterdam"], "distractors": ["Gdansk", "Porto"]}
HAMBURG = {"numbers": [59], "entities": ["Hamburg"], "distractors": ["Lyon", "Turin"]}
TWO = {"entities": ["Mira Takacs", "Rotterdam"], "distractors": ["Joris Vos", "Antwerp"]}


@pytest.mark.parametrize(
    ("expected", "answer", "correct", "reason"),
    [
        (
            ROTTERDAM,
            "Rotterdam, Gdansk, Porto or Leeds: 79",
            False,
            "hedged: names 'Gdansk', 'Porto'",
        ),
        (TWO, "Mira Takacs or Joris Vos; Rotterdam or Antwerp", False, "hedged: names"),
        (TWO, "Mira Takacs, Rotterdam", True, "names 'Mira Takacs', 'Rotterdam'"),
        (TWO, "Rotterdam, not Antwerp; Mira Takacs", True, ""),
        (TWO, "Mira Takacs. It isn't the Antwerp depot, it is Rotterdam", True, ""),
        (TWO, "Mira Takacs; not Rotterdam but Antwerp", False, "hedged: names 'Antwerp'"),
        (TWO, "Mira Takacs; neither Antwerp nor Rotterdam", False, "'Rotterdam' only negated"),
        (ROTTERDAM, "Rotterdam or Leeds, 79", False, "hedged: offers 'Rotterdam' or another"),
        (ROTTERDAM, "Rotterdam (not Gdansk or Porto): 79", True, ""),
        (HAMBURG, "Hamburg (not Lyon or Turin), 59 more", True, ""),
        (HAMBURG, "It is Hamburg rather than Lyon, 59 more", True, ""),
        (ROTTERDAM, "Rotterdam is wrong: 79", False, "names 'Rotterdam' only negated"),
        (ROTTERDAM, "Rotterdam isn't right; 79", False, "names 'Rotterdam' only negated"),
        (ROTTERDAM, "Gdansk is wrong; Rotterdam, 79", True, ""),
        (ROTTERDAM, "Gdansk and Porto are wrong; Rotterdam, 79", True, ""),
        (ROTTERDAM, "Not Porto, Gdansk: 79", False, "hedged: names 'Gdansk'"),
        (ROTTERDAM, "Leeds or the Rotterdam depot, 79", False, "hedged: offers 'Rotterdam'"),
        (ROTTERDAM, "Gdansk has 41.\nAnswer: Rotterdam, 79 more", True, "numbers [79] match"),
        (ROTTERDAM, "Answer: Rotterdam (2011), 79 more", False, "expected numbers [79]"),
        (ROTTERDAM, "", False, "no answer"),
    ],
)
def test_the_strict_rule_reads_the_final_answer_and_refuses_hedges(
    expected, answer, correct, reason
):
    graded = verdict(expected, answer)
    assert (graded.correct, reason in graded.reason) == (correct, True), graded


@pytest.mark.parametrize(
    ("answer", "correct"),
    [
        ("Rotterdam, Gdansk, Porto or Leeds: 79", True),  # nothing else is checked
        ("Gdansk has 41.\nAnswer: Rotterdam, 79 more", False),  # the whole reply is read
        ("Rotterdam, 79", True),
    ],
)
def test_the_seed_rule_is_seed_003s(answer, correct):
    assert verdict(ROTTERDAM, answer, rule="seed").correct is correct


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"rule": "lenient"}, "grader 'exact': option 'rule': Input should be 'strict' or 'seed'"),
        ({"rules": "seed"}, "option 'rules': not an option of it"),
    ],
)
def test_an_unknown_option_or_rule_is_refused_in_one_line_naming_it(options, said):
    with pytest.raises(BadInput) as refused:
        exact(**options)
    assert said in str(refused.value) and "\n" not in str(refused.value)


def test_a_distractor_that_is_expected_or_that_the_question_names_is_refused():
    with pytest.raises(ValidationError, match="distractor 'rotterdam' is an expected entity"):
        Task(
            id="q",
            question="Which?",
            expected={"entities": ["Rotterdam"], "distractors": ["rotterdam"]},
        )
    with pytest.raises(ValidationError, match="distractor 'Bilbao' is named by the question"):
        Task(
            id="q",
            question="How many more trucks than the Bilbao depot?",
            expected={"numbers": [59], "distractors": ["Bilbao"]},
        )


def test_distractors_leave_a_tasks_fingerprint_as_it_was():
    plain = Task(id="q", question="Which?", expected={"entities": ["Hamburg"]})
    hedged = Task(
        id="q", question="Which?", expected={"entities": ["Hamburg"], "distractors": ["Lyon"]}
    )
    assert plain.fingerprint == hedged.fingerprint


def test_the_exact_graders_canonical_is_the_typed_reading_of_what_its_rule_reads():
    task = Task(id="q", question="Which?", expected={"entities": ["Hamburg"]})
    reply = "Lyon has 37.\nAnswer: Hamburg, fifty-nine more"
    strict, seed = exact().canonical(task, reply), exact(rule="seed").canonical(task, reply)
    assert json.loads(strict) == {"numbers": [59], "entities": ["hamburg"]}
    assert json.loads(seed) == {"numbers": [37, 59], "entities": ["hamburg", "lyon"]}
    assert strict == exact().canonical(task, "Answer: 59, Hamburg's")


def reference_runs():
    for runs in sorted(REFERENCE.glob("*/runs.jsonl")):
        for line in runs.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record["task_set"] == "depot" and record["correct"] is not None:
                yield pytest.param(record, id=f"{runs.parent.name}:{record['run_id'][:8]}")


DEPOT = {task.id: task for task in load_taskset("depot").tasks}


@pytest.mark.parametrize("record", list(reference_runs()))
def test_the_seed_rule_gives_the_committed_reference_runs_verdicts(record):
    graded = asyncio.run(exact(rule="seed").grade(DEPOT[record["task_id"]], record["answer"]))
    assert graded.correct is record["correct"]
    assert graded.reason == record["grade_reason"]


def test_the_reference_runs_hold_graded_depot_answers():
    assert list(reference_runs())


@pytest.mark.parametrize("case", GRADERS.lookup("exact").cases, ids=lambda c: c.why)
def test_the_exact_graders_self_test_cases_hold(case):
    assert verdict(case.expected, case.answer, **case.options).correct is case.correct


def test_a_short_answer_graded_again_is_given_its_verdict_again_against_its_own_key():
    grader = exact()
    rotterdam = Task(id="q", question="Which depot, and who runs it?", expected=ROTTERDAM)
    hamburg = Task(id="q", question="Which depot, and who runs it?", expected=HAMBURG)
    answer = "Rotterdam, 79 km."
    first = asyncio.run(grader.grade(rotterdam, answer))
    assert first.correct and asyncio.run(grader.grade(rotterdam, answer)) == first
    assert grader.canonical(rotterdam, answer) == grader.canonical(rotterdam, answer)
    # The same task id under another answer key is graded against that key.
    assert not asyncio.run(grader.grade(hamburg, answer)).correct


def test_a_long_answers_verdict_is_not_kept():
    grader = exact()
    task = Task(id="q", question="Which depot, and who runs it?", expected=ROTTERDAM)
    long = "Worked through. " * 100 + "Answer: Rotterdam, 79 km."
    assert asyncio.run(grader.grade(task, long)).correct
    assert grader.canonical(task, long)
    assert grader._grades == {} and grader._readings == {}  # memory stays small
