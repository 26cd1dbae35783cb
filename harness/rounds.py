"""A grid run in rounds until its arms are told apart (``run --until-separated``).

Round k runs repeat k-1 of every arm still running over every task, then the stopping
rule (``harness.report.separation``) is replayed on the records: an arm decided better,
worse or within the margin of the best stops; the run ends when one arm is left running
or after ``max_repeats`` rounds. Each round goes through ``run_experiment``, so a killed
run resumes where it was, and the rule is saved beside the records so ``table`` can
replay the decisions and count the runs not spent.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.experiment import Arm
from harness.models.types import ModelClient
from harness.records import RunRecord
from harness.report.separation import Separation, SeparationRule, StoppedRun
from harness.runner import GridResult, RunSettings, run_experiment
from harness.store import ResultsFolder
from tasks.taskset import TaskSet


async def run_until_separated(
    taskset: TaskSet,
    arms: list[Arm],
    rule: SeparationRule,
    client: ModelClient,
    model_name: str,
    folder: ResultsFolder,
    settings: RunSettings,
    on_start: Callable[[int, int], None] | None = None,
    on_done: Callable[[RunRecord], None] | None = None,
    on_round: Callable[[Separation], None] | None = None,
) -> tuple[GridResult, Separation]:
    """Run rounds until the rule stops every arm but one; returns the runs made and where
    the decisions stand."""
    stopped = StoppedRun(rule, [arm.spec for arm in arms], [task.id for task in taskset.tasks])
    stopped.save(folder.path)
    in_scope = _in_scope(stopped)
    recorded = sum(map(in_scope, folder.records()))
    ran = 0
    running = arms
    state = stopped.replay([])
    for round_ in range(1, rule.max_repeats + 1):
        result = await run_experiment(
            taskset, running, round_, client, model_name, folder, settings, on_start, on_done
        )
        ran += result.ran
        state = stopped.replay(folder.records())
        if on_round is not None:
            on_round(state)
        if state.done:
            break
        running = [arm for arm in arms if arm.spec in state.running]
    return GridResult(ran=ran, skipped=recorded), state


def _in_scope(stopped: StoppedRun) -> Callable[[RunRecord], bool]:
    arms, tasks = set(stopped.arms), set(stopped.tasks)
    return lambda r: r.arm in arms and r.task_id in tasks and r.repeat < stopped.rule.max_repeats
