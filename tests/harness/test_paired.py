"""`run --paired` through the runner: arms share a first attempt within a task and repeat,
never across repeats, and the shared call is counted as replayed in the arm that reused it."""

import asyncio
from dataclasses import replace

from harness.experiment import parse_arms
from harness.models.code_responder import stub
from harness.models.scripted import FunctionModel
from harness.runner import RunSettings, run_experiment
from harness.store import ResultsFolder
from tasks.taskset import load_taskset


def grid(tmp_path, paired):
    coding = load_taskset("coding")
    one = replace(coding, tasks=coding.tasks[:1])
    model = FunctionModel(lambda request: f"```python\n{stub('x')}```")
    arms = parse_arms(["direct", "reflexion:check=tests,attempts=2"])
    meta = {"task_set": one.name, "model": "m", "base_url": "", "fingerprint": one.fingerprint()}
    with ResultsFolder.open(tmp_path / str(paired), meta) as folder:
        asyncio.run(run_experiment(one, arms, 2, model, "m", folder, RunSettings(paired=paired)))
        records = folder.records()
    return model, records


def test_paired_arms_share_the_first_attempt_of_each_repeat(tmp_path):
    model, records = grid(tmp_path, paired=True)
    # Per repeat: one shared first attempt, and reflexion's one retry of its own.
    assert len(model.requests) == 2 * 2
    assert sum(r.cache_hits for r in records) == 2  # one arm replayed it, in each repeat


def test_without_pairing_every_arm_asks_for_itself(tmp_path):
    model, records = grid(tmp_path, paired=False)
    assert len(model.requests) == 2 * 3
    assert sum(r.cache_hits for r in records) == 0
