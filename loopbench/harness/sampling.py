"""Sampling settings of a run: temperature, top_p and seed, and the reasoning settings
(``reasoning_effort``, ``thinking_budget``; ``loopbench.harness.reasoning``), sent only when set.

By default nothing is sent and the endpoint's own defaults apply, so that repeats are
samples wherever the endpoint samples (seed 003's experiment sends no temperature). A
setting given for the run goes on every request of every arm that does not set its own
(self_consistency, best_of_n and tot sample at a temperature of their own, an option of
theirs). What was sent is recorded: in experiment.json, which ties a results folder to
it, and in every record's ``sampling``.

Records written before sampling was a run setting hold no ``sampling``: loopbench then
sent temperature 0 on every request but those of the arms with a temperature of their
own (``LEGACY``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from loopbench.harness.errors import BadInput
from loopbench.harness.reasoning import check_budget, check_effort

if TYPE_CHECKING:
    from loopbench.harness.models.types import ModelRequest, ReasoningEffort

#: A setting's value as sent: a number, or an effort level.
Setting = float | int | str

#: What records and folders written before sampling settings existed were sent.
LEGACY: dict[str, Setting] = {"temperature": 0.0}


class SamplingError(BadInput):
    """A sampling setting no endpoint takes (exit code 2)."""


@dataclass(frozen=True)
class Sampling:
    """The run's sampling settings; None is not sent."""

    temperature: float | None = None
    top_p: float | None = None
    seed: int | None = None
    reasoning_effort: ReasoningEffort | None = None
    thinking_budget: int | None = None

    def __post_init__(self) -> None:
        if self.temperature is not None and not (
            math.isfinite(self.temperature) and self.temperature >= 0
        ):
            raise SamplingError(
                f"temperature {self.temperature!r}: give a number of 0 or more (0 is greedy)"
            )
        if self.top_p is not None and not (math.isfinite(self.top_p) and 0 < self.top_p <= 1):
            raise SamplingError(f"top_p {self.top_p!r}: give a share above 0, at most 1")
        if self.seed is not None and (
            isinstance(self.seed, bool) or not isinstance(self.seed, int)
        ):
            raise SamplingError(f"seed {self.seed!r}: give a whole number")
        if self.reasoning_effort is not None:
            check_effort(self.reasoning_effort)
        if self.thinking_budget is not None:
            check_budget(self.thinking_budget)

    def sent(self) -> dict[str, Setting]:
        """The settings sent, by their API names: what records hold."""
        settings: dict[str, Setting | None] = {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "seed": self.seed,
            "reasoning_effort": self.reasoning_effort,
            "thinking_budget": self.thinking_budget,
        }
        return {name: value for name, value in settings.items() if value is not None}

    def apply(self, request: ModelRequest) -> ModelRequest:
        """``request`` with every setting it leaves unset taken from the run's."""
        # guard: arm-own-temperature-wins
        return replace(
            request,
            temperature=self.temperature if request.temperature is None else request.temperature,
            top_p=self.top_p if request.top_p is None else request.top_p,
            seed=self.seed if request.seed is None else request.seed,
            reasoning_effort=self.reasoning_effort
            if request.reasoning_effort is None
            else request.reasoning_effort,
            thinking_budget=self.thinking_budget
            if request.thinking_budget is None
            else request.thinking_budget,
        )


def describe(sent: Mapping[str, Setting] | None) -> str:
    """What a run sent, in words: ``temperature 0.7, seed 3``."""
    if sent is None:
        return f"{describe(LEGACY)} (as loopbench sent before sampling was a run setting)"
    if not sent:
        return "no sampling settings sent (the endpoint's defaults)"
    return ", ".join(f"{name} {_shown(value)}" for name, value in sorted(sent.items()))


def _shown(value: Setting) -> str:
    return value if isinstance(value, str) else f"{value:g}"


def describe_runs(sent: Iterable[Mapping[str, Setting] | None]) -> str:
    """What a set of runs sent (each run's record), in words; every setting seen when they
    differ. Runs read as columns share one dict per distinct value: each is read once."""
    distinct = {}
    listed = getattr(sent, "tolist", None)  # a column: a list at once, not an item at a time
    values = listed() if callable(listed) else list(sent)
    for value in dict(zip(map(id, values), values, strict=True)).values():
        distinct[json.dumps(value, sort_keys=True)] = value
    if len(distinct) == 1:
        return describe(next(iter(distinct.values())))
    return "differs between runs: " + "; ".join(sorted(map(describe, distinct.values())))
