"""The runner: one run of an arm on a task, made, graded and turned into its record.

For each run it builds a counting client around the shared model client, runs the
pattern, grades the answer, and returns the record and trace (``loopbench.harness.grid`` runs a
whole grid and writes them). Usage comes from the counting client, never from the
pattern, so a failed run's tokens are still counted.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import InitVar, dataclass, field
from importlib.metadata import version
from typing import Any, Literal, Protocol

from loopbench.graders.base import JudgeEndpoint, JudgeFailed
from loopbench.harness.arms import Arm
from loopbench.harness.events import (
    GradingEvent,
    ParseFailureEvent,
    PatternErrorEvent,
    RepeatedActionEvent,
    ToolCallEvent,
)
from loopbench.harness.grading import GraderFunction, Grading
from loopbench.harness.models.batching import BATCH_RUN, RUNS_IN_FLIGHT
from loopbench.harness.models.cache import CachingClient, ResponseCache
from loopbench.harness.models.counting import CountingClient
from loopbench.harness.models.estimate import TokenCount
from loopbench.harness.models.paired import SharedCalls
from loopbench.harness.models.replicas import Replicas
from loopbench.harness.models.throttle import RUN_SLOT_WAITS, SlotWaits
from loopbench.harness.models.types import ModelAPIError, ModelClient, Usage
from loopbench.harness.patterns.base import Outcome, RunContext
from loopbench.harness.reasoning import ReasoningRefused
from loopbench.harness.results.prices import Price, PriceTable
from loopbench.harness.results.records import RunRecord
from loopbench.harness.sampling import Sampling
from loopbench.harness.slot_templates import SlotTooLarge
from loopbench.harness.started import started_at
from loopbench.harness.tools import ToolServerFailure, ToolSet
from loopbench.harness.trace import MAX_TEXT, Trace, cut
from loopbench.sandbox.run import Sandbox
from loopbench.tasks.taskset import AnyTask, TaskSet

VERSION = version("loopbench")
#: Why an answer has no verdict: its judge failed (a record's ``grade_status``).
GradeStatus = Literal["judge_api_error", "judge_unreadable"]


@dataclass(frozen=True)
class Timing:
    """When a run started (UTC, ISO 8601) and how long it took, less the time it waited
    on loopbench's own queue for a request slot."""

    started_at: str
    latency_s: float


@dataclass(frozen=True)
class Grades:
    """The final answer's verdict, reason and score, the first answer's verdict, the measures
    of the answers on the way (a check's verdicts, code edits), and the final answer as the
    grader reads it (``Grader.canonical``)."""

    correct: bool | None
    reason: str
    first_correct: bool | None
    metrics: dict[str, float]
    score: float | None = None
    canonical: str | None = None
    grade_status: GradeStatus | None = None
    """Why an answer has no verdict: its judge failed (``JudgeFailed.kind``)."""
    judge_usage: Usage | None = None
    """What the grader's own model calls took (the judge's), a failed verdict's too."""


#: Takes one finished run: its record, and its trace as written to traces.jsonl.
Finish = Callable[[RunRecord, list[dict[str, Any]]], None]


class Executor(Protocol):
    """Where a grid's runs are made (``loopbench.harness.executors``): it makes ``jobs`` with at
    most ``concurrency`` in flight and hands each finished run to ``finish`` as it arrives."""

    async def __call__(
        self, runner: Runner, jobs: Iterable[Job], concurrency: int, finish: Finish
    ) -> None: ...


def _cost(price: Price, usage: Usage) -> float:
    return price.cost(
        usage.input_tokens, usage.output_tokens, usage.cached_tokens, usage.cache_write_tokens
    )


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
class RunSettings:
    """How a grid is run and recorded, beyond what it runs: one object from the CLI (or a
    script) to every run."""

    runs_in_flight: int = 8
    """Runs in flight at once (``RunConfig.runs_at_once``: twice the requests)."""
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
    """Temperature, top_p, seed and the reasoning settings sent on every request that does
    not set its own; none by default (the endpoint's defaults)."""
    grader: GraderFunction | None = None
    """Grades every answer instead of the task set's grader (``Experiment(grader=fn)``);
    in this process only."""
    judge: JudgeEndpoint | None = None
    """The judge's endpoint a grader asks for its verdicts (``--judge-model``), its calls
    counted and priced apart from the runs'; in this process only."""
    concurrency: InitVar[int | None] = None
    """The former name of ``runs_in_flight``, still taken."""

    def __post_init__(self, concurrency: int | None) -> None:
        if concurrency is not None:
            object.__setattr__(self, "runs_in_flight", concurrency)


@dataclass
class Runner:
    taskset: TaskSet
    client: ModelClient
    model_name: str
    settings: RunSettings = RunSettings()
    experiment_id: str = ""

    def __post_init__(self) -> None:
        self._toolsets: dict[str, ToolSet] = {}
        self._arm_tools: dict[int, tuple[Arm, ToolSet]] = {}
        self._prices: dict[str, Price | None] = {}
        settings = self.settings
        self._grading = Grading(self.taskset, settings.sandbox, settings.grader, settings.judge)
        self._shared = SharedCalls(self.settings.cache) if self.settings.paired else None
        #: Each task's fingerprint by its id, hashed once a grid rather than once a run.
        self._fingerprints: dict[str, str] = {}

    def _tools(self, arm: Arm) -> ToolSet:
        """The set's tools with the options the arm gives them, built once per choice and
        found by the arm itself after its first run (an arm is frozen)."""
        known = self._arm_tools.get(id(arm))
        if known is not None:
            return known[1]
        tools = self._chosen_tools(arm)
        self._arm_tools[id(arm)] = (arm, tools)  # the arm kept, so its id is not reused
        return tools

    def _chosen_tools(self, arm: Arm) -> ToolSet:
        choices = arm.tool_choices
        key = json.dumps(choices, sort_keys=True)
        if key not in self._toolsets:
            self._toolsets[key] = self.taskset.toolset(choices)
        return self._toolsets[key]

    async def run_one(self, job: Job) -> tuple[RunRecord, Trace]:
        settings = self.settings
        trace = Trace(max_text=settings.max_trace_text)
        client = self.client
        # guard: run-keeps-one-replica
        if isinstance(client, Replicas):  # a run keeps to one replica, and its prompt cache
            client = client.pick()
        if settings.cache is not None:
            client = CachingClient(
                client, settings.cache, f"{job.arm.spec}#{job.repeat}", settings.cache_debug
            )
        if self._shared is not None:
            # guard: paired-calls-stay-within-repeat
            client = self._shared.client(client, f"{job.task.id}#{job.repeat}")
        counted = CountingClient(client, trace, settings.estimate, settings.sampling)
        # guard: prompts-run-overrides-reach-pattern
        ctx = RunContext(
            job.task.question,
            counted,
            job.model or self.model_name,
            self._tools(job.arm),
            trace,
            code=self._grading.check(job.task),
            prompts=job.arm.prompts,
            canonical=self._grading.canonical(job.task),
            answer_check=self._grading.answer_check(job.task),
        )
        started = started_at()
        began = time.perf_counter()
        waits = SlotWaits()
        token = RUN_SLOT_WAITS.set(waits)
        # Names the run's requests in a batch's journal, so a resumed run finds them.
        run = f"{job.model or self.model_name}|{job.arm.spec}|{job.task.id}|{job.repeat}"
        named = BATCH_RUN.set(run)
        try:
            with RUNS_IN_FLIGHT.running():  # a batch's round waits for the runs in flight
                outcome = await job.arm.runnable.run(ctx)
        except ModelAPIError as exc:
            outcome = Outcome("api_error", error=str(exc))
        except ToolServerFailure as exc:  # a tool's server crashed or hung: not the pattern's
            outcome = Outcome("tool_error", error=str(exc))
        except ReasoningRefused:  # every run would fail alike: the grid stops, in one line
            raise
        # guard: templates-slot-past-bound-refused
        except SlotTooLarge as exc:  # the arm's prompt file, on this task: never sent
            outcome = Outcome("refused", error=str(exc))
        except Exception as exc:  # a pattern bug is recorded, and the rest of the grid goes on
            error = f"{type(exc).__name__}: {exc}"
            outcome = Outcome("pattern_error", error=error)
            trace.emit(PatternErrorEvent(error=error))
        finally:
            RUN_SLOT_WAITS.reset(token)
            BATCH_RUN.reset(named)
        # More runs are in flight than requests: a wait for a request slot is loopbench's
        # queue, not the run's latency.
        # guard: run-latency-leaves-out-waits
        timing = Timing(started, time.perf_counter() - began - waits.waited_s)
        return await self._record(job, outcome, counted, trace, timing), trace

    async def _record(
        self,
        job: Job,
        outcome: Outcome,
        counted: CountingClient,
        trace: Trace,
        timing: Timing,
    ) -> RunRecord:
        """The run's record: what ran, its answer graded, its calls counted and priced."""
        outcome, grades = await self._graded(job, outcome, trace)
        # guard: record-priced-as-own-model
        model = job.model or self.model_name
        return RunRecord(
            run_id=uuid.uuid4().hex,
            experiment_id=self.experiment_id,
            arm=job.arm.spec,
            pattern=job.arm.pattern,
            options=job.arm.resolved,
            prompts_hash=job.arm.prompts_hash,
            task_set=self.taskset.name,
            task_id=job.task.id,
            task_fingerprint=self._fingerprint(job.task),
            slice=job.task.slice,
            repeat=job.repeat,
            model=model,
            sampling=self.settings.sampling.sent(),
            status=outcome.status,
            tools_offered=job.arm.takes_tools and len(self._tools(job.arm)) > 0,
            answer_kind="code" if self.taskset.is_code else "text",
            # Graded whole above; kept on disk within the trace's limit, like every reply.
            answer=None
            if outcome.answer is None
            else cut(outcome.answer, self.settings.max_trace_text),
            correct=grades.correct,
            grade_reason=grades.reason,
            score=grades.score,
            canonical=None
            if grades.canonical is None
            else cut(grades.canonical, self.settings.max_trace_text),
            first_correct=grades.first_correct,
            metrics=grades.metrics,
            **trace_counts(trace),
            **self._usage(model, counted),
            **judge_fields(grades.judge_usage, self.settings.judge, self.settings.prices),
            # To 0.1 ms, the first token's time down and the run's up: a first token that
            # came before the run ended stays below its latency in the record too.
            latency_s=math.ceil(timing.latency_s * 1e4) / 1e4,
            ttft_s=None if counted.ttft_s is None else math.floor(counted.ttft_s * 1e4) / 1e4,
            error=outcome.error,
            started_at=timing.started_at,
            supersedes=job.supersedes,
            loopbench_version=VERSION,
            grade_status=grades.grade_status,
        )

    def _price(self, model: str) -> Price | None:
        """``model``'s price in the settings' table, looked up once a grid (a model not
        listed is matched against every name)."""
        if model not in self._prices and self.settings.prices is not None:
            self._prices[model] = self.settings.prices.find(model)
        return self._prices.get(model)

    def _fingerprint(self, task: AnyTask) -> str:
        found = self._fingerprints.get(task.id)
        if found is None:
            found = self._fingerprints[task.id] = task.fingerprint
        return found

    async def _graded(self, job: Job, outcome: Outcome, trace: Trace) -> tuple[Outcome, Grades]:
        """The outcome and its grades; a grader that fails makes the run a pattern_error,
        and the rest of the grid goes on."""
        try:
            return outcome, await self._grades(job, outcome, trace)
        # guard: failing-grader-recorded-not-raised
        except Exception as exc:  # the grader failed (a sandbox that cannot start, a full disk)
            error = f"grading failed: {type(exc).__name__}: {exc}"
            trace.emit(PatternErrorEvent(error=error))
            failed = Outcome("pattern_error", messages=outcome.messages, error=error)
            return failed, Grades(None, error, None, {})

    def _usage(self, model: str, counted: CountingClient) -> dict[str, Any]:
        """The record's fields of the run's calls: counted by the counting client, priced as
        ``model`` at run time."""
        usage, prices = counted.usage, self.settings.prices
        price = self._price(model)
        replayed = _cost(price, counted.usage_from_cache) if price and counted.cache_hits else None
        cost = None
        if price is not None and prices is not None:
            cost = _cost(price, usage)
            if counted.batched_calls:  # the batched calls' tokens at the batch price
                # guard: batched-calls-at-batch-price
                cost -= (1 - prices.batch_share(price)) * _cost(price, counted.usage_batched)
        return {
            "turns": counted.calls,
            "retries": counted.retries,
            "tokens_in": usage.input_tokens,
            "tokens_out": usage.output_tokens,
            "tokens_cached": usage.cached_tokens,
            "tokens_reasoning": usage.reasoning_tokens,
            "tokens_cache_write": usage.cache_write_tokens,
            "usage_missing": usage.missing,
            "usage_estimated": usage.estimated,
            "cost_usd": cost,
            "cache_hits": counted.cache_hits,
            "batched_calls": counted.batched_calls if counted.batched_calls else None,
            "cost_from_cache_usd": replayed,
            "replaced_characters": counted.replaced_characters,
        }

    async def _grades(self, job: Job, outcome: Outcome, trace: Trace) -> Grades:
        grading = self._grading
        canonical, used = None, None
        if outcome.status == "answered" and outcome.answer is not None:
            try:
                verdict = await grading.grade(job.task, outcome.answer, outcome.reply)
            # guard: judge-failure-is-grading-status
            except JudgeFailed as exc:  # no verdict: the pattern's outcome stands
                return judge_failed(exc, trace, outcome.metrics)
            correct: bool | None = verdict.correct
            reason, score, used = verdict.reason, verdict.score, verdict.usage
            canonical = grading.canonical(job.task)(outcome.answer)
        else:
            correct, reason, score = None, f"not graded: {outcome.status}", None
        # guard: judge-grades-final-answer-only
        if not grading.grades_on_the_way:  # every verdict a paid call: the final one only
            return Grades(correct, reason, None, outcome.metrics, score, canonical, None, used)
        answers = trace.answers()
        verdicts = (  # none, in most runs: no gather, nor its future, for them
            await asyncio.gather(*(grading.grade(job.task, a.answer) for a in answers))
            if answers
            else []
        )
        on_the_way = list(zip(answers, verdicts, strict=True))
        first_correct = on_the_way[0][1].correct if on_the_way else None
        metrics = (
            outcome.metrics
            | check_metrics([(event.accepted, verdict.correct) for event, verdict in on_the_way])
            | grading.measures(job.task, [a.answer for a in answers], [v.correct for v in verdicts])
        )
        for on_the_way_verdict in verdicts:
            if on_the_way_verdict.usage is not None:
                used = on_the_way_verdict.usage + (used or Usage())
        return Grades(correct, reason, first_correct, metrics, score, canonical, None, used)


#: The record's counts of a run's events, by the kind each counts.
_COUNTED = {
    ToolCallEvent: "tool_calls",
    ParseFailureEvent: "parse_failures",
    RepeatedActionEvent: "repeated_actions",
}


def trace_counts(trace: Trace) -> dict[str, int]:
    """The record's counts of the run's tool calls, parse failures and repeated actions,
    in one pass over its events."""
    counts = dict.fromkeys(_COUNTED.values(), 0)
    kinds = tuple(_COUNTED)
    for event in trace.events:
        if (name := _COUNTED.get(type(event))) is not None:  # the kind itself, most often
            counts[name] += 1
        elif isinstance(event, kinds):
            kind = next(k for k in kinds if isinstance(event, k))  # a subclass counts too
            counts[_COUNTED[kind]] += 1
    return counts


def judge_failed(exc: JudgeFailed, trace: Trace, metrics: dict[str, float]) -> Grades:
    """The grades of an answer its judge gave no verdict on, said in the trace: a grading
    status of its own, the judge's usage kept."""
    # A kind no record takes is the judge's reply unread, never a pattern's failure.
    kind: GradeStatus = "judge_api_error" if exc.kind == "judge_api_error" else "judge_unreadable"
    trace.emit(
        GradingEvent(
            status=kind,
            error=str(exc),
            judge_tokens_in=exc.usage.input_tokens,
            judge_tokens_out=exc.usage.output_tokens,
        )
    )
    reason = f"not graded: {kind}: {exc}"
    return Grades(None, reason, None, metrics, grade_status=kind, judge_usage=exc.usage)


def judge_fields(
    usage: Usage | None, judge: JudgeEndpoint | None, prices: PriceTable | None
) -> dict[str, Any]:
    """The record's fields of the judge's calls on a run's answer: its tokens, priced as the
    judge's model (null unpriced); all null when no judge was asked."""
    if usage is None:
        return {}
    price = prices.find(judge.model) if prices is not None and judge is not None else None
    return {
        "judge_tokens_in": usage.input_tokens,
        "judge_tokens_out": usage.output_tokens,
        "judge_cost_usd": _cost(price, usage) if price else None,
    }
