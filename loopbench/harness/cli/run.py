"""``loopbench run``: a task set through a grid of arms, appended to a results folder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from loopbench.harness.api import Experiment, Results
from loopbench.harness.cli.errors import Command, Finite
from loopbench.harness.cli.grid_options import (
    connection_options,
    executor_options,
    judge_flags,
    judge_options,
    sampling_options,
    stopping_options,
)
from loopbench.harness.cli.progress import Progress
from loopbench.harness.config import (
    CHAT_FORMATS,
    DEFAULT_KEY_ENV,
    ModelEntry,
    RunConfig,
    build,
    load_experiment,
)
from loopbench.harness.errors import BadInput
from loopbench.harness.report.ungraded import NOTHING_GRADED
from loopbench.harness.results.prices import PriceTable
from loopbench.harness.terminal import error_line, printable
from loopbench.harness.trace import MAX_TEXT


@click.command("run", cls=Command)
@click.option(
    "--tasks",
    "tasks_spec",
    default="depot",
    show_default=True,
    help="A built-in task set name, a folder with tasks.jsonl and taskset.toml, or a data "
    "file: CSV, JSONL, Parquet, Inspect samples or promptfoo tests (docs/tasksets.md).",
)
@click.option(
    "--grader",
    help="Grade with this registered grader instead of the set's own: NAME or "
    "NAME:KEY=VALUE,... (values read as JSON, else text), e.g. number:tolerance=0.01. A data "
    "file's default: em (Inspect samples with choices: choice; promptfoo tests: asserts).",
)
@click.option("--question", "question_column", help="A data file's question column [question].")
@click.option("--answer", "answer_column", help="A data file's answer column [answer].")
@click.option("--id", "id_column", help="A data file's id column [id, else the row's number].")
@click.option("--choices", "choices_column", help="A data file's column of options (choice).")
@click.option(
    "--preset",
    help="Read a data file as the dataset it is, published: gsm8k, mmlu, arc, boolq, squad, "
    "hellaswag (known by its columns when none are mapped; docs/tasksets.md).",
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
    type=click.Path(),
    help="A TOML file with arms, tasks, repeats, concurrency and out; flags given here win.",
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    help="Run only the first N tasks of the set (a quick look at a large one); the folder "
    "stays tied to the whole set, so a later run without --limit goes on from there.",
)
@click.option(
    "--slice",
    help="Run only the tasks of this slice (e.g. hard-100 of game24), before --limit; the "
    "folder stays tied to the whole set.",
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
    help="Requests in flight at once to each endpoint, at most (to each replica, to each "
    "model's server).",
)
@click.option(
    "--runs-in-flight",
    type=click.IntRange(min=1),
    help="Runs in flight at once. Default: twice the requests the endpoints allow "
    "(--concurrency each), so that whenever a request ends another run's call is ready to "
    "take its slot; with --paired or --executor ray, as many. The time a run waits for a "
    "slot is not part of its latency.",
)
@click.option(
    "--out",
    type=click.Path(),
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
    "--provider",
    type=click.Choice(["openai", "anthropic"]),
    help="The API the model is spoken to in: openai (chat completions) or anthropic (the "
    "Messages API; key from ANTHROPIC_API_KEY, URL from ANTHROPIC_BASE_URL or "
    "https://api.anthropic.com). Default: anthropic for a model written anthropic/..., or "
    "when only ANTHROPIC_BASE_URL is set; else openai.",
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
@connection_options
@sampling_options
@judge_options
@click.option("--prices", type=click.Path(), help="Price table (TOML) for cost.")
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
    type=click.Path(),
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
    help="Run again the runs recorded as api_error or tool_error, and those a failing "
    "response cache ended (pattern_error naming a SQLite error, before the cache was "
    "bypassed on failing); "
    "each new record supersedes the old, which stays in runs.jsonl.",
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
def run_command(**flags: Any) -> None:
    """Run every arm on every task, REPEATS times, and print the table."""
    quiet = flags.pop("quiet")
    context = click.get_current_context()
    _refuse_blank(context.command, flags)
    config = _config(flags, context.get_parameter_source)
    experiment = Experiment.from_config(config, say=_say)
    try:
        # Leaving the block stops the live view (also on Ctrl-C) and prints the last line.
        with Progress(quiet, rounds=config.until_separated) as progress:
            results = experiment.run(observer=progress)
    except KeyboardInterrupt:
        click.echo("interrupted: finished runs are recorded; run it again to go on", err=True)
        raise SystemExit(130) from None
    prices = experiment.settings.prices
    assert prices is not None  # from_config loads them
    table_after_run(results, prices, config.price_as)


#: What a text option expects, for the line refusing it empty; "a value" otherwise.
EXPECTED = {
    "tasks_spec": "a built-in task set's name, a task set folder or a data file",
    "grader": "a registered grader, NAME or NAME:KEY=VALUE,...",
    "question_column": "a column of the data file",
    "answer_column": "a column of the data file",
    "id_column": "a column of the data file",
    "choices_column": "a column of the data file",
    "preset": "a dataset's name (gsm8k, mmlu, arc, boolq, squad, hellaswag)",
    "arm_specs": "PATTERN or PATTERN:key=value,...",
    "experiment": "an experiment file (TOML)",
    "out": "a results folder",
    "slice": "a slice of the task set (e.g. hard-100)",
    "base_urls": "an OpenAI-compatible base URL (e.g. https://api.openai.com/v1)",
    "model_names": "the name of the model the endpoint serves (e.g. gpt-4o-mini)",
    "api_key_env": "the name of the variable holding the API key",
    "prices": "a price table (TOML)",
    "price_as": "a model's name in the price table",
    "cache_dir": "a cache folder",
    "plugins": "a module to import (e.g. mypackage.patterns)",
    "ray_address": "a Ray cluster (auto, HOST:6379, ray://HOST:10001)",
    "judge_model": "the judge's model name (e.g. gpt-4o)",
    "judge_base_url": "the judge's base URL (e.g. https://api.openai.com/v1)",
}


def _refuse_blank(command: click.Command, flags: dict[str, Any]) -> None:
    """Refuse a text option given empty or blank, in one line: ``--out ""`` would be the
    current folder, ``--base-url ""`` no endpoint, and ``--model ""`` a name no one serves."""
    for param in command.params:
        given = flags.get(param.name or "")
        for value in given if isinstance(given, tuple) else (given,):
            # guard: run-empty-text-option-refused
            if isinstance(value, str) and not value.strip():
                expected = EXPECTED.get(param.name or "", "a value")
                raise BadInput(
                    f"{param.opts[0]} {value!r} is empty: give {expected}, or drop the option"
                )


def _config(flags: dict[str, Any], given: Callable[[str], ParameterSource | None]) -> RunConfig:
    """The run's settings: the experiment file's, with the flags given laid over them."""
    judge = judge_flags(flags)
    written = {field: value for field, value in _fields(flags).items() if _given(given, field)}
    columns = {c.removesuffix("_column"): flags[c] for c in COLUMN_FLAGS if flags[c] is not None}
    if columns:
        written["columns"] = columns
    if judge:
        written["judge"] = judge
    if flags["experiment"] is None:
        return build(written, "the run's flags")
    return load_experiment(Path(flags["experiment"])).merged(written)


#: Each flag's parameter, and the RunConfig field it sets (where the names differ).
FIELDS = {
    "tasks_spec": "tasks",
    "arm_specs": "arms",
    "model_names": "models",
    "timeout": "timeout_s",
    "cache_dir": "cache",
    "executor_name": "executor",
    "stream_idle_timeout": "stream_idle_s",
    "batch_poll": "batch_poll_s",
}


#: The flags naming a data file's columns: RunConfig's ``columns``.
COLUMN_FLAGS = ("question_column", "answer_column", "id_column", "choices_column")


def _fields(flags: dict[str, Any]) -> dict[str, Any]:
    """The flags as RunConfig fields: names mapped, tuples as lists."""
    fields: dict[str, Any] = {}
    for name, value in flags.items():
        if name == "experiment" or name in COLUMN_FLAGS:
            continue
        if isinstance(value, tuple):
            value = list(value)
        if name == "model_names":
            value = [ModelEntry(name=model) for model in value]
        fields[FIELDS.get(name, name)] = value
    return fields


def _given(given: Callable[[str], ParameterSource | None], field: str) -> bool:
    """Whether the flag setting ``field`` was given (not left at its default)."""
    parameter = next((p for p, f in FIELDS.items() if f == field), field)
    return given(parameter) in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)


def _say(line: str) -> None:
    click.echo(printable(line), err=True)  # may name a file, a column or an arm


def table_after_run(results: Results, prices: PriceTable, price_as: str | None) -> None:
    """The table of the folder (every run in it, not only this call's), its notes, and a
    warning when runs ended in api_error; when an arm graded nothing (every run an
    infrastructure status), a line saying so last, and exit 3: a CI job must not pass."""
    click.echo(
        f"{results.ran} runs done, {results.skipped} already recorded; results in {results.path}",
        err=True,
    )
    printed = results.printed(price_as, prices)
    click.echo(printed.text)
    if printed.api_errors:
        click.echo(
            f"warning: {printed.api_errors} runs ended in api_error; see the error column of "
            f"{results.path / 'runs.jsonl'}, and run the same command with --retry-errors "
            "to run them again",
            err=True,
        )
    # guard: run-nothing-graded-exits-3
    if printed.ungraded is not None:
        click.echo(f"Error: {error_line(printed.ungraded.line())}", err=True)
        raise SystemExit(NOTHING_GRADED)
