"""A grade's score is recorded with its run (``RunRecord.score``), and older records read
without one."""

import json

import loopbench
from loopbench.harness.results.records import RunRecord


def test_an_f1_sets_runs_record_their_score(tmp_path):
    folder = tmp_path / "squad"
    folder.mkdir()
    (folder / "taskset.toml").write_text('name = "squad-mini"\ngrader = "f1"\n')
    tasks = [
        {"id": "q1", "question": "Who won?", "expected": ["Denver Broncos"]},
        {"id": "q2", "question": "Who lost?", "expected": ["Carolina Panthers"]},
    ]
    (folder / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    experiment = loopbench.Experiment(
        tasks=folder, model=lambda request: "Answer: Denver", out=tmp_path / "r"
    )
    records = {r.task_id: r for r in experiment.run().records()}
    assert round(records["q1"].score, 2) == 0.67 and records["q1"].correct
    assert records["q2"].score == 0.0 and not records["q2"].correct
    frame = loopbench.load(tmp_path / "r").frame()
    assert sorted(frame["score"].round(2)) == [0.0, 0.67]


def test_a_record_without_a_score_reads_as_null_and_a_score_out_of_range_is_refused():
    line = {"arm": "direct", "task_id": "q1", "repeat": 0, "status": "answered"}
    assert RunRecord.model_validate(line).score is None
    for wrong in (1.5, -0.1, "0.5"):
        try:
            RunRecord.model_validate({**line, "score": wrong})
        except ValueError:
            continue
        raise AssertionError(f"score {wrong!r} was taken")
