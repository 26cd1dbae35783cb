"""A plain function as the grader of an experiment (``Experiment(grader=fn)``): its verdict
or score recorded with each run, and what it does wrong recorded as the run's failure."""

import pytest

import loopbench
from tests.depot_answers import RIGHT

DEPOT = loopbench.load_taskset("depot")


def answers_right(request):
    return f"Answer: {RIGHT[request.messages[-1].content]}"


def run(tmp_path, grader, arms=("direct",)):
    experiment = loopbench.Experiment(
        tasks="depot", arms=list(arms), model=answers_right, out=tmp_path / "r", grader=grader
    )
    return experiment.run().records()


def test_a_function_returning_a_bool_grades_every_run(tmp_path):
    seen = []

    def says_public(task, answer):
        seen.append((task.id, answer))
        return task.slice == "public"

    records = run(tmp_path, says_public)
    assert len(records) == len(DEPOT.tasks) == len(seen)
    assert {(r.task_id, r.correct) for r in records} == {
        (t.id, t.slice == "public") for t in DEPOT.tasks
    }
    assert all(r.score is None and r.status == "answered" for r in records)
    # The task as its model reads it, and the pattern's answer whole.
    asked = {t.id: t.question for t in DEPOT.tasks}
    assert {(i, answer) for i, answer in seen} == {
        (i, f"Answer: {RIGHT[q]}") for i, q in asked.items()
    }


def test_a_score_is_recorded_and_correct_from_one_half(tmp_path):
    scores = {t.id: i / (len(DEPOT.tasks) - 1) for i, t in enumerate(DEPOT.tasks)}
    records = run(tmp_path, lambda task, answer: scores[task.id])
    assert {r.task_id: r.score for r in records} == pytest.approx(scores)
    assert all(r.correct is (r.score >= 0.5) for r in records)


def test_an_async_function_and_a_grade_of_its_own_are_taken(tmp_path):
    async def strict(task, answer):
        return loopbench.Grade(False, "too strict", 0.9)

    records = run(tmp_path, strict)
    assert {(r.correct, r.grade_reason, r.score) for r in records} == {(False, "too strict", 0.9)}


@pytest.mark.parametrize(
    ("grader", "says"),
    [
        (lambda task, answer: "yes", "returned 'yes' (str)"),
        (lambda task, answer: 1.5, "returned 1.5"),
        (lambda task, answer: None, "returned None"),
        (lambda task, answer: task.nothing, "raised AttributeError"),
    ],
)
def test_a_function_that_fails_or_returns_no_verdict_is_a_recorded_failure(tmp_path, grader, says):
    records = run(tmp_path, grader)
    assert len(records) == len(DEPOT.tasks)  # the grid went on
    for record in records:
        assert record.status == "pattern_error" and record.correct is None
        assert record.error.startswith("grading failed: ") and says in record.error


def test_the_table_reads_a_function_graders_runs(tmp_path):
    experiment = loopbench.Experiment(
        tasks="depot",
        arms=["direct", "cot"],
        model=answers_right,
        out=tmp_path / "r",
        grader=lambda task, answer: task.slice == "public",
    )
    table = experiment.run().table()
    public = sum(t.slice == "public" for t in DEPOT.tasks) / len(DEPOT.tasks)
    assert list(table["accuracy"]) == pytest.approx([public, public])


def test_a_function_grader_is_refused_with_an_executor_that_grades_elsewhere(tmp_path):
    class Elsewhere:
        async def __call__(self, runner, jobs, concurrency, finish):
            raise AssertionError("never reached")

    experiment = loopbench.Experiment(
        tasks="depot",
        model=answers_right,
        out=tmp_path / "r",
        grader=lambda task, answer: True,
        settings=loopbench.RunSettings(executor=Elsewhere()),
    )
    with pytest.raises(ValueError, match="grades in this process"):
        experiment.run()
    assert not (tmp_path / "r").exists()
