"""Published results beside the measured ones: an experiment file's figures reach the
results folder, and `table` and the report say where each lies against the interval."""

import json

import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.fakes.fake_server import FakeServer
from loopbench.harness.results.records import RunRecord
from loopbench.harness.results.store import ResultsFolder
from loopbench.harness.stats.intervals import wilson_interval

YAO = {"model": "GPT-4", "source": "Yao et al. 2023"}
SEVEN_OF_TEN = wilson_interval(7, 10)  # about [0.397, 0.892]


def run(arm: str, task: int, correct: bool) -> RunRecord:
    return RunRecord(
        arm=arm,
        pattern=arm.partition(":")[0],
        task_set="s",
        task_id=f"t{task}",
        repeat=0,
        model="small-model",
        status="answered",
        answer="x",
        correct=correct,
        turns=1,
        tokens_in=100,
        tokens_out=10,
    )


def folder(tmp_path, published=None, arms=("direct", "cot", "tot", "react_text")):
    """Each arm right on 7 of 10 tasks, but ``react_text`` on all 10; ``published`` as
    run records it in experiment.json."""
    meta = {"task_set": "s", "model": "small-model"}
    with (
        ResultsFolder.open(
            tmp_path / "r", meta | ({"published": published} if published else {})
        ) as out,
        out.writer() as writer,
    ):
        for arm in arms:
            for task in range(10):
                writer.append(run(arm, task, arm == "react_text" or task < 7), [])
    return tmp_path / "r"


def table(results, *flags):
    result = CliRunner().invoke(main, ["table", str(results), "--interval", "runs", *flags])
    assert result.exit_code == 0, result.output
    return result.output


def cells(output: str) -> dict[str, str]:
    """Each arm's published cell in the markdown table."""
    lines = [line for line in output.splitlines() if line.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines[2:]]
    return {row[header.index("arm")]: row[header.index("published")] for row in rows}


def test_each_figure_is_shown_with_its_verdict_against_the_interval(tmp_path):
    low, high = SEVEN_OF_TEN
    published = {
        "direct": {"accuracy": 0.5, **YAO},  # inside
        "cot": {"accuracy": 0.95, **YAO, "cost_per_run": 0.74},  # above
        "tot": {"accuracy": 0.2, **YAO},  # below
        "react_text": {"accuracy": 1.0, "model": "gpt-5-mini", "source": "ch. 3"},  # 10 of 10
    }
    shown = cells(table(folder(tmp_path, published)))
    assert shown["direct"] == "50% (GPT-4, Yao et al. 2023): inside"
    assert shown["cot"] == "95% (GPT-4, Yao et al. 2023): above, $0.74 a run"
    assert shown["tot"] == "20% (GPT-4, Yao et al. 2023): below"
    # The interval of 10 right of 10 ends at 100%: a published 100% is inside it.
    assert shown["react_text"] == "100% (gpt-5-mini, ch. 3): inside"
    assert 0.2 < low < 0.5 < high < 0.95


@pytest.mark.parametrize(
    ("nudge", "verdict"),
    [(0.0, "inside"), (1e-6, None)],
    ids=["on-a-bound", "just-outside"],
)
def test_a_figure_on_a_bound_of_the_interval_is_inside_it(tmp_path, nudge, verdict):
    low, high = SEVEN_OF_TEN
    published = {
        "direct": {"accuracy": low - nudge, **YAO},
        "cot": {"accuracy": high + nudge, **YAO},
    }
    shown = table(folder(tmp_path, published, arms=("direct", "cot")), "--format", "json")
    verdicts = {row["arm"]: row["published_verdict"] for row in json.loads(shown)}
    assert verdicts == {"direct": verdict or "below", "cot": verdict or "above"}


def test_an_arm_without_a_figure_shows_nothing_there(tmp_path):
    shown = cells(table(folder(tmp_path, {"tot": {"accuracy": 0.45, **YAO}})))
    assert shown == {
        "cot": "",
        "direct": "",
        "react_text": "",
        "tot": "45% (GPT-4, Yao et al. 2023): inside",
    }


@pytest.mark.parametrize("fmt", ["md", "csv", "json", "html", "latex"])
def test_a_folder_without_published_figures_has_no_such_column(tmp_path, fmt):
    output = table(folder(tmp_path), "--format", fmt)
    assert "published" not in output
    assert "Yao" not in output


def test_the_html_report_shows_the_published_column(tmp_path):
    results = folder(tmp_path, {"cot": {"accuracy": 0.95, **YAO}})
    result = CliRunner().invoke(main, ["report", str(results), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "95% (GPT-4, Yao et al. 2023): above" in page


EXPERIMENT = """
arms = ["direct", "cot:max_output_tokens=400"]
tasks = "depot"
limit = 2

[published."cot:max_output_tokens=400"]
accuracy = 0.22
model = "gpt-5-mini"
source = "the chapter"
url = "seed 003"
"""


def test_run_records_an_experiment_files_figures_and_table_reads_them(tmp_path):
    (tmp_path / "exp.toml").write_text(EXPERIMENT, encoding="utf-8")
    out = tmp_path / "out"
    with FakeServer() as server:
        args = ["run", "--experiment", str(tmp_path / "exp.toml"), "--model", "fake"]
        args += ["--base-url", server.base_url, "--out", str(out), "--quiet"]
        result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "22% (gpt-5-mini, the chapter): " in result.stdout  # run's own table shows it too
    recorded = json.loads((out / "experiment.json").read_text(encoding="utf-8"))["published"]
    assert recorded == {
        "cot:max_output_tokens=400": {
            "accuracy": 0.22,
            "model": "gpt-5-mini",
            "source": "the chapter",
            "url": "seed 003",
        }
    }
    shown = cells(table(out))
    assert shown["direct"] == ""
    assert shown["cot:max_output_tokens=400"].startswith("22% (gpt-5-mini, the chapter): ")
