"""Results folders graded by a judge, written record by record, for the judge's table and
comparison tests."""

import json
import random
from pathlib import Path

from loopbench.harness.results.judge_calibration import Calibration, LabelCounts, save_calibration

from .test_table import record

JUDGE_GRADER = {"name": "judge", "options": {"model": "judge-model"}, "identity": {"p": "1"}}


def judged(arm, task, repeat, correct, judge_cost=0.001, grade_status=None, **fields):
    """A run graded by the judge: its tokens and cost apart from the run's."""
    r = record(arm=arm, task=task, repeat=repeat, correct=correct, **fields)
    return r.model_copy(
        update={
            "correct": None if grade_status else r.correct,
            "grade_status": grade_status,
            "judge_tokens_in": 400,
            "judge_tokens_out": 20,
            "judge_cost_usd": judge_cost,
        }
    )


def write_folder(folder: Path, records, grader=JUDGE_GRADER, task_set="s") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [r.model_copy(update={"task_set": task_set}).model_dump_json() for r in records]
    (folder / "runs.jsonl").write_text("\n".join(lines) + "\n")
    if grader is not None:
        (folder / "experiment.json").write_text(json.dumps({"grader": grader}))
    return folder


def calibrate(folder: Path, pooled, arms=None, grader=JUDGE_GRADER) -> Calibration:
    """Writes a calibration: counts as (true_pass, false_fail, true_fail, false_pass)."""
    calibration = Calibration(
        labels_file="labels.csv",
        labels_sha256="0" * 64,
        grader=grader,
        pooled=LabelCounts(**dict(zip(_COUNTS, pooled, strict=True))),
        arms={
            arm: LabelCounts(**dict(zip(_COUNTS, counts, strict=True)))
            for arm, counts in (arms or {}).items()
        },
    )
    save_calibration(folder, calibration)
    return calibration


_COUNTS = ("true_pass", "false_fail", "true_fail", "false_pass")


def verdicts(arm_rates, tasks=12, repeats=3, seed=0):
    """Per arm, each (task, repeat) passed by the judge with the given chance."""
    rng = random.Random(seed)
    return [
        judged(arm, f"t{t}", repeat, rng.random() < rate)
        for arm, rate in arm_rates.items()
        for t in range(tasks)
        for repeat in range(repeats)
    ]
