"""Results folders graded by a scripted judge, written record by record: each run's true
rightness drawn at an arm's accuracy, the judge's verdict drawn from it at the arm's
sensitivity and specificity, so a test (and bench/judge_correction.py) knows the truth
the judge's verdicts and a person's labels are measured against."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from loopbench.harness.results.records import RunRecord

JUDGE = {"name": "judge", "options": {}, "identity": {"model": "judge-model"}}


@dataclass(frozen=True)
class ScriptedArm:
    """An arm's true accuracy, and how its judge errs on it."""

    accuracy: float
    sensitivity: float
    specificity: float


@dataclass(frozen=True)
class Simulated:
    records: list[RunRecord]
    truth: dict[str, bool]
    """By run_id: whether the answer is right (what a careful person labels)."""


def simulate(
    arms: dict[str, ScriptedArm],
    tasks: int,
    repeats: int,
    rng: np.random.Generator,
    ungraded: float = 0.0,
) -> Simulated:
    """Every arm on every task, ``repeats`` times; a share ``ungraded`` of the answers left
    without a verdict (the judge failed: ``judge_api_error``). Runs are paired: a task's
    chance of a right answer is shared by the arms (task difficulty), shifted to each arm's
    accuracy."""
    difficulty = rng.normal(0, 1, tasks)
    records, truth = [], {}
    for arm, scripted in arms.items():
        shift = float(np.log(scripted.accuracy / (1 - scripted.accuracy)))
        # The task effect centred so the arm's mean chance stays near its accuracy.
        chances = 1 / (1 + np.exp(-(shift + 0.8 * difficulty)))
        chances *= scripted.accuracy / chances.mean()
        chances = np.clip(chances, 0, 1)
        for task in range(tasks):
            for repeat in range(repeats):
                right = bool(rng.random() < chances[task])
                rate = scripted.sensitivity if right else 1 - scripted.specificity
                passed = bool(rng.random() < rate)
                run_id = f"{arm}-{task}-{repeat}"
                failed = bool(rng.random() < ungraded)
                records.append(
                    RunRecord(
                        run_id=run_id,
                        experiment_id="sim",
                        arm=arm,
                        pattern=arm,
                        task_set="open",
                        task_id=f"t{task:04d}",
                        repeat=repeat,
                        model="m",
                        status="answered",
                        answer=f"answer of {arm} to t{task} ({'right' if right else 'wrong'})",
                        correct=None if failed else passed,
                        grade_status="judge_api_error" if failed else None,
                    )
                )
                truth[run_id] = right
    return Simulated(records, truth)


def write_folder(folder: Path, records: list[RunRecord], questions: bool = True) -> Path:
    """The folder `loopbench run` would leave: experiment.json (graded by a judge),
    runs.jsonl and, with ``questions``, traces.jsonl holding each run's question."""
    folder.mkdir(parents=True, exist_ok=True)
    experiment = {"experiment_id": "sim", "task_set": "open", "model": "m", "grader": JUDGE}
    (folder / "experiment.json").write_text(json.dumps(experiment), encoding="utf-8")
    with (folder / "runs.jsonl").open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(record.model_dump_json(exclude_none=True) + "\n")
    if questions:
        with (folder / "traces.jsonl").open("w", encoding="utf-8") as handle:
            for record in records:
                request = {
                    "model": "m",
                    "system": "",
                    "messages": [{"role": "user", "content": f"Explain {record.task_id}."}],
                    "tools": [],
                    "temperature": 0.0,
                    "max_output_tokens": None,
                    "stop": [],
                }
                event = {"t": 0.0, "kind": "request", "call": 1, "request": request}
                handle.write(json.dumps({"run_id": record.run_id, "events": [event]}) + "\n")
    return folder


def label_sample(sample: Path, truth: dict[str, bool], words: tuple[str, str] = ("pass", "fail")):
    """The sample CSV with each row's label filled in from the truth."""
    limit = csv.field_size_limit(1 << 30)  # answers may be longer than its default
    try:
        with sample.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
    finally:
        csv.field_size_limit(limit)
    with sample.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            row["label"] = words[0] if truth[row["run_id"]] else words[1]
            writer.writerow(row)
    return sample
