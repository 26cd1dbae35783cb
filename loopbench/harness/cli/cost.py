"""``loopbench cost``: price a pattern before running it (seed 003's cost arithmetic)."""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import click
import pandas as pd

from loopbench.harness.cli.bundles import bundled
from loopbench.harness.cli.errors import Finite, Group
from loopbench.harness.errors import BadInput
from loopbench.harness.report.cost import (
    PRICE_TIERS,
    Planning,
    Prices,
    Shapes,
    cost_per_correct,
    default_accuracy,
    expected_attempts,
    growth,
    nothing_accepted,
    pattern_costs,
    success_within,
    verifier_precision,
)
from loopbench.harness.report.model_axis import config_labels
from loopbench.harness.report.rendering import usage_warning
from loopbench.harness.report.table import summarize
from loopbench.harness.results.columns import UNREAD, read_frames
from loopbench.harness.results.frames import Pricing
from loopbench.harness.results.prices import load_prices

FORMATS = click.Choice(["md", "json"])
#: Bounds that keep the arithmetic finite and quick (a sum runs over every step).
MAX_COUNT = 10_000
MAX_TOKENS = 10**9
COUNT = click.IntRange(0, MAX_COUNT)
AT_LEAST_ONE = click.IntRange(1, MAX_COUNT)
CHANCE = Finite(0, 1)
PRICE = Finite(0)


def planning_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """One flag per planning number, named after the field, defaulting to the chapter's."""
    for name, spec in reversed(list(Planning.model_fields.items())):
        flag = "--" + name.replace("_", "-")
        command = click.option(
            flag,
            name,
            type=_bounds(name, spec.default),
            default=spec.default,
            show_default=True,
            help=spec.description,
        )(command)
    return command


def _bounds(name: str, default: object) -> click.IntRange | click.FloatRange:
    if isinstance(default, int):
        return click.IntRange(0, MAX_TOKENS)
    return CHANCE if name == "cache_rate" else Finite(0)


def _planning(values: dict[str, Any]) -> Planning:
    return Planning(**{k: values.pop(k) for k in list(values) if k in Planning.model_fields})


def _emit(rows: list[dict[str, Any]], fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2))
    else:
        click.echo(pd.DataFrame(rows).to_markdown(index=False, floatfmt=",g"))


@click.group("cost", cls=Group)
def cost_command() -> None:
    """Token, latency and cost arithmetic for patterns, before running them."""


@cost_command.command("growth")
@click.option(
    "--steps", default="2,5,10,20", show_default=True, help="Tool steps, comma-separated."
)
@click.option("--format", "fmt", type=FORMATS, default="md", show_default=True)
@planning_options
def growth_command(steps: str, fmt: str, **numbers: Any) -> None:
    """Input tokens per task as tool steps grow: full replay, caching, compaction, plan."""
    try:
        counts = [int(s) for s in steps.split(",") if s.strip()]
    except ValueError:
        counts = [-1]
    if not counts or not all(0 <= n <= MAX_COUNT for n in counts):
        raise BadInput(
            f"--steps {steps!r}: write whole numbers from 0 to {MAX_COUNT} separated by "
            "commas, e.g. 2,5,10"
        )
    _emit(growth(counts, _planning(numbers)), fmt)


@cost_command.command("patterns")
@click.option(
    "--price",
    type=click.Choice(sorted(PRICE_TIERS)),
    default="frontier",
    show_default=True,
    help="small: $0.25/$2; frontier: $3/$15 per million in/out.",
)
@click.option("--price-in", type=PRICE, help="USD per million input tokens (overrides --price).")
@click.option("--price-out", type=PRICE, help="USD per million output tokens (overrides --price).")
@click.option("--steps", type=COUNT, default=5, show_default=True, help="Tool steps (ReAct, plan).")
@click.option("--breadth", type=AT_LEAST_ONE, default=3, show_default=True, help="Tree breadth b.")
@click.option("--depth", type=AT_LEAST_ONE, default=3, show_default=True, help="Tree depth d.")
@click.option(
    "--beam",
    type=AT_LEAST_ONE,
    default=2,
    show_default=True,
    help="Nodes kept per level k (the tot arm's row).",
)
@click.option("--candidates", type=AT_LEAST_ONE, default=5, show_default=True, help="Best-of m.")
@click.option("--format", "fmt", type=FORMATS, default="md", show_default=True)
@planning_options
@bundled("shapes", Shapes)
def patterns_command(
    price: str,
    price_in: float | None,
    price_out: float | None,
    shapes: Shapes,
    fmt: str,
    **numbers: Any,
) -> None:
    """The chapter's cost table (seven patterns: calls, tokens, latency, cost per task and
    per correct), then loopbench's tot arm, whose calls differ, in a row of its own."""
    tier = PRICE_TIERS[price]
    prices = Prices(
        price_in if price_in is not None else tier.input,
        price_out if price_out is not None else tier.output,
    )
    rows = [c.row() for c in pattern_costs(_planning(numbers), prices, shapes)]
    if fmt == "md":
        for row in rows:
            accuracy, source = default_accuracy(str(row["pattern"]), shapes.candidates)
            per_correct = cost_per_correct(float(row["cost_usd"]), accuracy)
            row["cost_usd"] = dollars(float(row["cost_usd"]))
            row["accuracy"] = f"{accuracy:.0%} ({source})"
            row["cost_per_correct_usd"] = dollars(per_correct) if per_correct is not None else "—"
    _emit(rows, fmt)


def dollars(value: float) -> float:
    """Four significant digits, as the chapter prints a cost ($0.2552), rounded half up
    from the value's decimal figures (0.25515, not the binary fraction just below it)."""
    exact = Decimal(repr(round(value, 12)))
    if not exact:
        return 0.0
    return float(exact.quantize(Decimal(1).scaleb(exact.adjusted() - 3), ROUND_HALF_UP))


@cost_command.command("retry")
@click.option("--p", "p", type=CHANCE, required=True, help="Chance one attempt passes.")
@click.option("--k", "k", type=AT_LEAST_ONE, required=True, help="Attempts allowed.")
def retry_command(p: float, k: int) -> None:
    """Up to k independent attempts with a perfect verifier."""
    click.echo(
        f"P(success within {k}) = {success_within(p, k):.4f}; "
        f"expected attempts = {expected_attempts(p, k):.4f}"
    )


@cost_command.command("verifier")
@click.option("--p", "p", type=CHANCE, required=True, help="Chance a candidate is correct.")
@click.option(
    "--r", "r", type=CHANCE, default=1.0, show_default=True, help="Accepts a correct one."
)
@click.option("--f", "f", type=CHANCE, required=True, help="Accepts a wrong one (false accept).")
@click.option(
    "--m", "m", type=AT_LEAST_ONE, default=5, show_default=True, help="Best-of-m candidates."
)
def verifier_command(p: float, r: float, f: float, m: int) -> None:
    """What an acceptance is worth: precision, and best-of-m returning nothing."""
    click.echo(
        f"P(correct | accepted) = {verifier_precision(p, r, f):.4f}; "
        f"best-of-{m} accepts nothing with P = {nothing_accepted(p, r, f, m):.4f}"
    )


@cost_command.command("measured")
@click.argument("results", type=click.Path(path_type=Path))
@click.option("--price-as", help="Price the recorded tokens as this model.")
@click.option("--format", "fmt", type=FORMATS, default="md", show_default=True)
def measured_command(results: Path, price_as: str | None, fmt: str) -> None:
    """Measured accuracy, tokens and cost per correct of a run, beside the planning figures."""
    pricing = Pricing(load_prices(), price_as)
    frame, retried = read_frames(results, pricing, drop=UNREAD)
    if frame.empty:
        raise BadInput(f"{results}: no finished runs yet; run `loopbench run --out` into it first")
    summary = summarize(frame, retried=retried)
    rows = []
    for name, row in zip(config_labels(summary), summary.to_dict("records"), strict=True):
        runs = max(int(row["n"]), 1)
        rows.append(
            {
                "arm": name,
                "accuracy": row["accuracy"],
                "turns": row["turns"],
                "tokens_in": row["tokens_in"],
                "tokens_out": row["tokens_out"],
                "cost_per_run_usd": row["cost_usd"] / runs,
                "cost_per_correct_usd": row["cost_per_correct"],
            }
        )
    _emit(rows, fmt)
    if warning := usage_warning(summary):
        click.echo(warning.strip(), err=fmt == "json")
    if fmt == "md":
        click.echo("\nPlanning figures (chapter defaults, frontier prices):")
        _emit([c.row() for c in pattern_costs(Planning(), PRICE_TIERS["frontier"])], fmt)
