"""``loopbench report``: one self-contained HTML file of a results folder, to share."""

from __future__ import annotations

from pathlib import Path

import click

from loopbench.harness.cli.errors import Command
from loopbench.harness.cli.output_file import output_file
from loopbench.harness.errors import BadInput
from loopbench.harness.files import output_errors
from loopbench.harness.redaction import redact
from loopbench.harness.report.html.render import report_html
from loopbench.harness.results.frames import Pricing
from loopbench.harness.results.prices import load_prices


@click.command("report", cls=Command)
@click.argument("results", type=click.Path(path_type=Path))
@click.option("--vs", "reference", help="Add each arm's paired difference against this arm.")
@click.option("--price-as", help="Price the recorded tokens as if served by this model.")
@click.option(
    "--prices",
    type=click.Path(path_type=Path),
    help="A price table (TOML) to use instead of the shipped one.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    required=True,
    help="The HTML file to write (it opens offline: styles, script, plots and traces inside).",
)
def report_command(
    results: Path,
    reference: str | None,
    price_as: str | None,
    prices: Path | None,
    output: Path,
) -> None:
    """Write one HTML page of a results folder: the summary table, plots, why runs failed,
    a task-by-arm matrix and every run with its trace (above a few thousand runs, a fixed
    sample of them; `loopbench export` writes them all)."""
    if output.is_dir():
        raise BadInput(f"{output}: is a folder; give -o a file name, e.g. {output / 'report.html'}")
    output = output if output.suffix else output.with_suffix(".html")
    # guard: report-o-checked-before-page
    with output_file(output):  # before the page is built, and matplotlib imported to draw it
        if reference:
            from loopbench.harness.arms import arm_identity  # the patterns' registry: only for --vs

            reference = arm_identity(reference)
        page = report_html(results, Pricing(load_prices(prices), price_as), reference)
        with output_errors(output):
            # guard: secrets-report-redacted-as-written
            output.write_text(redact(page), encoding="utf-8")
    click.echo(f"wrote {output} ({len(page.encode()) / 1024:,.0f} KB)")
