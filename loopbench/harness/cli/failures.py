"""``loopbench failures``: why runs failed, per arm, by rules over records and traces."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import click

from loopbench.harness.cli.errors import Command
from loopbench.harness.errors import BadInput
from loopbench.harness.report.failures import (
    LABELS,
    ArmFailures,
    FailedRun,
    labelled_frame,
    summarize_failures,
)
from loopbench.harness.spreadsheet import csv_row
from loopbench.harness.terminal import one_line, printable

FORMATS = ("md", "json", "csv")
NOTE = (
    "Share: of the arm's failed runs (not correct: a wrong answer, or no graded answer); a "
    "run may carry several labels. The rules are in docs/failures.md."
)


@click.command("failures", cls=Command)
@click.argument("results", type=click.Path(path_type=Path))
@click.option(
    "--arm", "arms", multiple=True, help="Only this arm (canonical or as in the table); repeatable."
)
@click.option(
    "--examples",
    type=click.IntRange(min=0),
    default=3,
    show_default=True,
    help="Example runs shown per label.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="md",
    show_default=True,
    help="md for people; json and csv for scripts.",
)
def failures_command(results: Path, arms: tuple[str, ...], examples: int, fmt: str) -> None:
    """Label every run that did not end correct (repetition, tool miss, unsupported number,
    ...) and print, per arm, the share of failed runs carrying each label."""
    runs = labelled_frame(results)
    if runs.empty:
        raise BadInput(f"{results}: no finished runs yet")
    summaries = summarize_failures(runs, examples)
    if arms:
        summaries = _chosen(summaries, arms, results)
    said = {"md": as_markdown, "json": as_json, "csv": as_csv}[fmt](summaries)
    click.echo(printable(said))  # a CSV's control characters shown, not acted on


def _chosen(
    summaries: list[ArmFailures], arms: tuple[str, ...], results: Path
) -> list[ArmFailures]:
    from loopbench.harness.arms import arm_identity  # the patterns' registry: only for --arm

    known = {s.arm: s for s in summaries}
    chosen = []
    for arm in dict.fromkeys(arms):
        found = known.get(arm) or known.get(arm_identity(arm))
        if found is None:
            raise BadInput(f"no arm {arm!r} in {results}; arms: {', '.join(known)}")
        chosen.append(found)
    return chosen


def _example(record: FailedRun) -> str:
    return one_line(f"{record.task_id} (repeat {record.repeat}, run {record.run_id or '?'})")


def as_markdown(summaries: list[ArmFailures]) -> str:
    """Per arm, a table of its labels and example runs; ids and names one line each, their
    control characters shown (``loopbench.harness.terminal``)."""
    parts = []
    for arm in summaries:
        head = f"**{one_line(arm.arm)}**: {arm.failed} of {arm.runs} runs failed"
        if arm.untraced:
            head += f" ({arm.untraced} without a trace: labelled from the record alone)"
        shown = [label for label in LABELS if arm.counts[label]]
        if not shown:
            parts.append(head)
            continue
        rows = [f"| {label} | {arm.counts[label]} | {arm.share(label):.0%} |" for label in shown]
        table = "\n".join(["| label | failed runs | share |", "|---|---:|---:|", *rows])
        listed = [
            f"- {label}: {'; '.join(_example(r) for r in arm.examples[label])}"
            for label in shown
            if arm.examples[label]
        ]
        parts.append("\n\n".join([head, table, *(["\n".join(listed)] if listed else [])]))
    return "\n\n".join([*parts, NOTE])


def _rows(summaries: list[ArmFailures]) -> list[dict[str, Any]]:
    return [
        {
            "arm": arm.arm,
            "label": label,
            "runs": arm.counts[label],
            "failed": arm.failed,
            "share": arm.share(label),
            "examples": [
                {"run_id": r.run_id, "task_id": r.task_id, "repeat": r.repeat}
                for r in arm.examples[label]
            ],
        }
        for arm in summaries
        for label in LABELS
    ]


def as_json(summaries: list[ArmFailures]) -> str:
    """Per arm: its runs, failed runs, runs without a trace, and every label's count,
    share and examples."""
    rows = _rows(summaries)
    return json.dumps(
        [
            {
                "arm": arm.arm,
                "runs": arm.runs,
                "failed": arm.failed,
                "untraced": arm.untraced,
                "labels": {
                    row["label"]: {k: row[k] for k in ("runs", "share", "examples")}
                    for row in rows
                    if row["arm"] == arm.arm
                },
            }
            for arm in summaries
        ],
        indent=2,
    )


def as_csv(summaries: list[ArmFailures]) -> str:
    """One row per (arm, label); examples as ``task_id:run_id`` separated by spaces. A text
    cell a spreadsheet would read as a formula starts with ``'``
    (``loopbench.harness.spreadsheet``)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["arm", "label", "runs", "failed", "share", "examples"])
    for row in _rows(summaries):
        shown = " ".join(f"{e['task_id']}:{e['run_id']}" for e in row["examples"])
        cells = [row["arm"], row["label"], row["runs"], row["failed"], row["share"], shown]
        # guard: csv-failures-writes-formula-cells
        writer.writerow(csv_row(cells))
    return out.getvalue().rstrip("\n")
