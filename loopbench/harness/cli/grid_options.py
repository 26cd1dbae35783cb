"""Groups of ``loopbench run``'s options: the sampling settings, the stopping rule of
--until-separated, the executor, and what a reply may hold. What goes together or not at
all is checked where every way of giving them meets: ``loopbench.harness.config.RunConfig``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

from loopbench.harness.cli.errors import Finite
from loopbench.harness.reasoning import EFFORT_LEVELS, MIN_THINKING_BUDGET

F = TypeVar("F", bound=Callable[..., object])

STOPPING_OPTIONS = [
    click.option(
        "--until-separated",
        is_flag=True,
        help="Run in rounds (one repeat of every arm on every task) and stop running an arm once "
        "its difference from the best arm is known: past the round's group-sequential bound, "
        "within --margin, or a gap of --margin no longer likely (futility). Alpha is spent "
        "across rounds (Pocock-like) and pairs of arms.",
    ),
    click.option(
        "--max-repeats",
        type=click.IntRange(min=1),
        help="--until-separated: rounds at most.  [default: 10]",
    ),
    click.option(
        "--margin",
        type=Finite(0, 1),
        help="--until-separated: a difference within this many (as a share, 0.05 = 5 points) "
        "counts as none.  [default: 0.05]",
    ),
    click.option(
        "--alpha",
        type=Finite(0, 1, min_open=True, max_open=True),
        help="--until-separated: the chance, over the whole run, of declaring identical arms "
        "different.  [default: 0.05]",
    ),
]

SAMPLING_OPTIONS = [
    click.option(
        "--temperature",
        type=Finite(0),
        help="Sampling temperature sent on every request of every arm that does not set its "
        "own (self_consistency, best_of_n and tot sample at their own). Unset: none is sent "
        "and the endpoint's default applies.",
    ),
    click.option(
        "--top-p", type=Finite(0, 1, min_open=True), help="Nucleus sampling's top_p, sent likewise."
    ),
    click.option(
        "--seed",
        type=int,
        help="Sampling seed, sent likewise (on servers that honour it, repeats with one seed "
        "give one sample: the table says so when every repeat agrees).",
    ),
    click.option(
        "--reasoning-effort",
        type=click.Choice(EFFORT_LEVELS),
        help="Reasoning effort sent likewise, on every request of every arm that does not set "
        "its own reasoning_effort (docs/reasoning.md). Unset: none is sent.",
    ),
    click.option(
        "--thinking-budget",
        type=click.IntRange(min=MIN_THINKING_BUDGET),
        help=f"Thinking budget in tokens (at least {MIN_THINKING_BUDGET}, Anthropic's "
        "minimum), sent likewise to Anthropic's API; an OpenAI-style endpoint is not sent it.",
    ),
]

EXECUTOR_OPTIONS = [
    click.option(
        "--executor",
        "executor_name",
        type=click.Choice(["local", "ray"]),
        default="local",
        show_default=True,
        help="Where runs are made: in this process, or on Ray workers (the ray extra; see "
        "docs/ray.md). This process alone writes --out either way, so resuming works as ever.",
    ),
    click.option(
        "--ray-address",
        help="--executor ray: the cluster to use (auto, or ray://HOST:10001). Default: start "
        "Ray on this machine.",
    ),
]


CONNECTION_OPTIONS = [
    click.option(
        "--max-response-mb",
        type=Finite(0, min_open=True),
        default=32.0,
        show_default=True,
        help="The most a reply's body may hold, in MiB once decompressed; reading stops "
        "there and the call is an api_error (not retried), so a compression bomb costs "
        "this much memory and no more.",
    ),
    click.option(
        "--stream",
        is_flag=True,
        help="Ask for every reply as server-sent events and read it as it comes, so each "
        "run records ttft_s (time to its first token) and the table shows p50 ttft; records "
        "are otherwise those of an unstreamed run. A stream cut short is an api_error with "
        "the usage it reported (not with the embedded model).",
    ),
    click.option(
        "--batch",
        is_flag=True,
        help="Send the requests through the endpoint's batch API (OpenAI's /v1/batches, "
        "Anthropic's /v1/messages/batches), "
        "at its batch price: the requests the runs in flight wait on go as one batch a "
        "round, polled until done. Journaled in the folder (batches.jsonl), so a run "
        "killed while its batch is pending resumes by polling it (docs/batch.md).",
    ),
    click.option(
        "--batch-poll",
        type=Finite(0, min_open=True),
        help="With --batch: seconds between polls of a pending batch. Default: 30.",
    ),
    click.option(
        "--stream-idle-timeout",
        type=Finite(0, min_open=True),
        help="With --stream: seconds allowed between one event of a stream and the next "
        "(the first counted from sending) before it is given up as stalled and retried. "
        "Default: --timeout, which bounds the whole request either way.",
    ),
]


JUDGE_OPTIONS = [
    click.option(
        "--judge-model",
        help="The model a judge grader asks for its verdicts (the judge grader), sent with "
        "temperature 0 and the run's --seed (0 unset; none to Anthropic's API); its tokens "
        "and cost are recorded apart from the runs' (docs/judge.md).",
    ),
    click.option(
        "--judge-base-url",
        help="The judge's endpoint, with the runs' key variable (--api-key-env), retries, "
        "rate limit and --cache. Default: the runs' endpoint. Needs --judge-model.",
    ),
]


def judge_options(command: F) -> F:
    """--judge-model and --judge-base-url."""
    for option in reversed(JUDGE_OPTIONS):
        command = option(command)
    return command


def judge_flags(flags: dict[str, object]) -> dict[str, object]:
    """The judge's flags given (taken out of ``flags``), as RunConfig's ``judge`` table."""
    given = {"model": flags.pop("judge_model", None), "base_url": flags.pop("judge_base_url", None)}
    return {key: value for key, value in given.items() if value is not None}


def sampling_options(command: F) -> F:
    """--temperature, --top-p, --seed, --reasoning-effort and --thinking-budget."""
    for option in reversed(SAMPLING_OPTIONS):
        command = option(command)
    return command


def stopping_options(command: F) -> F:
    """--until-separated and the options of its rule."""
    for option in reversed(STOPPING_OPTIONS):
        command = option(command)
    return command


def executor_options(command: F) -> F:
    """--executor and --ray-address."""
    for option in reversed(EXECUTOR_OPTIONS):
        command = option(command)
    return command


def connection_options(command: F) -> F:
    """--max-response-mb, --stream and --stream-idle-timeout."""
    for option in reversed(CONNECTION_OPTIONS):
        command = option(command)
    return command
