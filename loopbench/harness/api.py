"""The Python API: build a grid in code, run it with any model client, read the results.

    import loopbench

    experiment = loopbench.Experiment(
        tasks="depot", arms=["direct", "react_text:guard=on"], repeats=3,
        model=lambda request: "Answer: 84", out="results/mine",
    )
    results = experiment.run()
    results.frame()          # one row per run
    results.table()          # one row per arm, as `loopbench table` prints it
    results.failures()       # the failure taxonomy per arm
    results.compare(loopbench.load("results/before"))

``loopbench run`` is a thin layer over this: it builds a ``RunConfig`` from its flags
(and an experiment file) and runs ``Experiment.from_config(config).run(observer=...)``,
which resolves the endpoints, starts the embedded model when none is configured, and
opens the HTTP clients for the run.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import InitVar, dataclass, field, replace
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from loopbench.graders.base import JudgeEndpoint
from loopbench.graders.registry import GRADERS
from loopbench.harness.arms import Arm, ArmError, arm_identity, parse_arms
from loopbench.harness.config import RunConfig
from loopbench.harness.endpoints import (
    connection,
    open_clients,
    serving,
    throttle_notes,
)
from loopbench.harness.errors import BadInput
from loopbench.harness.executors import OnWorkers
from loopbench.harness.grading import GraderFunction, Grading
from loopbench.harness.grid import Grid, refuse_other_options, run_grid
from loopbench.harness.judge_endpoint import open_judge, pinned_judge
from loopbench.harness.models.batch_journal import JOURNAL
from loopbench.harness.models.batching import BatchSettings
from loopbench.harness.models.endpoint import (
    Endpoint,
    EndpointNotConfigured,
    protecting,
    shown_url,
    without_credentials,
)
from loopbench.harness.models.replicas import grid_client
from loopbench.harness.models.router import ModelRouter
from loopbench.harness.models.scripted import ModelLike, as_client
from loopbench.harness.models.types import ModelClient
from loopbench.harness.observer import Observer
from loopbench.harness.plan import plan_run
from loopbench.harness.report.compare import (
    Comparison,
    JudgeChoice,
    Thresholds,
    check_comparable,
    compare_judged,
)
from loopbench.harness.report.failures import ArmFailures, labelled_frame, summarize_failures
from loopbench.harness.report.judge_accuracy import (
    Judging,
    with_corrected,
    with_corrected_reference,
)
from loopbench.harness.report.pass_k import parse_all
from loopbench.harness.report.printed import stopping_note, table_title
from loopbench.harness.report.published import with_published
from loopbench.harness.report.rendering import render
from loopbench.harness.report.step_budget import KEEP_SHARE, step_budgets
from loopbench.harness.report.table import Measures, summarize, with_reference
from loopbench.harness.report.ungraded import Ungraded, ungraded
from loopbench.harness.results.columns import FIELDS, UNREAD, read_frame, read_frames
from loopbench.harness.results.frames import Pricing
from loopbench.harness.results.prices import PriceTable, load_prices
from loopbench.harness.results.published import read_published
from loopbench.harness.results.reading import read_records
from loopbench.harness.results.records import RunRecord
from loopbench.harness.results.store import ResultsFolder
from loopbench.harness.rounds import run_until_separated
from loopbench.harness.runner import RunSettings
from loopbench.harness.sampling import Sampling, describe
from loopbench.harness.stats.separation import Separation, SeparationRule
from loopbench.tasks.loading import load_taskset
from loopbench.tasks.mcp_tools import stop_servers
from loopbench.tasks.taskset import TaskSet


@dataclass
class Experiment:
    """A grid to run: every arm on every task, ``repeats`` times (or in rounds until the
    arms are told apart, with ``until_separated``)."""

    tasks: str | Path | TaskSet = "depot"
    """A built-in task set's name, a task set folder, or a loaded TaskSet."""
    arms: Sequence[str | Arm] = ("direct",)
    """Arms as on the command line (``react_text:guard=on``), or parsed ones."""
    repeats: int = 1
    runs_in_flight: int = 8
    """Runs in flight at once (a client's own ``Connection`` caps its requests in flight;
    ``loopbench run`` keeps twice as many runs in flight as requests)."""
    model: ModelLike | None = None
    """The model: a ModelClient, or a function of the request. May also be given to run."""
    model_name: str = "model"
    """The model's name, recorded in every run and used to find its price."""
    models: Mapping[str, ModelLike | None] = field(default_factory=dict)
    """Several models as a grid axis, by name: every arm runs on every one (each priced as
    itself). A model given as None is served by the client given to ``run_in``."""
    out: str | Path | None = None
    """The results folder; re-running into it resumes. Default: results/<timestamp>."""
    base_url: str | list[str] | Mapping[str, str] = ""
    """The endpoint (per model, with several; a list for one model's replicas), recorded in
    the folder's identity (never with credentials)."""
    limit: int | None = None
    """Run only the first N tasks; the folder stays tied to the whole set."""
    slice: str | None = None
    """Run only the tasks of this slice (before ``limit``); the folder stays tied to the
    whole set. A slice the set does not have is refused (TaskSetError) naming those it has."""
    until_separated: SeparationRule | None = None
    sampling: Sampling = field(default_factory=Sampling)
    """Temperature, top_p, seed and the reasoning settings (``reasoning_effort``,
    ``thinking_budget``) sent on every request of every arm that does not set its own; by
    default none, and the endpoint's own defaults apply. Recorded, and a folder is
    tied to them."""
    settings: RunSettings = field(default_factory=RunSettings)
    config: RunConfig | None = None
    """The settings it was made from (``from_config``)."""
    endpoints: Sequence[Endpoint] = ()
    """Where the requests go when no model is given (``from_config`` resolves them): each
    model's endpoints, or, with ``embedded``, the embedded model started for the run."""
    embedded: bool = False
    grader: GraderFunction | None = None
    """Grades every answer instead of the task set's grader, with no task model or
    registration: ``fn(task, answer)`` returns True or False, a score from 0 to 1 (right
    from 0.5; recorded as the run's ``score``), or a ``loopbench.Grade`` saying its own
    verdict; it may be async. An exception it raises, or another value it returns, is the
    run's grading failure: recorded as a pattern_error saying so, and the grid goes on."""
    provider: str | Mapping[str, str] | None = None
    """The API the endpoint is spoken to in (``openai`` or ``anthropic``; per model, with
    several), recorded in the folder's identity when known (``from_config`` sets it)."""
    judge: ModelLike | JudgeEndpoint | None = None
    """The judge a grader asks for its verdicts (the ``judge`` grader): a ModelClient or a
    function of the request, sent temperature 0 and ``sampling``'s seed (0 unset), through
    ``settings.cache``; or a ``JudgeEndpoint`` taken as it is. Its usage is recorded apart
    (``judge_tokens_in``, ``judge_cost_usd``), priced as ``judge_model``."""
    judge_model: str = "judge"
    """The judge's model name, sent to it and priced as itself."""
    judge_endpoint: Endpoint | None = None
    """Where the judge's requests go when no ``judge`` is given (``from_config`` resolves
    it from ``[judge]``): opened like the runs' endpoints."""
    concurrency: InitVar[int | None] = None
    """The former name of ``runs_in_flight``, still taken."""

    def __post_init__(self, concurrency: int | None) -> None:
        if concurrency is not None:
            self.runs_in_flight = concurrency

    @cached_property
    def taskset(self) -> TaskSet:
        """The task set, loaded once (TaskSetError says what is wrong with it)."""
        if isinstance(self.tasks, TaskSet):
            return self.tasks
        return load_taskset(self.tasks, limit=self.limit if self.slice is None else None)

    @cached_property
    def chosen(self) -> TaskSet:
        """The tasks run: the set, or its ``slice``, then the first ``limit`` of them."""
        chosen = self.taskset if self.slice is None else self.taskset.only_slice(self.slice)
        return replace(chosen, tasks=chosen.tasks[: self.limit]) if self.limit else chosen

    @cached_property
    def parsed_arms(self) -> list[Arm]:
        """The arms, checked against the registry before anything runs (an arm the plan
        parsed already is taken as it is)."""
        arms = parse_arms(self.arms)
        if not arms:
            raise ArmError("give at least one arm")
        if self.until_separated is not None and len(arms) < 2:
            raise ArmError("--until-separated compares arms: give at least two --arm")
        if self.until_separated is not None and len(self.model_names) > 1:
            raise ArmError("--until-separated compares arms on one model: give one --model")
        return arms

    def run(self, model: ModelLike | None = None, observer: Observer | None = None) -> Results:
        """Run the grid and return its results, telling ``observer`` as it goes; in a
        notebook (a running event loop), ``await experiment.run_async()`` instead."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.run_async(model, observer))
        raise RuntimeError(
            "an event loop is already running (a notebook?): use `await experiment.run_async()`"
        )

    @property
    def model_names(self) -> list[str]:
        return list(self.models) or [self.model_name]

    async def run_async(
        self, model: ModelLike | None = None, observer: Observer | None = None
    ) -> Results:
        try:
            return await self._run_async(model, observer)
        finally:  # the set's MCP servers, however the run ended (a refusal too): none left
            stop_servers()

    async def _run_async(self, model: ModelLike | None, observer: Observer | None) -> Results:
        # guard: unknown-arm-refused-before-api
        _ = self.parsed_arms  # refused before a folder is made: a typo leaves nothing behind
        if self.grader is not None and self.settings.executor is not None:
            raise BadInput(
                "a grader function grades in this process: run without an executor, or name "
                "a registered grader in the task set"
            )
        # guard: slice-set-lacks-refused-before
        _ = self.chosen  # and so is a slice the set does not have
        observer = observer or Observer()
        given_settings = self.settings
        try:
            async with contextlib.AsyncExitStack() as judged:
                judge = await self._open_judge(judged, observer)
                if judge is not None:
                    self.settings = replace(self.settings, judge=judge)
                return await self._run_with(model, observer)
        finally:
            self.settings = given_settings

    async def _open_judge(
        self, stack: contextlib.AsyncExitStack, observer: Observer
    ) -> JudgeEndpoint | None:
        """The judge's endpoint for the run, opened with ``stack`` (its secrets redacted
        while it is open), said to ``observer``; None without a judge."""
        settings = self.settings
        seed = self.sampling.seed
        if settings.judge is not None:
            return settings.judge
        if isinstance(self.judge, JudgeEndpoint):
            return self.judge
        if self.judge is not None:
            return pinned_judge(
                as_client(self.judge), self.judge_model, seed=seed, cache=settings.cache
            )
        endpoint = self.judge_endpoint
        if endpoint is None:
            return None
        stack.enter_context(protecting([endpoint]))
        config = self.config or RunConfig()
        how = connection(config, config.concurrency)
        judge = await open_judge(stack, endpoint, how, seed, settings.cache)
        observer.note(
            f"judging with {judge.model} at {shown_url(endpoint.base_url)} ({endpoint.source}), "
            f"sampling {describe(judge.sampling)}"
        )
        return judge

    async def _run_with(self, model: ModelLike | None, observer: Observer) -> Results:
        given = model if model is not None else self.model
        if given is None and self.endpoints:
            return await self._served(observer)
        if self.models:
            client: ModelClient = ModelRouter({n: as_client(m) for n, m in self.models.items()})
        elif given is None and self.settings.executor is not None:
            client = OnWorkers()  # a RayExecutor's workers build their own clients
        else:
            client = as_client(given)
        with self.open() as folder:
            return await self.run_in(folder, client, observer)

    async def _served(self, observer: Observer) -> Results:
        """Run on the endpoints ``from_config`` resolved, or the embedded model started for
        the run, each through a client opened for the run (on this process; a Ray
        executor's workers open their own); the runtime objects made for it closed after."""
        config = self.config or RunConfig()
        executor = self.settings.executor
        # guard: batch-refused-for-embedded-model
        if config.batch and self.embedded:
            raise EndpointNotConfigured(
                "--batch needs an endpoint with a Batch API; the embedded model has none: "
                "name an endpoint (--base-url, --model) or drop --batch"
            )
        try:
            with contextlib.ExitStack() as held:
                # guard: secrets-run-holds-endpoints
                held.enter_context(protecting(self.endpoints))
                if isinstance(executor, contextlib.AbstractContextManager):
                    held.enter_context(executor)  # a RayExecutor connects, and lets go
                folder = held.enter_context(self.open())
                # Refused before the endpoint is named or the embedded model started:
                # a refusal is the one line printed. Read once; the grid reuses them.
                recorded = folder.records()
                # guard: resume-refused-before-serving
                refuse_other_options(recorded, self.parsed_arms, folder.path)
                for repair in folder.repairs:
                    observer.note(f"warning: {repair}")
                batch = BatchSettings(config.batch_poll_s, journal=folder.path / JOURNAL)
                serve = serving(
                    self.embedded, config.local_chat_format, [*self.endpoints], observer.note
                )
                live = held.enter_context(serve)
                async with contextlib.AsyncExitStack() as opened:
                    how = connection(config, config.concurrency)
                    used = batch if config.batch else None
                    clients = await open_clients(opened, [] if executor else live, how, used)
                    client = grid_client(dict(clients.items())) if clients else OnWorkers()
                    results = await self.run_in(folder, client, observer, recorded=recorded)
                    for note in throttle_notes(clients):
                        observer.note(note)
                    return results
        finally:
            if self.settings.cache is not None:
                self.settings.cache.close()

    def open(self) -> ResultsFolder:
        """The results folder, opened for writing: refused (ResultsError) when it holds
        runs of another task set, model or endpoint, or another writer holds it."""
        taskset = self.taskset
        names = self.model_names
        meta = {
            "task_set": taskset.name,
            # One model is written as before, so older folders keep matching; several as
            # the sorted set, so a folder is tied to exactly the models its runs used.
            "model": names[0] if len(names) == 1 else sorted(names),
            "base_url": self.base_url,
            # Only when known: a folder without it was written before Anthropic was spoken
            # natively (every endpoint then spoke chat completions), or by a model function.
            **({"provider": self.provider} if self.provider is not None else {}),
            "sampling": self.sampling.sent(),
            "fingerprint": taskset.fingerprint(),
            **({"stream": True} if self.config is not None and self.config.stream else {}),
            "grader": {
                "name": taskset.grader,
                "options": dict(taskset.grader_options),
                **self._grader_identity(),
            },
        }
        if published := self.config.published if self.config else {}:
            # guard: published-run-records-experiment
            meta["published"] = {
                arm_identity(arm): figures.model_dump(exclude_none=True)
                for arm, figures in published.items()
            }
        out = self.out or Path("results") / datetime.now().strftime("%Y%m%d-%H%M%S")
        return ResultsFolder.open(out, meta)

    def _grader_identity(self) -> dict[str, Any]:
        """What besides its name and options makes the set's grader's verdicts (the judge's
        model, sampling and prompts: ``Grader.identity``), when it says any. A grader that
        runs code says none (building it would make a sandbox); a grader function neither."""
        if self.grader is not None or self.settings.grader is not None:
            return {}
        if GRADERS.lookup(self.taskset.grader).runs_code:
            return {}
        # guard: grader-identity-recorded
        identity = Grading(self.taskset, judge=self.settings.judge).identity()
        return {"identity": identity} if identity else {}

    async def run_in(
        self,
        folder: ResultsFolder,
        client: ModelClient,
        observer: Observer | None = None,
        *,
        recorded: list[RunRecord] | None = None,
    ) -> Results:
        """Run the grid into an open folder with this client (what ``loopbench run`` does
        once its endpoint is up; with several models, a client answering each), telling
        ``observer`` as it goes. ``recorded``: the folder's records, when already read."""
        grid = Grid(self.chosen, self.parsed_arms, self.repeats, self.model_name, self.model_names)
        settings = replace(
            self.settings,
            runs_in_flight=self.runs_in_flight,
            sampling=self.sampling,
            grader=self.grader or self.settings.grader,
        )
        separation = None
        if self.until_separated is None:
            made = await run_grid(grid, client, folder, settings, observer, recorded)
        else:
            made, separation = await run_until_separated(
                grid, self.until_separated, client, folder, settings, observer
            )
        return Results(folder.path, made.ran, made.skipped, separation, tuple(folder.repairs))

    @classmethod
    def from_config(
        cls,
        config: RunConfig,
        endpoints: Sequence[Endpoint] | None = None,
        settings: RunSettings | None = None,
        say: Callable[[str], None] | None = None,
    ) -> Experiment:
        """The grid a RunConfig describes, as ``loopbench run`` makes it, refused
        (``BadInput``) before anything is sent: its plugins imported and its arms checked
        against the registry first, then its endpoints resolved (unless given: resolved
        already) and the runtime objects it asks for made (unless ``settings`` holds them),
        ``say`` told what a user should know (how isolated the sandbox is; stderr by
        default). Run without a model, its endpoints serve it: each model's, or the
        embedded model when none is configured."""
        plan = plan_run(config, endpoints, settings, say or Observer().note)
        experiment = cls(
            plan.taskset,
            plan.arms,
            config.repeats,
            config.runs_at_once(len(plan.endpoints)),
            out=config.out,
            limit=config.limit,
            slice=config.slice,
            until_separated=config.separation,
            sampling=config.sampling,
            config=config,
            endpoints=plan.endpoints,
            embedded=plan.embedded,
            settings=plan.settings,
            judge_endpoint=plan.judge,
            judge_model=plan.judge.model if plan.judge is not None else "judge",
        )
        experiment._name_models(plan.endpoints)
        _ = experiment.parsed_arms  # --until-separated's two arms on one model: refused now
        _ = experiment.chosen  # a slice the set does not have, too
        return experiment

    def _name_models(self, endpoints: Sequence[Endpoint]) -> None:
        """The models the endpoints serve, and where, as the folder records them."""
        names = list(dict.fromkeys(e.model for e in endpoints))
        if len(names) == 1:
            self.model_name = names[0]
            urls = sorted(without_credentials(e.base_url) for e in endpoints)
            self.base_url = urls[0] if len(urls) == 1 else urls
            self.provider = endpoints[0].provider
        elif names:
            self.models = dict.fromkeys(names)
            self.base_url = {e.model: without_credentials(e.base_url) for e in endpoints}
            self.provider = {e.model: e.provider for e in endpoints}


@dataclass(frozen=True)
class Printed:
    """A results folder's table as printed, how many of its runs ended in api_error, and
    the arms that graded nothing (every run an infrastructure status: ``run`` exits 3)."""

    text: str
    api_errors: int
    ungraded: Ungraded | None = None


@dataclass(frozen=True)
class Results:
    """A results folder, read: what ``table``, ``compare`` and ``failures`` print, as data."""

    path: Path
    ran: int = 0
    """Runs made by the call that returned these results."""
    skipped: int = 0
    """Runs already recorded in the folder, not run again."""
    separation: Separation | None = None
    """With until_separated: the decisions the rounds reached."""
    repairs: Sequence[str] = ()
    """What was repaired on opening the folder (a torn last line cut)."""

    def records(self) -> list[RunRecord]:
        return read_records(self.path)

    def frame(self, price_as: str | None = None, prices: PriceTable | None = None) -> pd.DataFrame:
        """One row per run (superseded api_error runs left out), priced as recorded or as
        ``price_as``."""
        return read_frame(self.path, Pricing(prices or load_prices(), price_as))

    def table(
        self,
        by: str | None = None,
        vs: str | None = None,
        price_as: str | None = None,
        prices: PriceTable | None = None,
        interval: str = "tasks",
        pass_k: Sequence[str] = (),
    ) -> pd.DataFrame:
        """One row per arm (per arm and ``by``): accuracy with its interval (``accuracy_low``,
        ``accuracy_high``: about tasks like these, or with ``interval="runs"`` on the runs
        made), turns, tokens, cost, cost per correct answer; with ``vs``, each arm's paired
        difference; ``pass_k`` adds pass@k / pass^k columns (``["pass@1", "pass^3"]``), each
        with ``_low``, ``_high`` and ``_tasks``."""
        measures, unknown = parse_all(list(pass_k))
        if unknown:
            raise ValueError(f"{unknown[0]!r} is not pass@k or pass^k (e.g. pass@5, pass^3)")
        pricing = Pricing(prices or load_prices(), price_as)
        frame, summary = self._summary(pricing, by, Measures(interval, tuple(measures)))
        if not vs:
            return summary
        reference = arm_identity(vs)
        summary = with_reference(frame, summary, reference)
        return with_corrected_reference(frame, summary, reference, Judging.of(self.path))

    def step_budgets(
        self,
        share: float = KEEP_SHARE,
        by: str | None = None,
        price_as: str | None = None,
        prices: PriceTable | None = None,
    ) -> pd.DataFrame:
        """One row per arm (per arm and ``by``), as ``loopbench table --step-budget SHARE``
        shows it: the turns of correct and failed runs, the smallest max_steps keeping
        ``share`` of the correct runs, and what it would have saved on the failed runs
        (``loopbench.harness.report.step_budget``)."""
        frame = self.frame(price_as, prices)
        return step_budgets(frame, share, [by] if by else [])

    def render(self, fmt: str = "md", **table: Any) -> str:
        """The table as ``loopbench table --format FMT`` prints it (md, csv, json, latex,
        html), without its title."""
        return render(self.table(**table), fmt)

    def printed(self, price_as: str | None = None, prices: PriceTable | None = None) -> Printed:
        """The table as ``loopbench table`` and ``loopbench run`` print it: titled, with the
        decisions of a run stopped by until_separated; and its runs that ended in api_error."""
        pricing = Pricing(prices or load_prices(), price_as)
        frame, summary = self._summary(pricing)
        text = render(summary, "md", table_title(frame, pricing, self.path))
        if said := Judging.of(self.path).note():
            text = f"{text}\n\n{said}"
        if note := stopping_note(self.path, frame):
            text = f"{text}\n\n{note}"
        errors = int((frame["status"] == "api_error").sum()) if "status" in frame else 0
        return Printed(text, errors, self.ungraded() if ungraded(frame) else None)

    def ungraded(self) -> Ungraded | None:
        """The arms (per model, with several) none of whose runs was graded, every one
        ended in api_error, tool_error or pattern_error, with their commonest error; None
        when every arm graded a run."""
        wanted = ("arm", "model", "status", "error")
        return ungraded(read_frame(self.path, drop=[n for n in FIELDS if n not in wanted]))

    def _summary(
        self, pricing: Pricing, by: str | None = None, measures: Measures | None = None
    ) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The folder's runs, read once, and their table beside what papers published."""
        frame, retried = read_frames(self.path, pricing, drop=UNREAD)
        summary = summarize(frame, by, retried, measures or Measures())
        summary = with_corrected(frame, summary, Judging.of(self.path))
        return frame, with_published(summary, read_published(self.path))

    def compare(
        self,
        before: Results | str | Path,
        arms: list[str] | None = None,
        max_drop: float = 0.05,
        alpha: float = 0.05,
        max_cost_rise: float = 0.10,
    ) -> Comparison:
        """These results against ``before`` (the baseline), as ``loopbench compare`` does:
        per arm, the paired difference and whether it regressed."""
        baseline = before if isinstance(before, Results) else load(before)
        judging = (Judging.of(baseline.path), Judging.of(self.path))
        thresholds = Thresholds(max_drop, alpha, max_cost_rise)
        frames = baseline.frame(), self.frame()
        for side, frame in zip((baseline, self), frames, strict=True):
            check_comparable(side.path, frame)
        return compare_judged(*frames, arms, thresholds, JudgeChoice(judging=judging))

    def failures(self, examples: int = 3) -> list[ArmFailures]:
        """Per arm, the failed runs' labels (the failure taxonomy) with example runs."""
        return summarize_failures(labelled_frame(self.path), examples)


def load(path: str | Path) -> Results:
    """The results of a folder written by ``loopbench run`` or ``Experiment.run``."""
    folder = Path(path)
    # A folder that cannot be read says so here, not later: every line is checked as the
    # record model checks it, on the columnar path (a million runs in seconds, not a minute).
    # guard: load-checks-every-line-columnar
    read_frames(folder, drop=[name for name in FIELDS if name != "arm"])
    return Results(folder)
