"""How often the judge-corrected intervals hold the truth, and how often the regression gate
cries wolf when a judge favours one arm, beside the same figures uncorrected.

Each simulated folder runs two arms, a and b, on T tasks R times (pairs by task and
repeat; each task's chance of a right answer drawn per arm from a Beta of the arm's
accuracy and ICC 0.3, the arms' chances correlated 0.8: ``bench/simulated.py``). A scripted
judge passes a right answer with the arm's sensitivity and a wrong one with one minus its
specificity; a person labels L answers an arm, drawn at random, without error. Then, per
folder:

- accuracy: arm a's corrected accuracy and its 95% interval
  (``loopbench.harness.stats.judge_correction.corrected_accuracy``, each arm's own rates when its
  labels hold right and wrong answers: ``arm_rates``), against the table's uncorrected one
  (``accuracy_interval`` on the judge's verdicts); the truth is the arm's accuracy on tasks
  like these (the Beta's mean);
- difference: a - b corrected (``corrected_difference``) against compare's uncorrected
  paired interval (``PairedTasks.interval`` on the verdicts);
- gate: b compared against a as compare does (b regresses when it falls by more than 0.05
  at p < 0.05; corrected: when the corrected fall is over 0.05 and its interval excludes
  0), counted as a false alarm when the arms are truly equal.

With ``--folders K``, K more folders go the whole way: records written to a results folder,
``loopbench judge sample`` and ``calibrate`` on it (labels from the truth), and arm a's
accuracy corrected from the judge_calibration.json it saved.

    .venv/bin/python -m bench.judge_correction --sims 1000       # ~4 minutes on 2 busy cores
    .venv/bin/python -m bench.judge_correction --sims 200 --folders 20 --labels 50
    .venv/bin/python -m bench.judge_correction --sims 1000 --folders 0 --labels-elsewhere
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tabulate import tabulate

from bench.simulated import paired_chances
from loopbench.harness.results.judge_calibration import Calibration, LabelCounts
from loopbench.harness.stats.intervals import PairedTasks, accuracy_interval
from loopbench.harness.stats.judge_correction import (
    JudgeRates,
    arm_rates,
    corrected_accuracy,
    corrected_difference,
)

ICC, ARM_CORRELATION = 0.3, 0.8
MAX_DROP, ALPHA = 0.05, 0.05


@dataclass(frozen=True)
class Judge:
    sensitivity: float
    specificity: float


@dataclass(frozen=True)
class Scenario:
    name: str
    accuracy: tuple[float, float]
    judges: tuple[Judge, Judge]


SCENARIOS = (
    Scenario("fair judge, equal arms", (0.6, 0.6), (Judge(0.9, 0.8), Judge(0.9, 0.8))),
    Scenario("judge favours a, equal arms", (0.6, 0.6), (Judge(0.9, 0.55), Judge(0.9, 0.9))),
    Scenario(
        "judge favours a's style, equal arms",
        (0.5, 0.5),
        (Judge(0.95, 0.6), Judge(0.75, 0.9)),
    ),
    Scenario("judge favours a, a worse", (0.5, 0.6), (Judge(0.9, 0.55), Judge(0.9, 0.9))),
)


@dataclass(frozen=True)
class Folder:
    """One simulated folder: task of each pair, truth and the judge's verdicts per arm."""

    tasks: np.ndarray
    truth: tuple[np.ndarray, np.ndarray]
    judged: tuple[np.ndarray, np.ndarray]


def folders(
    scenario: Scenario, tasks: int, repeats: int, sims: int, rng: np.random.Generator
) -> list[Folder]:
    a, b = paired_chances(
        "comonotone", *scenario.accuracy, ICC, ARM_CORRELATION, (sims, tasks), rng
    )
    labels = np.repeat(np.arange(tasks), repeats)
    made = []
    for chances in zip(a, b, strict=True):
        truth, judged = [], []
        for chance, judge in zip(chances, scenario.judges, strict=True):
            right = rng.random(tasks * repeats) < np.repeat(chance, repeats)
            passed = np.where(
                right,
                rng.random(right.size) < judge.sensitivity,
                rng.random(right.size) < 1 - judge.specificity,
            )
            truth.append(right)
            judged.append(passed.astype(float))
        made.append(Folder(labels, (truth[0], truth[1]), (judged[0], judged[1])))
    return made


def label_counts(
    right: np.ndarray, passed: np.ndarray, count: int, rng: np.random.Generator
) -> LabelCounts:
    """A person's labels on ``count`` of an arm's answers, drawn at random."""
    chosen = rng.choice(right.size, size=min(count, right.size), replace=False)
    r, p = right[chosen], passed[chosen] > 0
    return LabelCounts(
        true_pass=int((r & p).sum()),
        false_fail=int((r & ~p).sum()),
        true_fail=int((~r & ~p).sum()),
        false_pass=int((~r & p).sum()),
    )


def calibration_of(folder: Folder, labels: int, rng: np.random.Generator) -> Calibration:
    arms = {
        name: label_counts(folder.truth[i], folder.judged[i], labels, rng)
        for i, name in enumerate(("a", "b"))
    }
    pooled = JudgeRates(**arms["a"].model_dump()) + JudgeRates(**arms["b"].model_dump())
    return Calibration(
        labels_file="simulated",
        labels_sha256="",
        pooled=LabelCounts(**vars(pooled)),
        arms=arms,
    )


@dataclass
class Tally:
    accuracy: list[int]
    difference: list[int]
    alarms: list[int]
    errors: list[float]
    """Summed error of the difference's estimate (estimate - truth), over the folders with
    a corrected estimate for the corrected one."""
    sims: int = 0
    unestimated: int = 0
    """Folders whose labels leave a judge no better than chance on an arm: no correction."""

    @classmethod
    def empty(cls) -> Tally:
        return cls([0, 0], [0, 0], [0, 0], [0.0, 0.0])


def measure(
    scenario: Scenario,
    tasks: int,
    repeats: int,
    labels: int,
    sims: int,
    seed: int,
    elsewhere: bool = False,
) -> Tally:
    """The tallies over ``sims`` folders; ``elsewhere``: the person labels answers of
    another folder of the same arms and judge, not the folder's own."""
    rng = np.random.default_rng(seed)
    true_a, true_b = scenario.accuracy
    tally = Tally.empty()
    made = folders(scenario, tasks, repeats, sims, rng)
    labelled = folders(scenario, tasks, repeats, sims, rng) if elsewhere else made
    for folder, source in zip(made, labelled, strict=True):
        calibration = calibration_of(source, labels, rng)
        rates = (arm_rates(calibration, "a"), arm_rates(calibration, "b"))
        judged_a, judged_b = folder.judged
        fixed = corrected_accuracy(folder.tasks, judged_a, rates[0])
        low, high = accuracy_interval(folder.tasks, judged_a)
        tally.accuracy[0] += fixed.low <= true_a <= fixed.high
        tally.accuracy[1] += low <= true_a <= high
        difference = corrected_difference(folder.tasks, (judged_a, judged_b), rates)
        paired = PairedTasks.of(folder.tasks, judged_a, judged_b)
        low, high = paired.interval()
        truth = true_a - true_b
        tally.difference[0] += difference.low <= truth <= difference.high
        tally.difference[1] += low <= truth <= high
        if math.isnan(difference.estimate):
            tally.unestimated += 1
        else:
            tally.errors[0] += difference.estimate - truth
        tally.errors[1] += paired.difference - truth
        if true_a == true_b:
            # b compared against a, as compare does: b regresses when it falls.
            fall = corrected_difference(folder.tasks, (judged_b, judged_a), rates[::-1])
            tally.alarms[0] += fall.estimate < -MAX_DROP and fall.high < 0
            gate = PairedTasks.of(folder.tasks, judged_b, judged_a)
            tally.alarms[1] += gate.difference < -MAX_DROP and gate.p_value() < ALPHA
        tally.sims += 1
    return tally


def through_folders(count: int, tasks: int, repeats: int, labels: int, seed: int) -> float:
    """Coverage of arm a's corrected accuracy over ``count`` folders taken the whole way:
    written, sampled, labelled and calibrated by the commands, corrected from the saved
    calibration (the scenario of a judge favouring a, arms equal)."""
    from click.testing import CliRunner

    from loopbench.harness.cli.main import main
    from loopbench.harness.results.judge_calibration import load_calibration
    from loopbench.harness.results.reading import read_records
    from loopbench.harness.results.records import RunRecord
    from tests.harness.cli.judge_folders import label_sample, write_folder

    scenario = SCENARIOS[1]
    rng = np.random.default_rng(seed)
    covered = 0
    with tempfile.TemporaryDirectory() as place:
        for number, folder in enumerate(folders(scenario, tasks, repeats, count, rng)):
            records, truth = [], {}
            for arm, right, passed in zip("ab", folder.truth, folder.judged, strict=True):
                for i, task in enumerate(folder.tasks):
                    run_id = f"{arm}-{i}"
                    records.append(
                        RunRecord(
                            run_id=run_id,
                            arm=arm,
                            task_id=f"t{task}",
                            repeat=i % repeats,
                            status="answered",
                            answer="an answer",
                            correct=bool(passed[i]),
                        )
                    )
                    truth[run_id] = bool(right[i])
            results = write_folder(Path(place) / str(number), records, questions=False)
            runner = CliRunner()
            sample = runner.invoke(
                main, ["judge", "sample", str(results), "--per-arm", str(labels), "--seed", "1"]
            )
            assert sample.exit_code == 0, sample.output
            labelled = label_sample(results / "judge_sample.csv", truth)
            calibrate = runner.invoke(
                main, ["judge", "calibrate", str(results), "--labels", str(labelled)]
            )
            assert calibrate.exit_code == 0, calibrate.output
            calibration = load_calibration(results)
            assert calibration is not None
            runs = [r for r in read_records(results) if r.arm == "a"]
            fixed = corrected_accuracy(
                [r.task_id for r in runs],
                [float(bool(r.correct)) for r in runs],
                arm_rates(calibration, "a"),
            )
            covered += fixed.low <= scenario.accuracy[0] <= fixed.high
    return covered / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sims", type=int, default=500, help="folders a row")
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--labels", type=int, nargs="+", default=[50, 150], help="per arm")
    parser.add_argument("--folders", type=int, default=50, help="folders the whole way")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--labels-elsewhere",
        action="store_true",
        help="label answers of another folder of the same arms and judge",
    )
    args = parser.parse_args()
    started = time.monotonic()
    rows = []
    for labels in args.labels:
        for number, scenario in enumerate(SCENARIOS):
            tally = measure(
                scenario,
                args.tasks,
                args.repeats,
                labels,
                args.sims,
                args.seed + number,
                args.labels_elsewhere,
            )
            share = [f"{x / tally.sims:.3f}" for x in (*tally.accuracy, *tally.difference)]
            equal = scenario.accuracy[0] == scenario.accuracy[1]
            alarms = [f"{x / tally.sims:.3f}" if equal else "-" for x in tally.alarms]
            estimated = tally.sims - tally.unestimated
            bias = [f"{tally.errors[0] / estimated:+.3f}", f"{tally.errors[1] / tally.sims:+.3f}"]
            unestimated = f"{tally.unestimated / tally.sims:.3f}"
            rows.append([scenario.name, labels, *share, *alarms, *bias, unestimated])
    headers = [
        "scenario",
        "labels/arm",
        "acc cov corr",
        "acc cov judged",
        "diff cov corr",
        "diff cov judged",
        "false alarm corr",
        "false alarm judged",
        "diff bias corr",
        "diff bias judged",
        "no estimate",
    ]
    print(
        f"{args.sims} folders a row: {args.tasks} tasks x {args.repeats} repeats, ICC {ICC}, "
        f"arm correlation {ARM_CORRELATION}; 95% intervals; gate: fall > {MAX_DROP} at "
        f"p < {ALPHA}"
    )
    print(tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True))
    if args.folders:
        coverage = through_folders(
            args.folders, min(args.tasks, 50), args.repeats, max(args.labels), args.seed
        )
        print(
            f"Through the commands ({args.folders} folders of {min(args.tasks, 50)} tasks, "
            f"judge favours a, {max(args.labels)} labels an arm): corrected accuracy's "
            f"interval covers in {coverage:.3f}"
        )
    print(f"({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
