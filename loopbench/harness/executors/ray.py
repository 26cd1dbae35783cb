"""Runs made on a Ray cluster (``loopbench run --executor ray``; see docs/ray.md).

The driver (this process) sends the jobs as plain data, ``batch`` at a time, to a pool of
Ray actors: one per free CPU, at most one per run in flight. Each actor receives the run's
settings (``RunConfig``) as they are, rebuilds the task set and the arms from their names,
checks that they are the driver's (loopbench's version, every task's fingerprint, every
arm's resolved options), opens its clients once with the function the local path uses
(``loopbench.harness.endpoints.open_clients``), and makes the runs with ``Runner.run_one``,
returning records and traces as JSON-able dicts. The driver writes them, each run key
once.

A worker process that dies is started again and its unfinished batches are sent again
(actor restarts and task retries, ``RETRIES`` times a batch); the runs of a batch that
kept killing its worker are named in an ``ExecutorError`` once the rest are made. An error
raised on a worker (a task set that differs from the driver's) stops the grid at once.

API keys never travel: a worker reads its key from its own environment, by the variable's
name (Ray logs a runtime_env's variables in clear, so keys are not sent that way either).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import itertools
import logging
import socket
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from loopbench.harness.arms import Arm, ArmError, parse_arm, parse_arms, prompt_files_in
from loopbench.harness.config import RunConfig
from loopbench.harness.endpoints import connection, open_clients, resolve_endpoints
from loopbench.harness.executors import ExecutorError, RayUnavailable
from loopbench.harness.install_hints import install_command
from loopbench.harness.models.endpoint import FALLBACK_KEY_ENV, Endpoint, EndpointNotConfigured
from loopbench.harness.models.estimate import EstimateUnavailable, shipped_tokenizer
from loopbench.harness.models.replicas import grid_client
from loopbench.harness.models.types import ModelClient
from loopbench.harness.patterns.registry import UnknownPattern
from loopbench.harness.plugins import PluginError, load_plugin
from loopbench.harness.reasoning import ReasoningRefused
from loopbench.harness.results.prices import PriceTable
from loopbench.harness.results.records import RunRecord
from loopbench.harness.runner import VERSION, Finish, Job, Runner, RunSettings
from loopbench.sandbox.isolation import SandboxError
from loopbench.sandbox.limits import Limits
from loopbench.sandbox.run import Sandbox
from loopbench.tasks.loading import load_taskset
from loopbench.tasks.mcp_tools import stop_servers
from loopbench.tasks.taskset import AnyTask, TaskSetError, with_servers

#: How many times a batch is sent again after its worker died.
RETRIES = 3
INSTALL = f"--executor ray needs Ray: {install_command('ray')}"


def import_ray() -> Any:
    """The ray module, or RayUnavailable saying how to install it."""
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise RayUnavailable(INSTALL) from None


class WorkerSetupError(ExecutorError):
    """A worker cannot make this grid's runs (raised on the worker, said by the driver)."""


@dataclass(frozen=True)
class WorkerSetup:
    """What every worker is given: the run's settings as they are (no key travels: each
    worker reads its keys from its own environment, by the variables' names) and the
    driver's facts the records need. The executor fills in the fields after ``keyed``."""

    config: RunConfig
    """The run's settings; its task set is a built-in name, or a folder at the same path
    on every worker."""
    keyed: tuple[str, ...] = ()
    """The models the driver had a key for: a worker without one refuses to start."""
    model_name: str = ""
    experiment_id: str = ""
    prices: PriceTable | None = None
    loopbench_version: str = VERSION
    workers: int = 1


@dataclass(frozen=True)
class RemoteJob:
    """One run, as plain data."""

    arm: str
    options: dict[str, Any]
    task_id: str
    fingerprint: str
    repeat: int
    model: str
    supersedes: str | None

    @classmethod
    def of(cls, job: Job) -> RemoteJob:
        arm, task = job.arm, job.task
        return cls(
            arm.spec, arm.resolved, task.id, task.fingerprint, job.repeat, job.model, job.supersedes
        )


class Worker:
    """A Ray actor: makes the runs of the batches sent to it. Its runner and clients are
    built on the first batch, on the actor's event loop, which their connections use."""

    def __init__(self, setup: WorkerSetup) -> None:
        self.setup = setup
        self._runner: asyncio.Future[Runner] | None = None
        self._tasks: dict[str, AnyTask] = {}
        self._arms: dict[str, Arm] = {}
        self._stack = contextlib.AsyncExitStack()  # the clients, closed with the worker

    async def run(self, batch: list[RemoteJob]) -> list[dict[str, Any]]:
        if self._runner is None:  # one start, however many batches wait for it
            self._runner = asyncio.ensure_future(self._start())
        runner = await self._runner
        jobs = [self._job(job) for job in batch]
        made = await asyncio.gather(*(runner.run_one(job) for job in jobs))
        return [{"record": r.model_dump(mode="json"), "trace": t.to_json()} for r, t in made]

    async def close(self) -> None:
        await self._stack.aclose()
        stop_servers()  # the MCP servers this worker started for its runs

    async def _start(self) -> Runner:
        setup, config = self.setup, self.setup.config
        if setup.loopbench_version != VERSION:
            raise _refused(
                f"it has loopbench {VERSION}, the driver {setup.loopbench_version}: install "
                "the same version on every node"
            )
        try:
            for module in config.plugins:
                load_plugin(module)
            taskset = load_taskset(
                config.tasks, config.grader, config.columns, config.rows_to_read, config.preset
            )
            # An experiment file's MCP servers, as the driver offered them (its own start).
            taskset = with_servers(taskset, config.mcp, str(config.tasks))
            estimate = shipped_tokenizer() if config.count_tokens else None
            limits = Limits(timeout_s=taskset.timeout_s)
            sandbox = Sandbox(limits, workers=config.grading_workers) if taskset.is_code else None
            _, endpoints = resolve_endpoints(config)
        except (
            PluginError,
            TaskSetError,
            EstimateUnavailable,
            SandboxError,
            EndpointNotConfigured,
        ) as exc:
            raise _refused(str(exc)) from None
        for endpoint in endpoints:
            if endpoint.model in setup.keyed and endpoint.api_key is None:
                raise _refused(
                    f"requests to {endpoint.model} need an API key, and neither "
                    f"{_key_env(config, endpoint.model)} nor {FALLBACK_KEY_ENV} is set in its "
                    "environment: set it where the Ray workers start (docs/ray.md)"
                )
        self._tasks = {task.id: task for task in taskset.tasks}
        # The cluster keeps to the rate limit: each worker to its share.
        share = config.rate_limit / setup.workers if config.rate_limit else None
        # And to its share of the requests in flight: at least one, so the cluster keeps to
        # --concurrency unless more workers than that were asked for (--runs-in-flight).
        requests = max(1, config.concurrency // setup.workers)
        how = replace(connection(config, requests), rate_limit=share)
        clients = await open_clients(self._stack, endpoints, how)
        settings = RunSettings(
            prices=setup.prices,
            max_trace_text=config.max_trace_text,
            estimate=estimate,
            sandbox=sandbox,
            sampling=config.sampling,
        )
        client: ModelClient = grid_client(dict(clients.items()))
        return Runner(taskset, client, setup.model_name, settings, setup.experiment_id)

    def _job(self, job: RemoteJob) -> Job:
        task = self._tasks.get(job.task_id)
        if task is None or task.fingerprint != job.fingerprint:
            differs = "has no task" if task is None else "has another version of task"
            raise _refused(
                f"its task set {self.setup.config.tasks!r} {differs} {job.task_id!r}: give every "
                "worker the driver's task set"
            )
        if not self._arms:  # the driver's arms, their prompt files read at its paths
            try:
                self._arms = {arm.spec: arm for arm in parse_arms(self.setup.config.arms)}
            except (UnknownPattern, ArmError) as exc:
                raise _refused(f"{exc} (is the plugin installed on the workers?)") from None
        arm = self._arms.get(job.arm)
        if arm is None:
            try:
                arm = self._arms[job.arm] = parse_arm(job.arm)
            except (UnknownPattern, ArmError) as exc:
                raise _refused(f"{exc} (is the plugin installed on the workers?)") from None
        if arm.resolved != job.options:
            raise _refused(
                f"it resolves arm {job.arm!r} to other options ({arm.resolved}, the driver "
                f"{job.options}): install the driver's loopbench and plugins on every node"
            )
        return Job(arm, task, job.repeat, job.supersedes, job.model)


def _refused(why: str) -> WorkerSetupError:
    return WorkerSetupError(f"the Ray worker on {socket.gethostname()} cannot make the runs: {why}")


def _key_env(config: RunConfig, model: str) -> str:
    """The variable a model's key is read from."""
    entry = next((m for m in config.models if m.name == model), None)
    return (entry.api_key_env if entry else None) or config.api_key_env


def _probe(address: str) -> None:
    """Refuse at once an address where nothing listens: Ray itself waits minutes, then
    exits the process."""
    host, colon, port = address.removeprefix("ray://").rpartition(":")
    if not colon or not port.isdigit():
        return  # auto, or a form Ray reads otherwise
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
    except OSError as exc:
        raise ExecutorError(
            f"--ray-address {address}: nothing answers there ({exc.strerror or exc}); give "
            "the head node's HOST:6379, ray://HOST:10001, or auto on a node of the cluster"
        ) from None


class RayExecutor:
    """Sends a grid's runs to Ray workers. The settings' ``ray_address`` is the cluster
    (``auto``, ``ray://host:10001``); without one, Ray starts on this machine. A process already
    connected to Ray (``ray.init`` called) is used as it is. Use it in a ``with`` block, or
    call ``close`` after the grid: its actors live until then."""

    def __init__(self, setup: WorkerSetup, batch: int = 1) -> None:
        self.ray = import_ray()
        self.setup = setup
        self.address = setup.config.ray_address
        self.batch = batch
        self._started = False
        self._pool: list[Any] = []
        self._pool_for: tuple[Any, ...] | None = None

    @classmethod
    def for_config(cls, config: RunConfig, endpoints: Sequence[Endpoint]) -> RayExecutor:
        """The executor of ``config``'s runs on its endpoints: a folder of tasks and the
        arms' prompt files are read at the same paths on every worker, and a worker refuses
        to start without a key for a model the driver had one for."""
        tasks = Path(config.tasks)
        here = {
            "tasks": str(tasks.resolve()) if tasks.is_dir() else config.tasks,
            "arms": [prompt_files_in(arm, Path.cwd()) for arm in config.arms],
        }
        setup = config.model_copy(update=here)
        keyed = tuple(e.model for e in endpoints if e.api_key is not None)
        return cls(WorkerSetup(setup, keyed))

    def __enter__(self) -> RayExecutor:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        if self.address:
            _probe(self.address)
        if self.ray.is_initialized():
            return
        try:
            self.ray.init(
                address=self.address or "local",  # not a cluster ray.init would guess at
                include_dashboard=False,
                logging_level=logging.ERROR,
            )
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = f"--ray-address {self.address}" if self.address else "a local Ray instance"
            raise ExecutorError(f"{where}: cannot connect ({exc}); see docs/ray.md") from None
        self._started = True

    def close(self) -> None:
        self._retire()
        if self._started:
            self.ray.shutdown()
            self._started = False

    async def __call__(
        self, runner: Runner, jobs: Iterable[Job], concurrency: int, finish: Finish
    ) -> None:
        if runner.settings.cache is not None or runner.settings.paired:
            raise ExecutorError(
                "--cache and --paired share responses within one process, and Ray workers "
                "do not share them: drop them, or run with --executor local"
            )
        self.start()
        # Each slot keeps one batch in flight; together they hold ``concurrency`` runs.
        whole, rest = divmod(concurrency, self.batch)
        slots = [self.batch] * whole + ([rest] if rest else [])
        pool = self._actors(runner, len(slots))
        queue = iter(jobs)
        lost: list[Job] = []
        errors = self.ray.exceptions

        async def feed(actor: Any, size: int) -> None:
            while batch := list(itertools.islice(queue, size)):
                try:
                    made = await actor.run.remote([RemoteJob.of(job) for job in batch])
                except errors.RayTaskError as exc:  # raised by the worker: the same every time
                    cause = exc.cause
                    if isinstance(cause, WorkerSetupError | ReasoningRefused):  # said as it is
                        raise ExecutorError(str(cause)) from None
                    raise ExecutorError(
                        f"a Ray worker failed ({type(cause).__name__}: {cause}); every run "
                        "finished is recorded"
                    ) from None
                except errors.RayActorError:  # its worker died RETRIES + 1 times
                    lost.extend(batch)
                    continue
                for item in made:
                    finish(RunRecord.model_validate(item["record"]), item["trace"])

        feeds = [
            asyncio.ensure_future(feed(pool[i % len(pool)], size)) for i, size in enumerate(slots)
        ]
        try:
            await asyncio.gather(*feeds)
        finally:
            for running in feeds:
                running.cancel()
        if lost:
            shown = ", ".join(f"{j.arm.spec} on {j.task.id} #{j.repeat}" for j in lost[:3])
            more = f" and {len(lost) - 3} more" if len(lost) > 3 else ""
            raise ExecutorError(
                f"runs not made, their Ray worker having died {RETRIES + 1} times: {shown}"
                f"{more}; every other run is recorded. Run the same command again to make "
                "them; the Ray logs say why the worker died"
            )

    def _actors(self, runner: Runner, slots: int) -> list[Any]:
        """The pool of workers for this runner's grid; kept across its rounds."""
        settings = runner.settings
        made_for = (runner.model_name, runner.experiment_id, settings.prices)
        if self._pool and self._pool_for == made_for:
            return self._pool
        self._retire()
        free = int(self.ray.available_resources().get("CPU", 0))
        workers = max(1, min(free, slots))
        setup = replace(
            self.setup,
            model_name=runner.model_name,
            experiment_id=runner.experiment_id,
            prices=settings.prices,
            workers=workers,
        )
        actor = self.ray.remote(Worker).options(
            num_cpus=1, max_restarts=-1, max_task_retries=RETRIES
        )
        self._pool = [actor.remote(setup) for _ in range(workers)]
        self._pool_for = made_for
        return self._pool

    def _retire(self) -> None:
        """Close the workers' connections, then end them."""
        # A worker that cannot close its connections is ended all the same.
        with contextlib.suppress(self.ray.exceptions.RayError):
            self.ray.get([actor.close.remote() for actor in self._pool], timeout=10)
        for actor in self._pool:
            self.ray.kill(actor)
        self._pool, self._pool_for = [], None
