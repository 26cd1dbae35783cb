"""``loopbench table``: the per-arm table of a results folder."""

from __future__ import annotations

from pathlib import Path

import click
import pandas as pd

from harness.report.prices import PriceError, load_prices
from harness.report.table import GROUPINGS, Pricing, records_frame, render, summarize
from harness.store import ResultsError, read_records


@click.command("table")
@click.argument("results", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "csv", "json"]),
    default="md",
    show_default=True,
    help="Output format.",
)
@click.option("--by", type=click.Choice(GROUPINGS), help="Break each arm down by this column.")
@click.option(
    "--prices",
    type=click.Path(path_type=Path),
    help="A price table (TOML) to use instead of the shipped one.",
)
@click.option("--price-as", help="Price the recorded tokens as if served by this model.")
def table_command(
    results: Path, fmt: str, by: str | None, prices: Path | None, price_as: str | None
) -> None:
    """Print accuracy, turns, tool calls, tokens, cost and cost per correct answer per arm."""
    try:
        records = read_records(results)
        pricing = Pricing(load_prices(prices), price_as)
        frame = records_frame(records, pricing)
    except (ResultsError, PriceError) as exc:
        raise click.ClickException(str(exc)) from None
    if frame.empty:
        raise click.ClickException(f"{results}: no finished runs yet")
    click.echo(render(summarize(frame, by), fmt, title=table_title(frame, pricing)))


def table_title(frame: pd.DataFrame, pricing: Pricing) -> str:
    sets = ", ".join(sorted(frame["task_set"].unique()))
    models = ", ".join(sorted(frame["model"].unique()))
    repeats = int(frame["repeat"].max()) + 1
    return f"**{sets}** on {models}, {repeats} repeat(s); {pricing.label}"
