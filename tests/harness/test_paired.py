"""`run --paired` through the runner: arms share a first attempt within a task and repeat,
never across repeats, and the shared call is counted as replayed in the arm that reused it."""

import asyncio
from dataclasses import replace

from loopbench.harness.arms import parse_arms
from loopbench.harness.fakes.code_responder import stub
from loopbench.harness.grid import Grid, run_grid
from loopbench.harness.models.scripted import FunctionModel
from loopbench.harness.results.store import ResultsFolder
from loopbench.harness.runner import RunSettings
from loopbench.tasks.loading import load_taskset


def grid(tmp_path, paired):
    coding = load_taskset("coding")
    one = replace(coding, tasks=coding.tasks[:1])
    model = FunctionModel(lambda request: f"```python\n{stub('x')}```", keep_requests=True)
    arms = parse_arms(["direct", "reflexion:check=tests,attempts=2"])
    meta = {"task_set": one.name, "model": "m", "base_url": "", "fingerprint": one.fingerprint()}
    with ResultsFolder.open(tmp_path / str(paired), meta) as folder:
        asyncio.run(run_grid(Grid(one, arms, 2, "m"), model, folder, RunSettings(paired=paired)))
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


def test_with_a_cache_pairing_survives_a_second_invocation(tmp_path):
    """An arm added in a later run starts from the first attempt the earlier run got."""
    from loopbench.harness.models.cache import ResponseCache

    coding = load_taskset("coding")
    one = replace(coding, tasks=coding.tasks[:1])
    meta = {"task_set": one.name, "model": "m", "base_url": "", "fingerprint": one.fingerprint()}
    served = iter(range(100))
    model = FunctionModel(
        lambda request: f"```python\n# attempt {next(served)}\n{stub('x')}```", keep_requests=True
    )
    cache = ResponseCache(tmp_path / "cache")
    settings = RunSettings(paired=True, cache=cache)
    firsts = []
    for arms in (["direct"], ["direct", "reflection:cycles=0"]):
        with ResultsFolder.open(tmp_path / "r", meta) as folder:
            asyncio.run(run_grid(Grid(one, parse_arms(arms), 1, "m"), model, folder, settings))
            firsts = [r.answer for r in folder.records()]
    cache.close()
    assert len(firsts) == 2 and firsts[0] == firsts[1]
    assert len(model.requests) == 1  # the added arm's first attempt was the kept one


class BrokenSandbox:
    async def run(self, code, suite):
        raise OSError(28, "No space left on device")


def test_a_grader_that_fails_is_recorded_and_the_grid_goes_on(tmp_path):
    coding = load_taskset("coding")
    two = replace(coding, tasks=coding.tasks[:2])
    meta = {"task_set": two.name, "model": "m", "base_url": "", "fingerprint": two.fingerprint()}
    model = FunctionModel(lambda request: f"```python\n{stub('x')}```", keep_requests=True)
    settings = RunSettings(sandbox=BrokenSandbox())
    with ResultsFolder.open(tmp_path / "r", meta) as folder:
        asyncio.run(run_grid(Grid(two, parse_arms(["direct"]), 1, "m"), model, folder, settings))
        records = folder.records()
    assert [r.status for r in records] == ["pattern_error", "pattern_error"]
    assert all("grading failed: OSError" in r.error for r in records)
    assert all(r.turns == 1 and r.tokens_in > 0 for r in records)  # what was spent is kept
