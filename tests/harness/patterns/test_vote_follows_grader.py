"""self_consistency votes on the task set's grader's reading of each answer (its
``canonical``): on a choice-like set, the option chosen; on an exact set, the typed
reading, its tie-break by support included. The record keeps that reading, and whether
repeats agree compares it."""

import asyncio

import pytest
from pydantic import BaseModel

import loopbench
from loopbench.graders.reading import answer_text
from loopbench.harness.arms import parse_arm
from loopbench.harness.models.scripted import ScriptedModel
from loopbench.harness.results.columns_sql import answer_key
from loopbench.harness.runner import Job, Runner
from loopbench.tasks.loading import load_taskset

LETTERS = "ABCDEFGH"


class PickExpected(BaseModel):
    choices: list[str]
    answer: str


class PickTask(loopbench.TaskBase):
    expected: PickExpected


class Pick(loopbench.Grader[PickTask]):
    """Reads the option an answer chooses, by its letter or its text."""

    def canonical(self, task: PickTask, answer: str) -> str:
        said = (answer_text(answer).value or "").strip(" .").lower()
        texts = [c.lower() for c in task.expected.choices]
        if len(said) == 1 and said.upper() in LETTERS[: len(texts)]:
            return said.upper()
        return LETTERS[texts.index(said)] if said in texts else said

    async def grade(self, task: PickTask, answer: str) -> loopbench.Grade:
        chosen = self.canonical(task, answer)
        return loopbench.Grade(chosen == task.expected.answer, f"chose {chosen}")


@pytest.fixture
def pick_set(registries, tmp_path):
    loopbench.register_grader("pick", PickTask, "the option chosen")(lambda setup: Pick())
    folder = tmp_path / "cities"
    folder.mkdir()
    (folder / "taskset.toml").write_text('name = "cities"\ngrader = "pick"\n')
    (folder / "tasks.jsonl").write_text(
        '{"id": "q1", "question": "Which city is the largest?", '
        '"expected": {"choices": ["Paris", "Lyon", "Nice"], "answer": "B"}}\n'
    )
    return load_taskset(str(folder))


def run(taskset, spec, replies, task_id=None):
    task = next(t for t in taskset.tasks if task_id in (None, t.id))
    runner = Runner(taskset, ScriptedModel(replies), "m")
    record, _ = asyncio.run(runner.run_one(Job(parse_arm(spec), task, 0)))
    return record


def test_self_consistency_on_a_choice_set_votes_on_the_option_chosen(pick_set):
    # As text (or as typed readings), "A", "B" and "Lyon" are three answers one vote each;
    # as options, B ("B" and "Lyon") has two.
    record = run(pick_set, "self_consistency:samples=3", ["Answer: A", "Answer: Lyon", "Answer: B"])
    assert (record.answer, record.correct, record.canonical) == ("B", True, "B")
    assert record.metrics["agreement"] == pytest.approx(2 / 3)
    assert record.metrics["distinct_readings"] == 2


def test_on_an_exact_set_the_vote_is_the_typed_one_support_included():
    depot = load_taskset("depot")
    samples = ["Answer: Bilbao, 59", "Answer: Hamburg has 59 more trucks than Bilbao"]
    record = run(depot, "self_consistency:samples=2", samples, "most-trucks")
    assert record.answer == "Hamburg has 59 more trucks than Bilbao" and record.correct
    assert record.metrics["distinct_readings"] == 2


def test_repeats_agree_when_their_grader_reads_them_alike(pick_set):
    said_b = run(pick_set, "direct", ["Answer: B"])
    said_lyon = run(pick_set, "direct", ["Answer: Lyon"])
    said_a = run(pick_set, "direct", ["Answer: A"])
    keys = [answer_key(r.answer, r.status, r.canonical) for r in (said_b, said_lyon, said_a)]
    assert keys[0] == keys[1] != keys[2]
    # A record without the grader's reading (written before it was recorded) is compared
    # by its text.
    assert answer_key("B", "answered") != answer_key("Lyon", "answered")
