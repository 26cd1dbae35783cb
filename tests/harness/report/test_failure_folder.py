"""A whole folder labelled from its columns gives every run the labels the rules give its
record: runs are labelled once per distinct record, and traces are read only for runs
that did not end correct."""

from __future__ import annotations

import itertools
import json
import random

import pytest

from loopbench.harness.report.failure_traces import read_traces
from loopbench.harness.report.failures import labelled_frame, labels, summarize_failures
from loopbench.harness.results.columns import UNREAD, read_frame
from loopbench.harness.results.reading import RUNS, TRACES
from loopbench.harness.results.records import RunRecord

STATUSES = ["answered", "step_budget", "unparsed", "truncated", "api_error", "pattern_error"]
ARMS = {
    "react_text": {"guard": False, "tool": "plain"},
    "cot": {},
    "best_of_n": {"n": 3},
    "coder": {},
}
ANSWERS = [None, "", "85 years", "1973 - 1889 = 94", "the Nile"]


def varied_records(count: int, seed: int = 3) -> list[RunRecord]:
    """Records that share most of their facts and differ in one or two: what the labeller's
    grouping must keep apart."""
    rng = random.Random(seed)
    records = []
    for number in range(count):
        arm = rng.choice(sorted(ARMS))
        records.append(
            RunRecord(
                run_id=f"run-{number:04d}",
                arm=arm,
                pattern=arm,
                options=dict(ARMS[arm]) if rng.random() < 0.8 else {},
                task_id=f"t{rng.randrange(6)}",
                repeat=number,
                model=rng.choice(["m1", "m2"]),
                status=rng.choice(STATUSES),
                answer=rng.choice(ANSWERS),
                correct=rng.choice([True, False, None]),
                tool_calls=rng.choice([0, 0, 1, 3]),
                repeated_actions=rng.choice([0, 0, 0, 1]),
                parse_failures=rng.choice([0, 0, 0, 2]),
                metrics={"code_edits": 1.0} if arm == "coder" else {},
            )
        )
    return records


def write_runs(folder, records, traces=None):
    folder.mkdir()
    (folder / RUNS).write_text("".join(r.model_dump_json() + "\n" for r in records))
    if traces is not None:
        (folder / TRACES).write_text(
            "".join(json.dumps({"run_id": i, "events": e}) + "\n" for i, e in traces.items())
        )
    return folder


def test_no_rule_reads_the_answer_without_a_trace():
    """A folder without traces is labelled without reading its answers."""
    for record in varied_records(300):
        given = {tuple(labels(record.model_copy(update={"answer": a}), None)) for a in ANSWERS}
        assert len(given) == 1, record


def test_every_run_gets_the_labels_of_its_own_record(tmp_path):
    records = varied_records(400)
    labelled = labelled_frame(write_runs(tmp_path / "r", records))
    assert list(labelled["run_id"]) == [r.run_id for r in records]
    assert list(labelled["labels"]) == [tuple(labels(r, None)) for r in records]
    assert list(labelled["failed"]) == [
        r.correct is False or r.status != "answered" for r in records
    ]
    assert not labelled["traced"].any()


def test_runs_alike_but_for_one_fact_are_labelled_apart(tmp_path):
    base = RunRecord(
        run_id="a", arm="react_text", pattern="react_text", options=ARMS["react_text"],
        task_id="t", repeat=0, status="answered", answer="8", correct=False, tool_calls=2,
    )  # fmt: skip
    variants = [
        base,
        base.model_copy(update={"run_id": "b", "repeat": 1, "tool_calls": 0}),
        base.model_copy(update={"run_id": "c", "repeat": 2, "options": {}, "pattern": "cot"}),
        base.model_copy(update={"run_id": "d", "repeat": 3, "parse_failures": 1}),
        base.model_copy(update={"run_id": "e", "repeat": 4, "metrics": {"code_edits": 1.0}}),
        base.model_copy(update={"run_id": "f", "repeat": 5, "repeated_actions": 1}),
    ]
    labelled = labelled_frame(write_runs(tmp_path / "r", variants))
    assert list(labelled["labels"]) == [
        ("wrong with no trace",),
        ("no evidence",),
        ("wrong with no trace",),
        ("format failure",),
        ("wrong with no trace",),
        ("repetition",),
    ]


def test_metrics_part_runs_only_by_whether_they_hold_code_edits(tmp_path):
    """Of a run's metrics the rules read only whether code_edits is there (a coding run,
    before records said so): runs whose metrics differ in anything else are labelled alike,
    and each run as it is labelled alone."""
    base = RunRecord(
        run_id="a", arm="react_text", pattern="react_text", options=ARMS["react_text"],
        task_id="t", repeat=0, status="answered", answer="8", correct=False, tool_calls=0,
    )  # fmt: skip
    metrics = [{}, {"coverage": 0.5}, {"code_edits": 1.0}, {"code_edits": 2.0, "coverage": 1.0}]
    variants = [
        base.model_copy(update={"run_id": str(n), "repeat": n, "metrics": held})
        for n, held in enumerate(metrics)
    ]
    labelled = labelled_frame(write_runs(tmp_path / "r", variants))
    assert list(labelled["labels"]) == [tuple(labels(run, None)) for run in variants]
    assert list(labelled["labels"]) == [("no evidence",)] * 2 + [("wrong with no trace",)] * 2


def test_the_frame_a_command_already_read_gives_the_same_labels(tmp_path):
    folder = write_runs(tmp_path / "r", varied_records(200))
    runs = read_frame(folder, drop=UNREAD)
    assert "answer" not in runs and "run_id" not in runs
    given = labelled_frame(folder, runs)
    alone = labelled_frame(folder)
    assert list(given["labels"]) == list(alone["labels"])
    assert list(given["failed"]) == list(alone["failed"])


def test_only_the_traces_of_runs_not_correct_are_read(tmp_path):
    right = RunRecord(
        run_id="right", arm="react_text", pattern="react_text", options=ARMS["react_text"],
        task_id="t", repeat=0, status="answered", answer="84", correct=True, tool_calls=1,
    )  # fmt: skip
    wrong = right.model_copy(update={"run_id": "wrong", "repeat": 1, "correct": False})
    call = {
        "kind": "tool_call",
        "step": 1,
        "tool": "lookup",
        "arguments": {"title": "X"},
        "ok": True,
        "result": "84",
    }
    folder = write_runs(
        tmp_path / "r",
        [right, wrong],
        {"right": [{"kind": "response", "response": "not a response"}], "wrong": [call]},
    )
    labelled = labelled_frame(folder)  # the right run's trace is damaged, and never read
    assert list(labelled["traced"]) == [False, True]
    assert list(labelled["labels"]) == [(), ("wrong but grounded",)]
    with pytest.raises(ValueError, match=r"traces.jsonl:1: damaged trace line"):
        read_traces(folder, wanted={"right"})


def test_on_several_models_each_arm_is_counted_per_model(tmp_path):
    records = varied_records(300)
    summaries = summarize_failures(labelled_frame(write_runs(tmp_path / "r", records)), 2)
    arms = {(r.model, r.arm) for r in records}
    assert [s.arm for s in summaries] == sorted(f"{m} · {a}" for m, a in arms)
    for summary in summaries:
        model, arm = summary.arm.split(" · ")
        mine = [r for r in records if (r.model, r.arm) == (model, arm)]
        failing = [r for r in mine if r.correct is False or r.status != "answered"]
        assert (summary.runs, summary.failed) == (len(mine), len(failing))
        for label, count in summary.counts.items():
            carrying = [r for r in failing if label in labels(r, None)]
            assert count == len(carrying)
            assert [e.run_id for e in summary.examples[label]] == [r.run_id for r in carrying][:2]


def test_every_combination_of_status_and_grade_is_failed_as_the_rule_says(tmp_path):
    records = [
        RunRecord(run_id=f"r{i}", arm="cot", pattern="cot", task_id="t", repeat=i,
                  status=status, correct=correct, answer="1")
        for i, (status, correct) in enumerate(itertools.product(STATUSES, [True, False, None]))
    ]  # fmt: skip
    labelled = labelled_frame(write_runs(tmp_path / "r", records))
    for record, failed, found in zip(records, labelled["failed"], labelled["labels"], strict=True):
        assert failed == (record.correct is False or record.status != "answered")
        assert bool(found) == failed
