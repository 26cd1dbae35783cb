"""``loopbench compare``: a regression check between two result sets, for people and CI."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from loopbench.harness.cli.bundles import bundled
from loopbench.harness.cli.errors import Command, Finite
from loopbench.harness.cli.step_summary import append_step_summary
from loopbench.harness.report.compare import (
    JudgeChoice,
    Thresholds,
    check_comparable,
    compare_judged,
)
from loopbench.harness.report.compare_text import as_json, as_markdown
from loopbench.harness.report.judge_accuracy import Judging
from loopbench.harness.results.columns import FIELDS
from loopbench.harness.results.frames import Pricing
from loopbench.harness.results.legacy import schema_1_identity
from loopbench.harness.results.prices import load_prices
from loopbench.harness.results.two_folders import read_two
from loopbench.harness.terminal import one_line

if TYPE_CHECKING:
    import pandas as pd

#: The record fields ``loopbench.harness.report.compare`` reads; the others are not read, so that
#: two folders of a million runs each fit in memory.
# guard: compare-reads-prompts-hash
COMPARED = frozenset(
    {"task_set", "model", "arm", "pattern", "options", "sampling", "task_id", "repeat", "status"}
    | {"correct"}
    | {"first_correct", "metrics", "cost_usd", "usage_missing", "turns", "tokens_in"}
    | {"tokens_out", "prompts_hash"}
    | {"grade_status", "judge_cost_usd", "judge_tokens_in"}
)
NOT_COMPARED = tuple(name for name in FIELDS if name not in COMPARED)


@dataclass(frozen=True)
class Costing:
    """How both sides' runs are costed: ``--price-as`` and ``--with-judge-cost``."""

    price_as: str | None
    with_judge_cost: bool


@click.command("compare", cls=Command)
@click.argument("baseline", type=click.Path(path_type=Path))
@click.argument("candidate", type=click.Path(path_type=Path))
@click.option(
    "--arm", "arms", multiple=True, help="Only these arms (canonical or as in the table)."
)
@click.option(
    "--max-drop",
    type=Finite(0, 1),
    default=0.05,
    show_default=True,
    help="Accuracy fall (absolute) beyond which a significant fall regresses.",
)
@click.option(
    "--alpha",
    type=Finite(0, 1, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="Significance level of the paired test (sign flips of per-task differences, "
    "two-sided): a fall is a regression when its p is below this.",
)
@click.option(
    "--max-cost-rise",
    type=Finite(0),
    default=0.10,
    show_default=True,
    help="Relative rise in cost per correct answer that regresses.",
)
@click.option("--price-as", help="Price both sides' tokens as this model.")
@click.option(
    "--with-judge-cost",
    is_flag=True,
    help="Count the judge's cost in cost per correct answer (and its gate); by default it "
    "is the runs' cost only.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "md", "json", "junit"]),
    default="text",
    show_default=True,
    help="md suits a CI job summary; json suits scripts; junit is the test report CI "
    "systems show (a case per arm and criterion). With GITHUB_STEP_SUMMARY set, the md "
    "table is also appended to that file, whatever the format.",
)
@bundled("thresholds", Thresholds)
@bundled("costing", Costing)
def compare_command(
    baseline: Path,
    candidate: Path,
    arms: tuple[str, ...],
    thresholds: Thresholds,
    costing: Costing,
    fmt: str,
) -> None:
    """Compare CANDIDATE against BASELINE; exit 1 if an arm regressed, 2 on bad input."""
    pricing = Pricing(load_prices(), costing.price_as)
    before, after = read_two(baseline, candidate, pricing, drop=NOT_COMPARED)
    for folder, frame in ((baseline, before), (candidate, after)):
        check_comparable(folder, frame)
    wanted = _canonical(list(arms), before, after)
    judging = (Judging.of(baseline), Judging.of(candidate))
    judged = JudgeChoice(costing.with_judge_cost, judging)
    comparison = compare_judged(before, after, wanted, thresholds, judged)
    markdown = as_markdown(comparison)
    if fmt == "json":
        click.echo(json.dumps(as_json(comparison), indent=2))
    elif fmt == "junit":
        from loopbench.harness.report.junit import as_junit

        click.echo(as_junit(comparison), nl=False)
    else:
        click.echo(markdown)
    # guard: ci-job-summary-written-whatever
    append_step_summary(markdown)
    regressed = [r for r in comparison.arms if r.regressed]
    for r in regressed:
        click.echo(one_line(f"REGRESSED: {r.arm}: {r.why}"), err=True)
    raise SystemExit(1 if regressed else 0)


def _canonical(asked: list[str], before: pd.DataFrame, after: pd.DataFrame) -> list[str] | None:
    """Accept an arm as in the table, with its options in any order, or as 0.1.0 wrote it."""
    if not asked:
        return None
    known = set(before["arm"].unique()) | set(after["arm"].unique())
    from loopbench.harness.arms import arm_identity  # the patterns' registry: only for --arm

    return [a if a in known else arm_identity(schema_1_identity(a)) for a in asked]
