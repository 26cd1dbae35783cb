"""``loopbench run``: a task set through a grid of arms, appended to a results folder."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from dataclasses import replace
from pathlib import Path

import click
from click.core import ParameterSource

from graders.isolation import SandboxError
from graders.sandbox import Limits, Sandbox
from harness.api import Experiment, Results
from harness.cli.endpoints import (
    Connection,
    open_clients,
    resolve_endpoints,
    serving,
    throttle_notes,
)
from harness.cli.errors import BadInput, Finite
from harness.cli.grid_options import (
    executor_options,
    on_ray,
    round_line,
    sampling_options,
    stopping_options,
    stopping_rule,
)
from harness.cli.progress import Progress
from harness.cli.table import table_after_run
from harness.executors import ExecutorError, OnWorkers, RayUnavailable
from harness.experiment import ArmError, ModelEntry, load_experiment
from harness.models.cache import CacheError, ResponseCache
from harness.models.estimate import EstimateUnavailable, shipped_tokenizer
from harness.models.local import CHAT_FORMATS, LocalModelError
from harness.models.replicas import grid_client
from harness.models.settings import (
    DEFAULT_KEY_ENV,
    Endpoint,
    EndpointNotConfigured,
    without_credentials,
)
from harness.models.types import ModelClient
from harness.patterns.registry import UnknownPattern
from harness.plugins import PluginError, load_plugin
from harness.report.prices import PriceError, load_prices
from harness.report.table import Pricing
from harness.runner import RunSettings
from harness.sampling import Sampling, SamplingError
from harness.store import ResultsError, ResultsFolder
from harness.trace import MAX_TEXT
from tasks.taskset import TaskSet, TaskSetError


@click.command("run")
@click.option(
    "--tasks",
    "tasks_spec",
    default="depot",
    show_default=True,
    help="A built-in task set name, or a folder with tasks.jsonl and taskset.toml.",
)
@click.option(
    "--arm",
    "arm_specs",
    multiple=True,
    help="PATTERN or PATTERN:key=value,...; repeat for several arms. 'a|b' in a name or "
    "value expands into every combination, e.g. react_text:guard=on|off,tool=plain|improved.",
)
@click.option(
    "--experiment",
    type=click.Path(path_type=Path),
    help="A TOML file with arms, tasks, repeats, concurrency and out; flags given here win.",
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    help="Run only the first N tasks of the set (a quick look at a large one); the folder "
    "stays tied to the whole set, so a later run without --limit goes on from there.",
)
@click.option(
    "--repeats",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Runs of every (arm, task).",
)
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=8,
    show_default=True,
    help="Runs in flight at once (also caps concurrent requests).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    help="Results folder; re-running into it resumes. Default: results/<timestamp>.",
)
@click.option(
    "--base-url",
    "base_urls",
    multiple=True,
    help="OpenAI-compatible base URL [env LOOPBENCH_BASE_URL]. "
    "With neither this nor --model, the embedded local model runs. With several --model, "
    "give one (shared) or one per model, in the same order. Several for one --model are "
    "its replicas: runs take them in turn, each run keeping to one.",
)
@click.option(
    "--model",
    "model_names",
    multiple=True,
    help="Model name sent to the endpoint [env LOOPBENCH_MODEL]; 'local' for the embedded model. "
    "Repeat for several: every arm runs on every model, and the table groups by model.",
)
@click.option(
    "--local-chat-format",
    type=click.Choice(CHAT_FORMATS),
    default="chatml",
    show_default=True,
    help="Chat format of the embedded model's server.",
)
@click.option(
    "--api-key-env",
    default=DEFAULT_KEY_ENV,
    show_default=True,
    help="Name of the variable holding the API key (falls back to OPENAI_API_KEY).",
)
@click.option(
    "--timeout",
    type=Finite(0, min_open=True),
    default=120.0,
    show_default=True,
    help="Seconds allowed for one request, from connecting to its last byte.",
)
@click.option(
    "--rate-limit",
    type=Finite(0, min_open=True),
    help="Start at most this many requests a second (an endpoint's published limit). "
    "Without it, concurrency still halves on a burst of 429s and climbs back after "
    "successes.",
)
@click.option(
    "--max-retries",
    type=click.IntRange(min=0),
    default=3,
    show_default=True,
    help="Retries of a request on 429, 5xx and connection errors.",
)
@sampling_options
@click.option("--prices", type=click.Path(path_type=Path), help="Price table (TOML) for cost.")
@click.option("--price-as", help="In the printed table, price tokens as this model.")
@click.option(
    "--max-trace-text",
    type=click.IntRange(min=100),
    default=MAX_TEXT,
    show_default=True,
    help="Characters of one reply or tool result a trace keeps; a longer one is cut there "
    "with a marker, never in what is graded.",
)
@click.option(
    "--cache",
    "cache_dir",
    type=click.Path(path_type=Path),
    help="Keep every response in DIR/responses.sqlite and replay it when the same request "
    "comes again (same repeat): a re-run sends no request and gives the same records.",
)
@click.option(
    "--cache-debug",
    is_flag=True,
    help="On a cache miss, say which part of the request differed from the nearest cached one.",
)
@click.option(
    "--count-tokens",
    is_flag=True,
    help="When a response reports no usage, estimate its tokens with the embedded model's "
    "tokenizer instead of leaving them unknown (records count such calls).",
)
@click.option(
    "--retry-errors",
    is_flag=True,
    help="Run again the runs recorded as api_error; each new record supersedes the old, "
    "which stays in runs.jsonl.",
)
@click.option(
    "--paired",
    is_flag=True,
    help="Arms that send an identical request on the same task and repeat share its "
    "response, so repair arms start from the same first attempt (counted as cache hits).",
)
@click.option(
    "--grading-workers",
    type=click.IntRange(min=1),
    help="Coding tasks: test suites run at once in the sandbox. Default: one per core.",
)
@stopping_options
@click.option(
    "--plugin",
    "plugins",
    multiple=True,
    help="Import this module first, so the patterns or task sets it registers can run "
    "(e.g. mypackage.patterns); repeat for several. Installed packages' entry points "
    "(loopbench.patterns, loopbench.tasksets) are loaded without it.",
)
@executor_options
@click.option("--quiet", is_flag=True, help="No progress bar; plain lines for logs and CI.")
def run_command(
    tasks_spec: str,
    arm_specs: tuple[str, ...],
    experiment: Path | None,
    limit: int | None,
    repeats: int,
    concurrency: int,
    out: Path | None,
    base_urls: tuple[str, ...],
    model_names: tuple[str, ...],
    local_chat_format: str,
    api_key_env: str,
    timeout: float,
    rate_limit: float | None,
    max_retries: int,
    temperature: float | None,
    top_p: float | None,
    seed: int | None,
    prices: Path | None,
    price_as: str | None,
    max_trace_text: int,
    cache_dir: Path | None,
    cache_debug: bool,
    count_tokens: bool,
    retry_errors: bool,
    paired: bool,
    grading_workers: int | None,
    until_separated: bool,
    max_repeats: int | None,
    margin: float | None,
    alpha: float | None,
    plugins: tuple[str, ...],
    executor_name: str,
    ray_address: str | None,
    quiet: bool,
) -> None:
    """Run every arm on every task, REPEATS times, and print the table."""
    specs = list(arm_specs)
    wanted = [ModelEntry(name=name) for name in model_names]
    given = click.get_current_context().get_parameter_source
    rule = stopping_rule(until_separated, max_repeats, margin, alpha, given)
    ray = on_ray(executor_name, ray_address, cache_dir, paired)
    try:
        for module in plugins:
            load_plugin(module)
        if experiment is not None:
            written = load_experiment(experiment)
            specs = written.arms + specs
            if given("tasks_spec") != ParameterSource.COMMANDLINE:
                tasks_spec = written.tasks
            if given("repeats") != ParameterSource.COMMANDLINE:
                repeats = written.repeats
            if given("concurrency") != ParameterSource.COMMANDLINE:
                concurrency = written.concurrency
            if out is None and written.out:
                out = Path(written.out)
            wanted = wanted or written.models
            # Flags given win over the file, as for every other setting.
            temperature = written.temperature if temperature is None else temperature
            top_p = written.top_p if top_p is None else top_p
            seed = written.seed if seed is None else seed
        if not specs:
            raise ArmError("give at least one --arm, or an --experiment file that lists arms")
        grid = Experiment(
            tasks_spec,
            specs,
            repeats,
            concurrency,
            out=out,
            limit=limit,
            until_separated=rule,
            sampling=Sampling(temperature, top_p, seed),
        )
        _ = grid.parsed_arms  # the allowlist check: before anything else happens
    except (UnknownPattern, ArmError, PluginError, SamplingError) as exc:
        raise click.UsageError(str(exc)) from None
    try:
        taskset = grid.taskset
        price_table = load_prices(prices)
        if price_as:
            price_table.require(price_as)  # before anything runs, not after the grid
        local, endpoints = resolve_endpoints(wanted, base_urls, api_key_env, local_chat_format)
        names = list(dict.fromkeys(e.model for e in endpoints))
        if len(names) == 1:
            grid.model_name = names[0]
            urls = sorted(without_credentials(e.base_url) for e in endpoints)
            grid.base_url = urls[0] if len(urls) == 1 else urls
        elif rule is not None:
            raise click.UsageError("--until-separated compares arms on one model: give one")
        else:
            grid.models = {e.model: None for e in endpoints}
            grid.base_url = {e.model: without_credentials(e.base_url) for e in endpoints}
        if ray and local:
            raise click.UsageError(
                "--executor ray: the embedded model listens on this machine's loopback only; "
                "give --model and --base-url of a served model"
            )
        grid.settings = RunSettings(
            prices=price_table,
            retry_errors=retry_errors,
            max_trace_text=max_trace_text,
            cache=ResponseCache(cache_dir) if cache_dir is not None else None,
            cache_debug=_say if cache_debug else None,
            estimate=shipped_tokenizer() if count_tokens else None,
            sandbox=_sandbox(taskset, grading_workers),
            paired=paired,
        )
        if ray:
            from harness.executors.ray import RayExecutor, RemoteEndpoint, WorkerSetup

            keys = {entry.name: entry.api_key_env for entry in wanted if entry.api_key_env}
            setup = WorkerSetup(
                tasks=str(Path(tasks_spec).resolve()) if Path(tasks_spec).is_dir() else tasks_spec,
                endpoints=tuple(
                    RemoteEndpoint(
                        e.model, e.base_url, keys.get(e.model, api_key_env), e.api_key is not None
                    )
                    for e in endpoints
                ),
                plugins=plugins,
                timeout_s=timeout,
                max_retries=max_retries,
                rate_limit=rate_limit,
                count_tokens=count_tokens,
                grading_workers=grading_workers,
                sampling=grid.sampling,
            )
            grid.settings = replace(grid.settings, executor=RayExecutor(setup, ray_address))
    except (
        TaskSetError,
        PriceError,
        EndpointNotConfigured,
        LocalModelError,
        CacheError,
        EstimateUnavailable,
        SandboxError,
        RayUnavailable,
    ) as exc:
        raise BadInput(str(exc)) from None
    connection = Connection(timeout, max_retries, rate_limit)
    executor = grid.settings.executor  # a RayExecutor connects on entering, and lets go
    session = executor if isinstance(executor, contextlib.AbstractContextManager) else None
    try:
        with session or contextlib.nullcontext(), grid.open() as folder:
            for repair in folder.repairs:
                click.echo(f"warning: {repair}", err=True)
            with serving(local, local_chat_format, endpoints, quiet) as live:
                results = asyncio.run(_run(grid, folder, connection, live, quiet))
    except (ResultsError, ExecutorError) as exc:
        raise BadInput(str(exc)) from None
    except KeyboardInterrupt:
        click.echo("interrupted: finished runs are recorded; run it again to go on", err=True)
        raise SystemExit(130) from None
    finally:
        if grid.settings.cache is not None:
            grid.settings.cache.close()
    table_after_run(results, Pricing(price_table, price_as))


async def _run(
    grid: Experiment,
    folder: ResultsFolder,
    connection: Connection,
    endpoints: list[Endpoint],
    quiet: bool,
) -> Results:
    plain = quiet or not sys.stderr.isatty()
    # Leaving the block stops the live view (also on Ctrl-C) and prints the last line.
    with Progress(plain, rounds=grid.until_separated is not None) as progress:
        async with contextlib.AsyncExitStack() as stack:
            wanted = [] if grid.settings.executor else endpoints
            clients = await open_clients(stack, wanted, connection, grid.concurrency)
            client: ModelClient = grid_client(clients) if clients else OnWorkers()
            results = await grid.run_in(
                folder,
                client,
                progress.start,
                progress.step,
                lambda state: progress.note(round_line(state)),
            )
            for note in throttle_notes(clients):
                progress.note(note)
            return results


def _sandbox(taskset: TaskSet, workers: int | None) -> Sandbox | None:
    """The sandbox a coding task set's tests run in, after saying how isolated it is."""
    if not taskset.is_code:
        return None
    sandbox = Sandbox(Limits(timeout_s=taskset.timeout_s), workers=workers)
    if sandbox.warning:
        click.echo(f"warning: {sandbox.warning}", err=True)
    return sandbox


def _say(line: str) -> None:
    click.echo(line, err=True)
