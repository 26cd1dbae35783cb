"""Reasoning settings: an effort level (``reasoning_effort``) and a thinking budget in tokens
(``thinking_budget``), set on an arm or for the run, sent only when set.

An arm's setting goes on every request of the arm that does not set its own (the limits
wrapper applies it); the run's on every request that still has none (the counting client,
with the sampling settings). An OpenAI-style endpoint is sent ``reasoning_effort``, not the
budget, which its API has no field for; Anthropic's is sent ``thinking`` with the budget
given, else the budget its client maps the effort level to (docs/reasoning.md).

An endpoint that refuses a setting it was sent (a model that does not reason) would fail
every request of the grid alike, so it stops the grid in one line (``ReasoningRefused``)
rather than recording a run of api_errors.
"""

from __future__ import annotations

import re
from typing import Annotated, get_args

from pydantic import BaseModel, BeforeValidator

from loopbench.harness.errors import BadInput
from loopbench.harness.models.types import ModelAPIError, ModelRequest, ReasoningEffort

#: The effort levels, least first.
EFFORT_LEVELS: tuple[str, ...] = get_args(ReasoningEffort)
#: The smallest thinking budget Anthropic's API takes, in tokens.
MIN_THINKING_BUDGET = 1024
#: Statuses an endpoint refuses a request's content with.
REFUSING_STATUSES = (400, 422)
#: What a refusal of a reasoning setting names.
_NAMES_SETTING = re.compile(r"reasoning|thinking", re.IGNORECASE)


class ReasoningError(BadInput):
    """A reasoning setting no endpoint takes (exit code 2)."""


class ReasoningRefused(BadInput):
    """The endpoint refused a reasoning setting it was sent: the grid stops, in one line
    (exit code 2); the records already written stay."""


def check_effort(value: object) -> ReasoningEffort:
    """``value`` as an effort level; ``ReasoningError`` naming the levels otherwise."""
    # guard: reasoning-effort-level-checked
    if value not in EFFORT_LEVELS:
        raise ReasoningError(f"reasoning_effort {value!r}: give one of {', '.join(EFFORT_LEVELS)}")
    return value  # type: ignore[return-value]  # one of the literal's values, checked


def check_budget(value: object) -> int:
    """``value`` as a thinking budget; ``ReasoningError`` saying the minimum otherwise."""
    number = value
    if isinstance(value, str) and value.strip().isdigit():  # as an arm writes it
        number = int(value)
    # guard: thinking-budget-at-least-minimum
    if isinstance(number, bool) or not isinstance(number, int) or number < MIN_THINKING_BUDGET:
        raise ReasoningError(
            f"thinking_budget {value!r}: give a whole number of tokens, at least "
            f"{MIN_THINKING_BUDGET} (Anthropic's minimum)"
        )
    return number


def _effort_option(value: object) -> object:
    return None if value is None else check_effort(value)


def _budget_option(value: object) -> object:
    return None if value is None else check_budget(value)


#: The options' types: unset, or checked as the run's settings are (one line saying why).
EffortOption = Annotated[ReasoningEffort | None, BeforeValidator(_effort_option)]
BudgetOption = Annotated[int | None, BeforeValidator(_budget_option)]
#: The options sent as reasoning settings.
REASONING_OPTIONS = ("reasoning_effort", "thinking_budget")


def unset_reasoning(options: BaseModel) -> set[str]:
    """The reasoning options ``options`` leave unset: left out of an arm's resolved
    options, so an arm without them resolves as its records did before they existed."""
    return {name for name in REASONING_OPTIONS if getattr(options, name, None) is None}


def refusal(request: ModelRequest, error: ModelAPIError) -> ReasoningRefused | None:
    """The grid-stopping error for ``request`` failing with ``error``, when the endpoint
    refused the reasoning settings it carried (an HTTP 400 or 422 whose body names reasoning
    or thinking); None for any other failure, and for a request that carried none."""
    settings = [
        f"{name} {value}"
        for name, value in (
            ("reasoning_effort", request.reasoning_effort),
            ("thinking_budget", request.thinking_budget),
        )
        if value is not None
    ]
    # guard: reasoning-refusal-stops-grid
    if (
        not settings
        or error.status not in REFUSING_STATUSES
        or not _NAMES_SETTING.search(str(error))
    ):
        return None
    return ReasoningRefused(
        f"the endpoint refused {' and '.join(settings)} for model {request.model} "
        f"({str(error)[:300]}): it may not be a reasoning model; leave the setting out"
    )
