"""``loopbench plot``: a PNG of a results folder."""

from __future__ import annotations

from pathlib import Path

import click

from loopbench.harness.cli.errors import Command
from loopbench.harness.cli.output_file import output_file
from loopbench.harness.errors import BadInput
from loopbench.harness.files import output_errors
from loopbench.harness.report.plots import plot_frontier, plot_outcomes, plot_tokens, plot_turns
from loopbench.harness.report.table import summarize
from loopbench.harness.results.columns import UNREAD, read_frames
from loopbench.harness.results.frames import Pricing
from loopbench.harness.results.prices import load_prices

KINDS = ("frontier", "status", "tokens", "turns")


@click.command("plot", cls=Command)
@click.argument("results", type=click.Path(path_type=Path))
@click.option(
    "--kind",
    type=click.Choice(KINDS),
    default="frontier",
    show_default=True,
    help="frontier: accuracy against cost per correct; status: how runs ended; "
    "tokens: tokens per run; turns: calls per run, correct runs and the rest apart.",
)
@click.option(
    "-o", "--output", type=click.Path(path_type=Path), required=True, help="The PNG file to write."
)
@click.option("--price-as", help="Price the recorded tokens as this model (for frontier).")
def plot_command(results: Path, kind: str, output: Path, price_as: str | None) -> None:
    """Plot a results folder to a PNG file."""
    if output.is_dir():
        raise BadInput(f"{output}: is a folder; give -o a file name, e.g. {output / 'plot.png'}")
    output = output if output.suffix else output.with_suffix(".png")
    # Its output and then its inputs checked before matplotlib is imported to draw them.
    # guard: plot-o-checked-before-folder
    with output_file(output):
        _plot(results, kind, output, price_as)
    click.echo(f"wrote {output}")


def _plot(results: Path, kind: str, output: Path, price_as: str | None) -> None:
    """Read RESULTS and draw its plot of ``kind`` to ``output``; ``BadInput`` when it cannot."""
    pricing = Pricing(load_prices(), price_as)
    frame, retried = read_frames(results, pricing, drop=UNREAD)
    if frame.empty:
        raise BadInput(f"{results}: no finished runs yet")
    summary = summarize(frame, retried=retried)
    model = ", ".join(sorted(frame["model"].unique()))
    where = f"{', '.join(sorted(frame['task_set'].unique()))} on {model}"
    with output_errors(output):
        if kind == "frontier":
            plot_frontier(
                summary, output, f"Accuracy against cost per correct: {where}; {pricing.label}"
            )
        elif kind == "status":
            plot_outcomes(summary, output, f"How runs ended: {where}")
        elif kind == "tokens":
            plot_tokens(summary, output, f"Tokens per run: {where}")
        else:
            plot_turns(frame, output, f"Model calls per run: {where}")
