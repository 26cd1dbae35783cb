"""The runner: arms x tasks x repeats, run concurrently, graded, appended as they finish.

For each run it builds a counting client around the shared model client, runs the
pattern, grades the answer, and writes the record and trace. Usage comes from the
counting client, never from the pattern, so a failed run's tokens are still counted.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from graders.sandbox import Sandbox
from harness.events import (
    ParseFailureEvent,
    PatternErrorEvent,
    RepeatedActionEvent,
    ToolCallEvent,
)
from harness.executors import Executor
from harness.executors.local import run_local
from harness.experiment import Arm
from harness.grading import Grading, edit_measures
from harness.models.cache import CachingClient, ResponseCache
from harness.models.counting import CountingClient
from harness.models.estimate import TokenCount
from harness.models.replicas import Replicas
from harness.models.shared import SharedCalls
from harness.models.types import ModelAPIError, ModelClient, Usage
from harness.patterns.base import Outcome, RunContext
from harness.records import RunRecord
from harness.report.prices import Price, PriceTable
from harness.sampling import Sampling
from harness.store import RecordWriter, ResultsError, ResultsFolder, RunKey, run_key
from harness.tools import ToolSet
from harness.trace import MAX_TEXT, Trace, cut
from tasks.taskset import AnyTask, TaskSet

VERSION = version("loopbench")


def _cost(price: Price, usage: Usage) -> float:
    return price.cost(usage.input_tokens, usage.output_tokens, usage.cached_tokens)


def check_metrics(graded: list[tuple[bool | None, bool]]) -> dict[str, float]:
    """What the run says of a check (best_of_n's verifier, reflexion's check): of the
    answers it judged, how many were right, and which it accepted. Empty when no answer
    on the way was judged."""
    judged = [(accepted, correct) for accepted, correct in graded if accepted is not None]
    if not judged:
        return {}
    return {
        "judged": float(len(judged)),
        "judged_correct": float(sum(correct for _, correct in judged)),
        "accepted_correct": float(sum(a and c for a, c in judged)),
        "accepted_wrong": float(sum(a and not c for a, c in judged)),
        "last_accepted": float(bool(judged[-1][0])),
    }


@dataclass(frozen=True)
class Job:
    arm: Arm
    task: AnyTask
    repeat: int
    #: The run_id of the api_error record this run replaces (--retry-errors).
    supersedes: str | None = None
    #: The model it runs on; the runner's own when unset.
    model: str = ""


@dataclass(frozen=True)
class GridResult:
    ran: int
    skipped: int


def expand(
    arms: list[Arm], taskset: TaskSet, repeats: int, models: Sequence[str] = ("",)
) -> Iterator[Job]:
    """Repeats outermost, so a grid cut short still covers every arm and task evenly.

    Within a repeat the order is shuffled (seeded by the repeat, so a resumed grid sees
    the same order): otherwise one arm would always run right after another, and a
    server's prompt cache or a drifting load would favour one arm's latency and cost.
    """
    for repeat in range(repeats):
        jobs = [
            Job(arm, task, repeat, model=model)
            for task in taskset.tasks
            for arm in arms
            for model in models
        ]
        random.Random(repeat).shuffle(jobs)
        yield from jobs


@dataclass(frozen=True)
class RunSettings:
    """How a grid is run and recorded, beyond what it runs: one object from the CLI (or a
    script) to every run."""

    concurrency: int = 8
    """Runs in flight at once."""
    prices: PriceTable | None = None
    """Prices each record's cost at run time."""
    retry_errors: bool = False
    """Run again the runs recorded as api_error, superseding their records."""
    max_trace_text: int = MAX_TEXT
    """The most characters of one text a trace keeps (replies, tool results); see Trace."""
    cache: ResponseCache | None = None
    """Replay responses already paid for (``--cache``)."""
    cache_debug: Callable[[str], None] | None = None
    """Told, on a cache miss, what differed from the nearest cached request."""
    estimate: TokenCount | None = None
    """Estimates the tokens of a call whose response reported none (``--count-tokens``)."""
    sandbox: Sandbox | None = None
    """Runs coding tasks' tests; one is made with the task set's timeout when unset."""
    paired: bool = False
    """Arms that send an identical request in the same task and repeat share its response
    (``--paired``): repair arms then start from the same first attempt. With ``cache`` the
    shared responses are kept there too, so pairing survives a resume."""
    executor: Executor | None = None
    """Where the runs are made: this process when unset (``run_local``); a ``RayExecutor``
    sends them to Ray workers. This process writes the folder either way."""
    sampling: Sampling = field(default_factory=Sampling)
    """Temperature, top_p and seed sent on every request that does not set its own; none
    by default (the endpoint's defaults)."""


@dataclass
class Runner:
    taskset: TaskSet
    client: ModelClient
    model_name: str
    settings: RunSettings = RunSettings()
    experiment_id: str = ""

    def __post_init__(self) -> None:
        self._toolsets: dict[str, ToolSet] = {}
        self._grading = Grading(self.taskset, self.settings.sandbox)
        self._shared = SharedCalls(self.settings.cache) if self.settings.paired else None

    def _tools(self, arm: Arm) -> ToolSet:
        variant = arm.lookup_variant
        if variant not in self._toolsets:
            self._toolsets[variant] = self.taskset.toolset(variant)
        return self._toolsets[variant]

    async def run_one(self, job: Job) -> tuple[RunRecord, Trace]:
        settings = self.settings
        trace = Trace(max_text=settings.max_trace_text)
        client = self.client
        if isinstance(client, Replicas):  # a run keeps to one replica, and its prompt cache
            client = client.pick()
        if settings.cache is not None:
            client = CachingClient(
                client, settings.cache, f"{job.arm.spec}#{job.repeat}", settings.cache_debug
            )
        if self._shared is not None:
            client = self._shared.client(client, f"{job.task.id}#{job.repeat}")
        counted = CountingClient(client, trace, settings.estimate, settings.sampling)
        ctx = RunContext(
            job.task.question,
            counted,
            job.model or self.model_name,
            self._tools(job.arm),
            trace,
            code=self._grading.check(job.task),
        )
        started_at = datetime.now(UTC).isoformat(timespec="milliseconds")
        began = time.perf_counter()
        try:
            outcome = await job.arm.build().run(ctx)
        except ModelAPIError as exc:
            outcome = Outcome("api_error", error=str(exc))
        except Exception as exc:  # a pattern bug is recorded, and the rest of the grid goes on
            error = f"{type(exc).__name__}: {exc}"
            outcome = Outcome("pattern_error", error=error)
            trace.emit(PatternErrorEvent(error=error))
        latency = time.perf_counter() - began
        return await self._record(job, outcome, counted, trace, started_at, latency), trace

    async def _record(
        self,
        job: Job,
        outcome: Outcome,
        counted: CountingClient,
        trace: Trace,
        started_at: str,
        latency: float,
    ) -> RunRecord:
        try:
            correct, reason, first_correct, metrics = await self._grades(job, outcome, trace)
        except Exception as exc:  # the grader failed (a sandbox that cannot start, a full disk)
            error = f"grading failed: {type(exc).__name__}: {exc}"
            trace.emit(PatternErrorEvent(error=error))
            outcome = Outcome("pattern_error", messages=outcome.messages, error=error)
            correct, reason, first_correct, metrics = None, error, None, {}
        usage = counted.usage
        prices = self.settings.prices
        model = job.model or self.model_name
        price = prices.find(model) if prices else None
        cost = _cost(price, usage) if price else None
        cached = counted.usage_from_cache
        cost_from_cache = _cost(price, cached) if price and counted.cache_hits else None
        return RunRecord(
            run_id=uuid.uuid4().hex,
            experiment_id=self.experiment_id,
            arm=job.arm.spec,
            pattern=job.arm.pattern,
            options=job.arm.resolved,
            task_set=self.taskset.name,
            task_id=job.task.id,
            task_fingerprint=job.task.fingerprint,
            slice=job.task.slice,
            repeat=job.repeat,
            model=model,
            sampling=self.settings.sampling.sent(),
            status=outcome.status,
            # Graded whole above; kept on disk within the trace's limit, like every reply.
            answer=None
            if outcome.answer is None
            else cut(outcome.answer, self.settings.max_trace_text),
            correct=correct,
            grade_reason=reason,
            first_correct=first_correct,
            metrics=metrics,
            turns=counted.calls,
            tool_calls=trace.count(ToolCallEvent),
            parse_failures=trace.count(ParseFailureEvent),
            repeated_actions=trace.count(RepeatedActionEvent),
            retries=counted.retries,
            tokens_in=usage.input_tokens,
            tokens_out=usage.output_tokens,
            tokens_cached=usage.cached_tokens,
            usage_missing=usage.missing,
            usage_estimated=usage.estimated,
            cost_usd=cost,
            cache_hits=counted.cache_hits,
            cost_from_cache_usd=cost_from_cache,
            latency_s=round(latency, 4),
            error=outcome.error,
            started_at=started_at,
            supersedes=job.supersedes,
            loopbench_version=VERSION,
        )

    async def _grades(
        self, job: Job, outcome: Outcome, trace: Trace
    ) -> tuple[bool | None, str, bool | None, dict[str, float]]:
        """The final answer's verdict and reason, the first answer's verdict, and the
        measures of the answers on the way (a check's verdicts, code edits)."""
        grading = self._grading
        if outcome.status == "answered" and outcome.answer is not None:
            verdict = await grading.grade(job.task, outcome.answer)
            correct: bool | None = verdict.correct
            reason = verdict.reason
        else:
            correct, reason = None, f"not graded: {outcome.status}"
        answers = trace.answers()
        verdicts = await asyncio.gather(*(grading.grade(job.task, a.answer) for a in answers))
        on_the_way = list(zip(answers, verdicts, strict=True))
        first_correct = on_the_way[0][1].correct if on_the_way else None
        metrics = (
            outcome.metrics
            | check_metrics([(event.accepted, verdict.correct) for event, verdict in on_the_way])
            | edit_measures(job.task, [a.answer for a in answers], [v.correct for v in verdicts])
        )
        return correct, reason, first_correct, metrics

    async def run_grid(
        self,
        jobs: Iterable[Job],
        writer: RecordWriter,
        concurrency: int,
        on_done: Callable[[RunRecord], None] | None = None,
        executor: Executor = run_local,
    ) -> int:
        """Run ``jobs`` with at most ``concurrency`` in flight; returns how many ran. A run
        handed over twice (a remote task retried after its result came back) is written
        once."""
        written: set[RunKey] = set()

        def finish(record: RunRecord, trace: list[dict[str, Any]]) -> None:
            if (key := run_key(record)) in written:
                return
            written.add(key)
            writer.append(record, trace)
            if on_done is not None:
                on_done(record)

        await executor(self, jobs, concurrency, finish)
        return len(written)


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
        if differs:
            raise ResultsError(
                f"{where}: runs of {record.arm} there were made with other options "
                f"({'; '.join(differs)}); adding to them would mix two configurations under "
                "one arm. Give another --out, or set the options as they were"
            )


def recorded_runs(
    records: list[RunRecord], taskset: TaskSet, retry_errors: bool = False
) -> tuple[set[RunKey], dict[RunKey, str]]:
    """The runs already done, and those to run again with the run_id each supersedes: a
    run whose task has changed since (its question or expected answer), and with
    ``retry_errors`` a run that ended in api_error. A record written before task
    fingerprints is taken as it is."""
    fingerprints = {t.id: t.fingerprint for t in taskset.tasks}
    recorded = {run_key(r): r for r in records}
    again = {
        key: record.run_id
        for key, record in recorded.items()
        if record.task_fingerprint not in ("", fingerprints.get(record.task_id))
        or (retry_errors and record.status == "api_error")
    }
    return recorded.keys() - again.keys(), again


async def run_experiment(
    taskset: TaskSet,
    arms: list[Arm],
    repeats: int,
    client: ModelClient,
    model_name: str,
    folder: ResultsFolder,
    settings: RunSettings = RunSettings(),
    on_start: Callable[[int, int], None] | None = None,
    on_done: Callable[[RunRecord], None] | None = None,
    models: Sequence[str] = (),
) -> GridResult:
    """Run every (model, arm, task, repeat) not already recorded in ``folder``.

    ``models`` names several models (the client answers each request by its model, e.g. a
    ``ModelRouter``); without it every run is on ``model_name``. Refused (ResultsError)
    before any run when the folder holds runs of an arm under other resolved options.
    With ``settings.retry_errors``, a run recorded as api_error is run again; its new
    record supersedes the old one, which stays in the log. Jobs are made as they are
    taken, so a grid of any size starts at once.
    """
    names = list(models) or [model_name]
    records = folder.records()
    refuse_other_options(records, arms, folder.path)
    done, again = recorded_runs(records, taskset, settings.retry_errors)
    in_grid = {(m, a.spec, t.id) for m in names for a in arms for t in taskset.tasks}
    skipped = sum((m, arm, task) in in_grid and repeat < repeats for m, arm, task, repeat in done)
    total = len(names) * len(arms) * len(taskset.tasks) * repeats
    if on_start is not None:
        on_start(total - skipped, skipped)
    jobs = (
        replace(job, supersedes=again.get(key))
        for job in expand(arms, taskset, repeats, names)
        if (key := (job.model, job.arm.spec, job.task.id, job.repeat)) not in done
    )
    runner = Runner(taskset, client, model_name, settings, folder.experiment["experiment_id"])
    in_flight = min(settings.concurrency, max(1, total - skipped))
    with folder.writer() as writer:
        ran = await runner.run_grid(
            jobs, writer, in_flight, on_done, settings.executor or run_local
        )
    return GridResult(ran=ran, skipped=skipped)
