"""A grid: every (model, arm, task, repeat) not already recorded in a results folder, run
by the executor (this process, or Ray workers) and written by this process alone.

Jobs are made as they are taken, so a grid of any size starts at once. A run handed over
twice (a remote task retried after its result came back) is written once.
"""

from __future__ import annotations

import gc
import random
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from loopbench.harness.arms import Arm
from loopbench.harness.executors.local import run_local
from loopbench.harness.models.types import ModelClient
from loopbench.harness.observer import Observer
from loopbench.harness.results.reading import ResultsError, RunKey, run_key
from loopbench.harness.results.records import RunRecord
from loopbench.harness.results.store import RecordWriter, ResultsFolder
from loopbench.harness.runner import Job, Runner, RunSettings
from loopbench.tasks.mcp_tools import stop_servers
from loopbench.tasks.taskset import TaskSet


@dataclass(frozen=True)
class Grid:
    """What a grid runs: its task set, arms, repeats and models."""

    taskset: TaskSet
    arms: list[Arm]
    repeats: int
    model_name: str
    """The model of every run; with several, the one a request names (see ``models``)."""
    models: Sequence[str] = ()
    """Several models as an axis: the client answers each request by its model (a
    ``ModelRouter``)."""

    @property
    def model_names(self) -> list[str]:
        return list(self.models) or [self.model_name]

    def jobs(self) -> Iterator[Job]:
        """Repeats outermost, so a grid cut short still covers every arm and task evenly.

        Within a repeat the order is shuffled (seeded by the repeat, so a resumed grid sees
        the same order): otherwise one arm would always run right after another, and a
        server's prompt cache or a drifting load would favour one arm's latency and cost.
        """
        for repeat in range(self.repeats):
            jobs = [
                Job(arm, task, repeat, model=model)
                for task in self.taskset.tasks
                for arm in self.arms
                for model in self.model_names
            ]
            random.Random(repeat).shuffle(jobs)
            yield from jobs


@dataclass(frozen=True)
class GridResult:
    ran: int
    skipped: int


def refuse_other_options(records: list[RunRecord], arms: list[Arm], where: Path) -> None:
    """Refuse to add runs of an arm whose recorded runs resolved an option otherwise (a
    default changed since they were made): one arm's runs must mean one configuration.
    An option a record does not hold (added since) is not compared."""
    resolved = {arm.spec: arm.resolved for arm in arms}
    for record in records:
        now = resolved.get(record.arm)
        if now is None:
            continue
        differs = [
            f"{key} {record.options[key]!r} there, {now[key]!r} now"
            for key in sorted(set(record.options) & set(now))
            if record.options[key] != now[key]
        ]
        # guard: resume-refuses-other-resolved
        if differs:
            raise ResultsError(
                f"{where}: runs of {record.arm} there were made with other options "
                f"({'; '.join(differs)}); adding to them would mix two configurations under "
                "one arm. Give another --out, or set the options as they were"
            )


#: The errors of Python's sqlite3, the module behind the response cache and nothing else a
#: run touches. Before the cache was bypassed on failing, such an error ended the run.
_SQLITE_ERROR = re.compile(
    r"(DatabaseError|OperationalError|IntegrityError|InternalError|ProgrammingError"
    r"|DataError|NotSupportedError|InterfaceError): "
)


def cache_fault(record: RunRecord) -> bool:
    """Whether a response cache that failed ended the run (recorded as pattern_error by
    loopbench before the cache was bypassed on failing): not the endpoint's doing, nor the
    pattern's, so ``--retry-errors`` runs it again."""
    # guard: cache-retry-errors-leaves-pattern
    return record.status == "pattern_error" and bool(_SQLITE_ERROR.match(record.error or ""))


#: What ``--retry-errors`` runs again: an endpoint's failure, and a tool server's.
RETRIED = frozenset({"api_error", "tool_error"})


def recorded_runs(
    records: list[RunRecord], taskset: TaskSet, retry_errors: bool = False
) -> tuple[set[RunKey], dict[RunKey, str]]:
    """The runs already done, and those to run again with the run_id each supersedes: a
    run whose task has changed since (its question or expected answer), and with
    ``retry_errors`` a run that ended in api_error or tool_error or that a cache fault
    ended (see ``cache_fault``). A record written before task fingerprints is taken as it is."""
    fingerprints = {t.id: t.fingerprint for t in taskset.tasks}
    recorded = {run_key(r): r for r in records}
    # guard: cache-retry-errors-reruns-runs
    again = {
        key: record.run_id
        for key, record in recorded.items()
        if record.task_fingerprint not in ("", fingerprints.get(record.task_id))
        or (retry_errors and (record.status in RETRIED or cache_fault(record)))
    }
    return recorded.keys() - again.keys(), again


async def run_grid(
    grid: Grid,
    client: ModelClient,
    folder: ResultsFolder,
    settings: RunSettings | None = None,
    observer: Observer | None = None,
    recorded: list[RunRecord] | None = None,
) -> GridResult:
    """Run every (model, arm, task, repeat) of ``grid`` not already recorded in ``folder``
    (``recorded``: its records, when the caller holds them; read from it otherwise).

    Refused (ResultsError) before any run when the folder holds runs of an arm under other
    resolved options. With ``settings.retry_errors``, a run recorded as api_error is run
    again; its new record supersedes the old one, which stays in the log.
    """
    watch = observer or Observer()
    settings = settings or RunSettings()
    records = folder.records() if recorded is None else recorded
    refuse_other_options(records, grid.arms, folder.path)
    done, again = recorded_runs(records, grid.taskset, settings.retry_errors)
    names = grid.model_names
    in_grid = {(m, a.spec, t.id) for m in names for a in grid.arms for t in grid.taskset.tasks}
    runs_of = {(m, a.spec): 0 for m in names for a in grid.arms}
    for model, arm, task, repeat in done:
        if (model, arm, task) in in_grid and repeat < grid.repeats:
            runs_of[(model, arm)] += 1
    skipped = sum(runs_of.values())
    each = len(grid.taskset.tasks) * grid.repeats
    by_arm: dict[str, int] = {}
    for (_, arm), made in runs_of.items():
        by_arm[arm] = by_arm.get(arm, 0) + each - made
    total = len(names) * len(grid.arms) * each
    watch.started(total - skipped, skipped, by_arm)
    jobs = (
        replace(job, supersedes=again[key]) if key in again else job  # a copy costs 5 us
        for job in grid.jobs()
        if (key := (job.model, job.arm.spec, job.task.id, job.repeat)) not in done
    )
    experiment_id = folder.experiment["experiment_id"]
    runner = Runner(grid.taskset, client, grid.model_name, settings, experiment_id)
    in_flight = min(settings.runs_in_flight, max(1, total - skipped))
    try:
        with folder.writer() as writer, settled_objects_frozen():
            ran = await _make(runner, jobs, writer, in_flight, watch)
    finally:  # the set's MCP servers, started once for the grid: none left behind
        stop_servers()
    return GridResult(ran=ran, skipped=skipped)


#: The young objects made between two of the garbage collector's passes over them while
#: a grid runs (Python's default is 700): a model call makes hundreds, nearly all gone by
#: the end of its run, and a pass every few calls promoted the rest to be walked again.
#: With hundreds of runs in flight nearly all of a pass's objects are still in use (a
#: pass over 10,000 freed a few dozen), so the passes' cost goes with how many there are:
#: at 100,000, a grid of 256 requests in flight spent a third of the CPU on them that it
#: did at 10,000 (timed by ``gc.callbacks``, 1,200 samples of ``bench/overhead.py``'s grid).
YOUNG_OBJECTS_PER_PASS = 100_000


@contextmanager
def settled_objects_frozen() -> Iterator[None]:
    """While a grid runs, the objects already made (modules, classes, validators: some
    hundred thousand) are left out of the garbage collector's full passes, each of which
    walked them all, tens of milliseconds with every run held up, and its young objects are
    collected less often; all is handed back when it ends. A process that froze its own
    (or a grid running inside another) keeps them as they are."""
    if gc.get_freeze_count():
        yield
        return
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(thresholds[0], YOUNG_OBJECTS_PER_PASS), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


async def _make(
    runner: Runner, jobs: Iterable[Job], writer: RecordWriter, concurrency: int, watch: Observer
) -> int:
    """Make ``jobs`` with at most ``concurrency`` in flight; how many were written."""
    written: set[RunKey] = set()

    def finish(record: RunRecord, trace: list[dict[str, Any]]) -> None:
        if (key := run_key(record)) in written:
            # guard: run-handed-over-twice-written
            return
        written.add(key)
        writer.append(record, trace)
        watch.recorded(record)

    executor = runner.settings.executor or run_local
    await executor(runner, jobs, concurrency, finish)
    return len(written)
