"""A grid run in rounds until its arms are told apart (``run --until-separated``).

Round k runs repeat k-1 of every arm still running over every task, then the stopping
rule (``loopbench.harness.stats.separation``) is replayed on the records: an arm decided better,
worse or within the margin of the best stops; the run ends when one arm is left running
or after ``max_repeats`` rounds. Each round goes through ``run_experiment``, so a killed
run resumes where it was, and the rule is saved beside the records so ``table`` can
replay the decisions and count the runs not spent.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from loopbench.harness.grid import Grid, GridResult, run_grid
from loopbench.harness.models.types import ModelClient
from loopbench.harness.observer import Observer
from loopbench.harness.results.records import RunRecord
from loopbench.harness.results.store import ResultsFolder
from loopbench.harness.runner import RunSettings
from loopbench.harness.stats.separation import Separation, SeparationRule, StoppedRun


async def run_until_separated(
    grid: Grid,
    rule: SeparationRule,
    client: ModelClient,
    folder: ResultsFolder,
    settings: RunSettings | None = None,
    observer: Observer | None = None,
) -> tuple[GridResult, Separation]:
    """Run rounds of ``grid`` (its repeats aside) until the rule stops every arm but one;
    returns the runs made and where the decisions stand."""
    watch = observer or Observer()
    arms, tasks = grid.arms, grid.taskset.tasks
    stopped = StoppedRun(rule, [arm.spec for arm in arms], [task.id for task in tasks])
    stopped.save(folder.path)
    records = folder.records()  # once: each round adds the records it writes
    recorded = sum(map(_in_scope(stopped), records))
    ran = 0
    running = arms
    state = stopped.replay([])
    for round_ in range(1, rule.max_repeats + 1):
        this_round = replace(grid, arms=running, repeats=round_)
        keeping = _Keeping(watch)
        result = await run_grid(this_round, client, folder, settings, keeping, records)
        ran += result.ran
        records = _current(records, keeping.records)
        state = stopped.replay(records)
        watch.decided(state)
        if state.done:
            break
        # guard: stopped-arm-runs-no-more
        running = [arm for arm in arms if arm.spec in state.running]
    return GridResult(ran=ran, skipped=recorded), state


class _Keeping(Observer):
    """Tells ``inner`` everything, and keeps the records a round writes."""

    def __init__(self, inner: Observer) -> None:
        self.inner = inner
        self.records: list[RunRecord] = []

    def started(self, todo: int, skipped: int, by_arm: Mapping[str, int]) -> None:
        self.inner.started(todo, skipped, by_arm)

    def recorded(self, record: RunRecord) -> None:
        self.records.append(record)
        self.inner.recorded(record)

    def decided(self, state: Separation) -> None:
        self.inner.decided(state)


def _current(records: list[RunRecord], written: list[RunRecord]) -> list[RunRecord]:
    """The folder's records after ``written`` were appended, as ``ResultsFolder.records``
    reads them: a record another supersedes (``--retry-errors``) left out."""
    replaced = {record.supersedes for record in written if record.supersedes}
    # guard: until-separated-replays-records
    return [r for r in records if r.run_id not in replaced] + written


def _in_scope(stopped: StoppedRun) -> Callable[[RunRecord], bool]:
    arms, tasks = set(stopped.arms), set(stopped.tasks)
    return lambda r: r.arm in arms and r.task_id in tasks and r.repeat < stopped.rule.max_repeats
