"""``loopbench grade --regrade RESULTS``'s flags and what it prints (the work is
``loopbench.harness.regrade``'s)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import click

from loopbench.harness.cli.errors import Finite
from loopbench.harness.errors import BadInput
from loopbench.harness.models.endpoint import DEFAULT_KEY_ENV
from loopbench.harness.plugins import load_plugin
from loopbench.harness.terminal import printable

F = TypeVar("F", bound=Callable[..., object])


@dataclass(frozen=True)
class Regrade:
    """``--regrade RESULTS`` and the judge's endpoint it grades with."""

    regrade: Path | None
    tasks: str | None
    judge_model: str | None
    judge_base_url: str | None
    api_key_env: str
    timeout: float
    max_retries: int
    rate_limit: float | None
    cache_dir: str | None
    prices: str | None
    plugins: tuple[str, ...]


REGRADE_OPTIONS = [
    click.option(
        "--regrade",
        type=click.Path(path_type=Path),
        help="Grade again the runs of this results folder whose judge gave no verdict "
        "(grade_status judge_api_error or judge_unreadable), with the folder's grader; each "
        "new record supersedes the old. The runs are not made again.",
    ),
    click.option(
        "--tasks",
        help="--regrade: the folder's task set, when its name alone does not find it (a "
        "folder or data file given to `run --tasks`).",
    ),
    click.option(
        "--judge-model",
        help="--regrade: the judge's model. Default: the one the folder's grader recorded.",
    ),
    click.option(
        "--judge-base-url",
        help="--regrade: the judge's endpoint [env LOOPBENCH_BASE_URL]. Needs a judge model.",
    ),
    click.option(
        "--api-key-env",
        default=DEFAULT_KEY_ENV,
        show_default=True,
        help="--regrade: the variable holding the judge's API key.",
    ),
    click.option(
        "--timeout",
        type=Finite(0, min_open=True),
        default=120.0,
        show_default=True,
        help="--regrade: seconds allowed for one judge request.",
    ),
    click.option(
        "--max-retries",
        type=click.IntRange(min=0),
        default=3,
        show_default=True,
        help="--regrade: retries of a judge request on 429, 5xx and connection errors.",
    ),
    click.option(
        "--rate-limit",
        type=Finite(0, min_open=True),
        help="--regrade: judge requests a second at most.",
    ),
    click.option(
        "--cache",
        "cache_dir",
        type=click.Path(),
        help="--regrade: the response cache (DIR/responses.sqlite) the run used: a verdict "
        "already paid for is replayed.",
    ),
    click.option("--prices", type=click.Path(), help="--regrade: price table (TOML)."),
    click.option(
        "--plugin",
        "plugins",
        multiple=True,
        help="--regrade: import this module first (one registering the folder's grader).",
    ),
]


def regrade_options(command: F) -> F:
    """--regrade and the judge's endpoint's flags."""
    for option in reversed(REGRADE_OPTIONS):
        command = option(command)
    return command


def run_regrade(again: Regrade) -> None:
    """Regrade the folder and say how many runs were graded again and how many still wait."""
    # Here, not above: the rest of `grade` reads no results (and imports no pandas).
    from loopbench.harness.config import build
    from loopbench.harness.regrade import folder_meta, judge_settings, regrade, waiting

    assert again.regrade is not None
    folder = again.regrade
    for module in again.plugins:
        load_plugin(module)
    meta = folder_meta(folder)
    if not waiting(folder):
        click.echo(f"nothing to regrade: every run in {folder} has its verdict, or had no answer")
        return
    given = {
        key: value
        for key, value in (("model", again.judge_model), ("base_url", again.judge_base_url))
        if value is not None
    }
    judge = judge_settings(meta, given)
    if not judge.get("model"):
        raise BadInput(
            f"{folder}: its grader recorded no judge model: give --judge-model (and "
            "--judge-base-url) to regrade its runs"
        )
    config = build(
        {
            "judge": judge,
            "api_key_env": again.api_key_env,
            "timeout_s": again.timeout,
            "max_retries": again.max_retries,
            "rate_limit": again.rate_limit,
            "cache": again.cache_dir,
            "prices": again.prices,
        },
        "grade --regrade's flags",
    )
    say: Callable[[str], None] = lambda line: click.echo(printable(line), err=True)  # noqa: E731
    done = asyncio.run(regrade(folder, config, again.tasks, say))
    click.echo(
        f"regraded {done.regraded} runs; {done.still_failing} still without a verdict "
        f"(their judge failed again: run grade --regrade {folder} later)"
        if done.still_failing
        else f"regraded {done.regraded} runs; none is left without a verdict"
    )
    if done.left:
        shown = ", ".join(sorted(set(done.left))[:5])
        click.echo(
            f"note: {len(done.left)} runs left as they were: their task changed or is gone "
            f"since, or no answer was kept ({shown})",
            err=True,
        )
