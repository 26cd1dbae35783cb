"""``loopbench judge sample``: answers for a person to label, stratified by arm, drawn with a
seed, the judge's verdict left out, and a file already labelled never replaced."""

import csv
from collections import Counter
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from tests.harness.cli.judge_folders import ScriptedArm, simulate, write_folder

ARMS = {"cot": ScriptedArm(0.6, 0.9, 0.6), "direct": ScriptedArm(0.5, 0.9, 0.9)}


def judge(*args: str):
    return CliRunner().invoke(main, ["judge", *args])


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def folder(tmp_path: Path, tasks: int = 30, questions: bool = True, ungraded: float = 0.2):
    sim = simulate(ARMS, tasks, 2, np.random.default_rng(0), ungraded=ungraded)
    return write_folder(tmp_path / "results", sim.records, questions), sim


def test_each_arm_gives_its_share_of_graded_answers(tmp_path: Path) -> None:
    results, sim = folder(tmp_path)
    outcome = judge("sample", str(results), "--per-arm", "20")
    assert outcome.exit_code == 0, outcome.output
    sample = rows(results / "judge_sample.csv")
    assert Counter(row["arm"] for row in sample) == {"cot": 20, "direct": 20}
    graded = {r.run_id for r in sim.records if r.correct is not None}
    assert {row["run_id"] for row in sample} <= graded
    assert len({row["run_id"] for row in sample}) == 40


def test_an_arm_with_fewer_gives_all_it_has(tmp_path: Path) -> None:
    results, sim = folder(tmp_path, tasks=10)
    judge("sample", str(results), "--per-arm", "1000")
    sample = rows(results / "judge_sample.csv")
    graded = Counter(r.arm for r in sim.records if r.correct is not None)
    assert Counter(row["arm"] for row in sample) == graded


def test_the_judges_verdict_is_hidden(tmp_path: Path) -> None:
    results, _ = folder(tmp_path)
    judge("sample", str(results), "--per-arm", "5")
    text = (results / "judge_sample.csv").read_text(encoding="utf-8")
    header = text.splitlines()[0].split(",")
    assert header == ["run_id", "arm", "task_id", "repeat", "question", "answer", "label"]
    assert all(row["label"] == "" for row in rows(results / "judge_sample.csv"))
    assert "True" not in text and "False" not in text and "judge_api_error" not in text


def test_the_question_comes_from_the_traces_and_is_left_out_without(tmp_path: Path) -> None:
    results, _ = folder(tmp_path)
    judge("sample", str(results), "--per-arm", "3")
    assert all(
        r["question"] == f"Explain {r['task_id']}." for r in rows(results / "judge_sample.csv")
    )
    bare, _ = folder(tmp_path / "bare", questions=False)
    judge("sample", str(bare), "--per-arm", "3")
    assert "question" not in rows(bare / "judge_sample.csv")[0]


def test_the_seed_decides_which_answers(tmp_path: Path) -> None:
    results, _ = folder(tmp_path)
    drawn = []
    for seed, name in (("1", "a.csv"), ("1", "b.csv"), ("2", "c.csv")):
        out = tmp_path / name
        judge("sample", str(results), "--per-arm", "10", "--seed", seed, "--output", str(out))
        drawn.append(out.read_text(encoding="utf-8"))
    assert drawn[0] == drawn[1] != drawn[2]


def test_a_sample_not_yet_labelled_is_replaced(tmp_path: Path) -> None:
    results, _ = folder(tmp_path)
    judge("sample", str(results), "--per-arm", "3")
    outcome = judge("sample", str(results), "--per-arm", "5")
    assert outcome.exit_code == 0, outcome.output
    assert len(rows(results / "judge_sample.csv")) == 10


def test_a_labelled_file_is_never_replaced(tmp_path: Path) -> None:
    results, _ = folder(tmp_path)
    judge("sample", str(results), "--per-arm", "3")
    path = results / "judge_sample.csv"
    labelled = path.read_text(encoding="utf-8").replace(",\n", ",pass\n", 1)
    path.write_text(labelled, encoding="utf-8")
    outcome = judge("sample", str(results), "--per-arm", "5")
    assert outcome.exit_code == 2
    assert outcome.output.strip().count("\n") == 0 and "holds labels already" in outcome.output
    assert path.read_text(encoding="utf-8") == labelled


def test_a_folder_without_graded_answers_is_refused(tmp_path: Path) -> None:
    results, _ = folder(tmp_path, tasks=3, ungraded=1.0)
    outcome = judge("sample", str(results), "--per-arm", "3")
    assert outcome.exit_code == 2 and "nothing to label" in outcome.output
    assert not (results / "judge_sample.csv").exists()


def test_a_missing_folder_is_one_line(tmp_path: Path) -> None:
    outcome = judge("sample", str(tmp_path / "nowhere"), "--per-arm", "3")
    assert outcome.exit_code == 2 and outcome.output.strip().count("\n") == 0


REFERENCE = Path(__file__).parents[3] / "results" / "reference" / "local-smollm2"


def test_the_task_set_gives_the_reference_answer(tmp_path: Path) -> None:
    import shutil

    results = shutil.copytree(REFERENCE, tmp_path / "mine")
    outcome = judge("sample", str(results), "--per-arm", "2", "--tasks", "depot")
    assert outcome.exit_code == 0, outcome.output
    sample = rows(results / "judge_sample.csv")
    assert all(row["question"] and '"numbers"' in row["reference"] for row in sample)


def test_a_task_changed_since_its_run_is_refused(tmp_path: Path) -> None:
    import re
    import shutil

    results = shutil.copytree(REFERENCE, tmp_path / "mine")
    runs = results / "runs.jsonl"
    text = runs.read_text(encoding="utf-8")
    runs.write_text(re.sub(r'"task_fingerprint":"\w+"', '"task_fingerprint":"0"', text))
    outcome = judge("sample", str(results), "--per-arm", "2", "--tasks", "depot")
    assert outcome.exit_code == 2 and "has changed task" in outcome.output
    assert not (results / "judge_sample.csv").exists()


def test_the_sets_rubric_comes_from_the_folders_grader(tmp_path: Path) -> None:
    import json

    results, _ = folder(tmp_path)
    experiment = json.loads((results / "experiment.json").read_text(encoding="utf-8"))
    experiment["grader"]["options"]["rubric"] = "Names the cause and the fix."
    (results / "experiment.json").write_text(json.dumps(experiment), encoding="utf-8")
    judge("sample", str(results), "--per-arm", "2")
    assert {r["rubric"] for r in rows(results / "judge_sample.csv")} == {
        "Names the cause and the fix."
    }
