"""``loopbench judge``: measure how often a results folder's judge is wrong.

    loopbench judge sample results/run --per-arm 50
    (fill in the label column of results/run/judge_sample.csv: pass or fail)
    loopbench judge calibrate results/run --labels results/run/judge_sample.csv

``sample`` writes answers for a person to label, stratified by arm, the judge's verdict
left out; ``calibrate`` counts the labels against the verdicts, prints how well the judge
agrees (per arm where the labels cover several, and whether it treats arms differently)
and saves the counts as judge_calibration.json, from which ``table`` and ``compare``
correct the judge's accuracy.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import click

from loopbench.harness.cli.errors import Group, Refusal
from loopbench.harness.errors import BadInput
from loopbench.harness.results.judge_labels import (
    SampleRow,
    count_labels,
    labels_filled,
    read_labels,
    sample_runs,
    write_sample,
)
from loopbench.harness.results.records import RunRecord

SAMPLE_FILE = "judge_sample.csv"


@click.group("judge", cls=Group)
def judge_group() -> None:
    """Measure a judge's error: sample answers for a person to label, then count the labels
    against the judge's verdicts."""


@judge_group.command("sample")
@click.argument("results", type=click.Path(path_type=Path))
@click.option(
    "--per-arm",
    type=click.IntRange(min=1),
    required=True,
    help="Answers to label per arm (every graded answer of an arm with fewer).",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(path_type=Path, dir_okay=False),
    help="The CSV to write [RESULTS/judge_sample.csv]; one with labels filled in is never "
    "replaced.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Which answers are drawn.")
@click.option(
    "--tasks",
    "tasks_spec",
    help="The task set the folder ran (a name, folder or data file): adds each answer's "
    "question, reference answer and rubric from it.",
)
def sample_command(
    results: Path, per_arm: int, output: Path | None, seed: int, tasks_spec: str | None
) -> None:
    """Write a CSV of answers for a person to label: PER_ARM graded answers of each arm,
    drawn at random, with the question when the folder's traces hold it (with ``--tasks``,
    the question, reference answer and rubric from the task set), the grader's rubric when
    the folder records one, and an empty ``label`` column. The judge's verdict is not in
    it: label blind."""
    from loopbench.harness.cli.output_file import output_file

    output = output or results / SAMPLE_FILE
    # guard: judge-sample-keeps-labels
    if labels_filled(output):
        raise Refusal(
            f"{output}: holds labels already; give another --output, or move it aside to "
            "sample again"
        )
    chosen = sample_runs(results, per_arm, seed)
    # guard: judge-sample-needs-graded-runs
    if not chosen:
        raise BadInput(f"{results}: no answer graded by its grader yet; nothing to label")
    questions = _questions(results, {record.run_id for record in chosen})
    tasks = _task_texts(tasks_spec, chosen) if tasks_spec is not None else {}
    rubric = _set_rubric(results)
    rows = []
    for r in chosen:
        texts = {"rubric": rubric} if rubric else {}
        texts |= {"question": questions[r.run_id]} if questions.get(r.run_id) else {}
        texts |= tasks.get(r.task_id, {})
        rows.append(SampleRow(r.run_id, r.arm, r.task_id, r.repeat, r.answer or "", texts))
    with output_file(output):
        write_sample(output, rows)
    arms: dict[str, int] = {}
    for row in rows:
        arms[row.arm] = arms.get(row.arm, 0) + 1
    shown = ", ".join(f"{arm} {count}" for arm, count in sorted(arms.items()))
    click.echo(
        f"Wrote {len(rows)} answers to label ({shown}) to {output}. Fill in its label "
        f"column (pass or fail), then: loopbench judge calibrate {results} --labels {output}"
    )


def _questions(results: Path, wanted: set[str]) -> dict[str, str]:
    """Each wanted run's question from the folder's traces; none without traces."""
    from loopbench.harness.report.failure_traces import read_traces
    from loopbench.harness.results.reading import has_traces

    if not has_traces(results):
        return {}
    return {run_id: trace.question for run_id, trace in read_traces(results, wanted).items()}


def _set_rubric(results: Path) -> str:
    """The set's rubric, as the folder's grader options record it ("" without one)."""
    from loopbench.harness.results.reading import read_experiment

    grader = (read_experiment(results) or {}).get("grader")
    options = grader.get("options") if isinstance(grader, dict) else None
    rubric = options.get("rubric") if isinstance(options, dict) else None
    return rubric if isinstance(rubric, str) else ""


def _task_texts(spec: str, chosen: list[RunRecord]) -> dict[str, dict[str, str]]:
    """By task id, the question, reference answer and rubric the task set gives; refused
    when a sampled run's task has changed since it ran (its labels would be about another
    task)."""
    from loopbench.tasks.loading import load_taskset

    by_id = {task.id: task for task in load_taskset(spec).tasks}
    texts: dict[str, dict[str, str]] = {}
    for record in chosen:
        task = by_id.get(record.task_id)
        # guard: judge-sample-tasks-as-they-ran
        if task is None or (
            record.task_fingerprint and record.task_fingerprint != task.fingerprint
        ):
            what = "has no task" if task is None else "has changed task"
            raise BadInput(
                f"--tasks {spec}: {what} {record.task_id!r} since run {record.run_id} ran; "
                "give the task set the folder ran"
            )
        data = task.model_dump(mode="json")
        expected, rubric = data.get("expected"), data.get("rubric")
        found = {"question": task.question}
        if expected not in (None, ""):
            found["reference"] = expected if isinstance(expected, str) else json.dumps(expected)
        if isinstance(rubric, str) and rubric:
            found["rubric"] = rubric
        texts[record.task_id] = found
    return texts


@judge_group.command("calibrate")
@click.argument("results", type=click.Path(path_type=Path))
@click.option(
    "--labels",
    "labels_path",
    type=click.Path(path_type=Path, dir_okay=False),
    required=True,
    help="The labelled CSV (`judge sample`'s, its label column filled in).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text for people; json for scripts.",
)
def calibrate_command(results: Path, labels_path: Path, fmt: str) -> None:
    """Count the labels against the judge's verdicts and save them in RESULTS as
    judge_calibration.json; print the agreement, sensitivity, specificity and Cohen's kappa
    with 95% intervals, per arm where the labels cover several, and whether the judge
    treats arms differently. Labels: pass/fail, yes/no, 1/0, true/false, correct/incorrect,
    right/wrong; blank ones are skipped, and so are runs the judge gave no verdict."""
    from loopbench.harness.results.judge_calibration import save_calibration
    from loopbench.harness.stats.judge_agreement import Agreement, arms_tests
    from loopbench.harness.stats.judge_correction import rates_of

    labels = read_labels(labels_path)
    # guard: judge-calibrate-needs-a-label
    if not labels.right:
        raise BadInput(f"{labels_path}: no label filled in; label some answers pass or fail")
    counted = count_labels(results, labels)
    calibration = counted.calibration
    saved = save_calibration(results, calibration)
    pooled = Agreement.of(rates_of(calibration.pooled))
    arms = {arm: Agreement.of(rates_of(counts)) for arm, counts in calibration.arms.items()}
    tests = arms_tests({arm: rates_of(c) for arm, c in calibration.arms.items()})
    report = {
        "results": str(results),
        "labels_file": str(labels_path),
        "labelled": pooled.labelled,
        "skipped_no_verdict": counted.ungraded,
        "pooled": _agreement_json(pooled),
        "arms": {arm: _agreement_json(a) for arm, a in arms.items()},
        "arms_tests": [
            {
                "rate": t.rate,
                "p_value": t.p_value,
                "lowest": {"arm": t.lowest[0], "rate": t.lowest[1]},
                "highest": {"arm": t.highest[0], "rate": t.highest[1]},
                "differs": t.differs,
            }
            for t in tests
        ],
        "bias": bias_line(tests),
        "saved": str(saved),
    }
    if fmt == "json":
        click.echo(json.dumps(report, indent=2, allow_nan=False, default=str))
        return
    _print_text(report, pooled, arms)


def bias_line(tests: list[Any]) -> str | None:
    """Whether the judge treats arms differently, in a sentence; None with one arm."""
    if not tests:
        return None
    differing = [t.describe() for t in tests if t.differs]
    if differing:
        return "; ".join(differing) + ": each arm is corrected with its own rates"
    ps = ", ".join(f"{t.rate} p = {t.p_value:.2f}" for t in tests)
    return f"the judge treats the arms alike as far as the labels tell ({ps})"


def _number(value: float) -> float | None:
    return None if math.isnan(value) else value


def _agreement_json(agreement: Any) -> dict[str, Any]:
    shares = {
        name: {
            "value": _number(rate.value),
            "low": _number(rate.low),
            "high": _number(rate.high),
            "n": rate.n,
        }
        for name in ("agreement", "sensitivity", "specificity")
        for rate in [getattr(agreement, name)]
    }
    kappa = agreement.kappa
    shares["kappa"] = {k: _number(getattr(kappa, k)) for k in ("value", "low", "high")}
    return {"labelled": agreement.labelled, **shares}


def _shown(value: float, low: float, high: float) -> str:
    if math.isnan(value):
        return "-"
    return f"{value:.2f} [{low:.2f}, {high:.2f}]"


def _print_text(report: dict[str, Any], pooled: Any, arms: dict[str, Any]) -> None:
    from tabulate import tabulate

    skipped = report["skipped_no_verdict"]
    click.echo(
        f"Judge calibration of {report['results']}: {report['labelled']} labelled answers"
        + (f" ({skipped} more skipped: the judge gave no verdict)" if skipped else "")
    )
    rows = []
    for name, agreement in [("all", pooled), *(arms.items() if len(arms) > 1 else [])]:
        rates = [agreement.agreement, agreement.sensitivity, agreement.specificity]
        shown = [_shown(r.value, r.low, r.high) for r in rates]
        for at in (1, 2):  # sensitivity and specificity: over how many answers
            shown[at] += f" n={rates[at].n}" if rates[at].n else ""
        kappa = agreement.kappa
        rows.append([name, agreement.labelled, *shown, _shown(kappa.value, kappa.low, kappa.high)])
    headers = ["arm", "labelled", "agreement", "sensitivity", "specificity", "kappa"]
    click.echo(tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True))
    click.echo("95% intervals: Wilson's for the rates, Fleiss' asymptotic one for kappa.")
    if report["bias"]:
        click.echo(f"Arms: {report['bias']}.")
    click.echo(f"Saved {report['saved']}: table and compare correct the judge's accuracy with it.")
