"""A RunConfig's runtime objects: the price table, the response cache, the token estimator
and the coding sandbox it asks for, as ``RunSettings``. Each is refused here, before any
request, when it cannot be had (a price table that does not load, a cache folder that
cannot be made, the tokenizer's extra not installed, no sandbox on this machine)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from loopbench.harness.config import RunConfig
from loopbench.harness.models.cache import ResponseCache
from loopbench.harness.models.estimate import shipped_tokenizer
from loopbench.harness.results.prices import load_prices
from loopbench.harness.runner import RunSettings
from loopbench.sandbox.limits import Limits
from loopbench.sandbox.run import Sandbox
from loopbench.tasks.taskset import TaskSet


def run_settings(config: RunConfig, taskset: TaskSet, say: Callable[[str], None]) -> RunSettings:
    """The runtime objects ``config`` asks for; ``say`` is told what a user should know
    (how isolated the sandbox is, a cache miss with ``cache_debug``)."""
    prices = load_prices(Path(config.prices) if config.prices else None)
    if config.price_as:
        # guard: price-as-checked-before-running
        prices.require(config.price_as)  # before anything runs, not after the grid
    return RunSettings(  # runs in flight: set by the grid (Experiment.from_config)
        prices=prices,
        retry_errors=config.retry_errors,
        max_trace_text=config.max_trace_text,
        cache=ResponseCache(Path(config.cache), say) if config.cache is not None else None,
        cache_debug=say if config.cache_debug else None,
        estimate=shipped_tokenizer() if config.count_tokens else None,
        sandbox=_sandbox(taskset, config.grading_workers, say),
        paired=config.paired,
        sampling=config.sampling,
    )


def _sandbox(taskset: TaskSet, workers: int | None, say: Callable[[str], None]) -> Sandbox | None:
    """The sandbox a coding task set's tests run in, after saying how isolated it is."""
    if not taskset.is_code:
        return None
    sandbox = Sandbox(Limits(timeout_s=taskset.timeout_s), workers=workers)
    if sandbox.warning:
        say(f"warning: {sandbox.warning}")
    return sandbox
