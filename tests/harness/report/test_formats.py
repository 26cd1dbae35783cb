import json

import pandas as pd
import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.report.rendering import latex_text, render

from .test_compare import write


@pytest.fixture
def results(tmp_path):
    return write(tmp_path / "r", {"react": 0.8, "cot": 0.4}, seed=2)


def table(*args):
    result = CliRunner().invoke(main, ["table", *args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize(
    ("fmt", "marker"),
    [
        ("md", "| react"),
        ("latex", "\\begin{tabular}"),
        ("html", "<caption>"),
        ("csv", "arm,"),
        ("json", '"arm"'),
    ],
)
def test_every_format_renders(results, fmt, marker):
    assert marker in table(results, "--format", fmt)


def test_columns_are_chosen(results):
    rows = json.loads(table(results, "--format", "json", "--columns", "arm,accuracy"))
    assert set(rows[0]) == {"arm", "accuracy"}


def test_unknown_column_lists_the_real_ones(results):
    result = CliRunner().invoke(main, ["table", results, "--columns", "acc"])
    assert result.exit_code == 2 and "unknown column 'acc' (pass@k" in result.output
    assert "--format csv has every column); columns: arm, n, correct" in result.output


def test_vs_adds_the_paired_difference_against_a_reference_arm(results):
    rows = {r["arm"]: r for r in json.loads(table(results, "--format", "json", "--vs", "cot"))}
    assert rows["react"]["vs_difference"] == pytest.approx(
        rows["react"]["accuracy"] - rows["cot"]["accuracy"]
    )
    assert (
        rows["react"]["vs_ci_low"] <= rows["react"]["vs_difference"] <= rows["react"]["vs_ci_high"]
    )
    assert rows["cot"]["vs_difference"] is None
    assert "vs cot [95% CI], p" in table(results, "--vs", "cot")


@pytest.mark.parametrize("by", ["slice", "task", "model"])
def test_grouping(results, by):
    rows = json.loads(table(results, "--format", "json", "--by", by))
    assert by in rows[0]


def test_latex_escapes_every_cell_header_and_the_caption(results):
    result = CliRunner().invoke(main, ["table", results, "--format", "latex", "--vs", "react"])
    assert result.exit_code == 0, result.output
    latex = result.output
    body = latex.replace(r"$\rightarrow$", "").replace(r"$\cdot$", "")
    for special in "%$#_":  # & separates the columns
        assert all(body[i - 1] == "\\" for i, c in enumerate(body) if c == special), special
    assert r"\% [" in latex and r"\$/correct" in latex and "→" not in latex


def test_a_zero_bound_in_json_is_zero():
    summary = pd.DataFrame([{"arm": "a", "accuracy_low": 1.4e-17, "accuracy_high": 0.5}])
    [row] = json.loads(render(summary, "json"))
    assert row["accuracy_low"] == 0 and row["accuracy_high"] == 0.5


def test_latex_text_escapes_each_special_character():
    assert latex_text("a & b_1 {x} 5% $3 #2 ~ ^ \\") == (
        r"a \& b\_1 \{x\} 5\% \$3 \#2 \textasciitilde{} \textasciicircum{} \textbackslash{}"
    )
    assert latex_text("w→r — p·r") == r"w$\rightarrow$r --- p$\cdot$r"
