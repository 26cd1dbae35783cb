"""``loopbench table``: the per-arm table of a results folder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click
import pandas as pd

from loopbench.harness.cli.bundles import bundled
from loopbench.harness.cli.errors import Command
from loopbench.harness.cli.output_file import output_file
from loopbench.harness.errors import BadInput
from loopbench.harness.files import output_errors
from loopbench.harness.redaction import redact
from loopbench.harness.report.judge_accuracy import (
    Judging,
    with_corrected,
    with_corrected_reference,
)
from loopbench.harness.report.model_axis import config_labels
from loopbench.harness.report.pass_k import parse_all
from loopbench.harness.report.printed import stopping_note, table_title
from loopbench.harness.report.published import with_published
from loopbench.harness.report.rendering import FORMATS, render
from loopbench.harness.report.step_budget import KEEP_SHARE, with_step_budget
from loopbench.harness.report.step_budget_text import has_step_budget, render_budgets
from loopbench.harness.report.table import GROUPINGS, INTERVALS, Measures, summarize, with_reference
from loopbench.harness.results.columns import UNREAD, read_frames
from loopbench.harness.results.frames import Pricing
from loopbench.harness.results.prices import load_prices
from loopbench.harness.results.published import read_published
from loopbench.harness.terminal import printable

#: Columns a table reads only for its failure labels (``--failures``): not read without.
#: (``options`` is read all the same: it names the prompt files, each checked as it is read.)
UNTABLED = (
    "retries",
    "repeated_actions",
    "tools_offered",
    "batched_calls",
    "replaced_characters",
)


@dataclass(frozen=True)
class Contents:
    """What the table holds besides each arm's summary: ``--by``, ``--columns``, ``--vs``,
    ``--interval`` and ``--failures``."""

    by: str | None
    columns: str | None
    reference: str | None
    interval: str
    with_failures: bool
    with_judge_cost: bool
    step_budget: float | None = None
    """``--step-budget``: the share of correct runs a step budget keeps, or None."""


@click.command("table", cls=Command)
@click.argument("results", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="md",
    show_default=True,
    help="Output format.",
)
@click.option("--by", type=click.Choice(GROUPINGS), help="Break each arm down by this column.")
@click.option(
    "--columns",
    help="Comma-separated summary columns to keep (see --format csv); pass@k and pass^k "
    "(e.g. pass@1,pass@5,pass^3) are computed from the repeats when named.",
)
@click.option(
    "--vs",
    "reference",
    help="Add each arm's paired difference against this arm (interval and p clustered by "
    "task, as compare's).",
)
@click.option(
    "--interval",
    type=click.Choice(INTERVALS),
    default="tasks",
    show_default=True,
    help="The accuracy interval: about tasks like these (repeats of a task clustered), or "
    "on the runs made (about these tasks only).",
)
@click.option(
    "--prices",
    type=click.Path(path_type=Path),
    help="A price table (TOML) to use instead of the shipped one.",
)
@click.option("--price-as", help="Price the recorded tokens as if served by this model.")
@click.option(
    "--failures",
    "with_failures",
    is_flag=True,
    help="Add each arm's commonest failure labels (`loopbench failures`; reads the traces).",
)
@click.option(
    "--with-judge-cost",
    is_flag=True,
    help="Count the judge's cost (its own column) in cost per correct answer; by default "
    "cost per correct is the runs' cost only.",
)
@click.option(
    "--step-budget",
    type=float,
    is_flag=False,
    flag_value=KEEP_SHARE,
    default=None,
    metavar="[SHARE]",
    help="Add each arm's turns of correct and failed runs, the step budget that keeps "
    f"SHARE of its correct runs (default {KEEP_SHARE}), and what it would have saved on "
    "the failed runs.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    help="Write the table to this file (as it would be printed) instead of printing it.",
)
@bundled("contents", Contents)
def table_command(
    results: Path,
    fmt: str,
    contents: Contents,
    prices: Path | None,
    price_as: str | None,
    output: Path | None,
) -> None:
    """Print accuracy, turns, tool calls, tokens, cost and cost per correct answer per arm."""
    if output is None:
        click.echo(_table(results, fmt, contents, Pricing(load_prices(prices), price_as)), nl=False)
        return
    # guard: table-o-folder-refused
    if output.is_dir():
        raise BadInput(f"{output}: is a folder; give -o a file name, e.g. {output / 'table.md'}")
    # guard: table-o-checked-before-reading
    with output_file(output):  # before the folder is read
        text = _table(results, fmt, contents, Pricing(load_prices(prices), price_as))
        with output_errors(output):
            # guard: secrets-table-o-redacted
            output.write_text(redact(text), encoding="utf-8")
    click.echo(f"wrote {output}")


def _table(results: Path, fmt: str, contents: Contents, pricing: Pricing) -> str:
    """The table of RESULTS as ``table`` prints it (its notes after it), control characters
    shown as escapes."""
    # Without --failures, neither are the columns only the failure labels read.
    drop: list[str] = [*UNREAD, *UNTABLED]
    if contents.with_failures:  # the failure labels (imported only here) read run ids and
        from loopbench.harness.report.failures import columns_labelled  # answers beside traces:

        kept = columns_labelled(results)  # kept, not read twice
        drop = [name for name in UNREAD if name not in kept]
    frame, retried = read_frames(results, pricing, drop=drop)
    if frame.empty:
        raise BadInput(f"{results}: no finished runs yet")
    chosen = [c.strip() for c in contents.columns.split(",")] if contents.columns else None
    pass_k, _ = parse_all(chosen or [])
    measures = Measures(contents.interval, tuple(pass_k), contents.with_judge_cost)
    summary = summarize(frame, contents.by, retried, measures)
    summary = with_published(summary, read_published(results))
    judging = Judging.of(results)
    summary = with_corrected(frame, summary, judging)
    if contents.step_budget is not None:
        summary = with_step_budget(summary, frame, contents.step_budget, contents.by)
    if contents.reference:
        from loopbench.harness.arms import arm_identity  # the arms' registry: only for --vs

        reference = arm_identity(contents.reference)
        summary = with_reference(frame, summary, reference)
        summary = with_corrected_reference(frame, summary, reference, judging)
    if contents.with_failures:
        described = pd.Series(config_labels(summary), index=summary.index)
        summary = summary.assign(failures=described.map(commonest_failures(results, frame)))
    table = render(summary, fmt, table_title(frame, pricing, results), chosen)
    parts = [printable(table)]  # a CSV's control characters shown, not acted on
    if fmt == "md" and (said := judging.note()):
        parts.append(f"\n{said}")
    if fmt == "md" and (note := stopping_note(results, frame)):
        parts.append(f"\n{note}")
    if fmt not in ("csv", "json") and has_step_budget(summary):  # csv and json: its columns
        parts.append(f"\n{printable(render_budgets(summary, fmt))}")
    return "".join(f"{part}\n" for part in parts)


def commonest_failures(
    results: Path, runs: pd.DataFrame | None = None, shown: int = 3
) -> dict[str, str]:
    """Per arm (named after its model on several models), its commonest failure labels with
    the share of failed runs carrying each. ``runs``: the folder's runs, if already read."""
    from loopbench.harness.report.failures import labelled_frame, summarize_failures

    labelled = labelled_frame(results, runs)
    described = {}
    for arm in summarize_failures(labelled, examples=0):
        top = sorted((c, label) for label, c in arm.counts.items() if c)[::-1][:shown]
        described[arm.arm] = ", ".join(f"{label} {arm.share(label):.0%}" for _, label in top)
    return described
