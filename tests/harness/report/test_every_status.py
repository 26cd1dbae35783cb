"""Every reader over a folder holding every status a run can end in: each plot kind, the
HTML report, the failure taxonomy and the table with its failures column (a status
without a colour or a label once raised KeyError)."""

import json
import re

import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.results.statuses import STATUSES

from .test_table import record


@pytest.fixture
def every_status(tmp_path):
    folder = tmp_path / "r"
    folder.mkdir()
    lines = [
        record(arm=arm, task=f"t{t}", status=status, correct=t % 2 == 0).model_dump_json()
        for arm in ("cot", "react")
        for t, status in enumerate(STATUSES)
    ]
    (folder / "runs.jsonl").write_text("\n".join(lines) + "\n")
    return str(folder)


def cli(*args):
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("kind", ["frontier", "status", "tokens", "turns"])
def test_every_plot_kind_draws_every_status(tmp_path, every_status, kind):
    out = tmp_path / f"{kind}.png"
    cli("plot", every_status, "--kind", kind, "-o", str(out), "--price-as", "gpt-5-mini")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_report_holds_every_status(tmp_path, every_status):
    out = tmp_path / "report.html"
    cli("report", every_status, "-o", str(out), "--price-as", "gpt-5-mini")
    [block] = re.findall(r'id="report-data">(.*?)</script>', out.read_text(), re.S)
    assert {run["status"] for run in json.loads(block)["runs"]} == set(STATUSES)


def test_failures_and_the_table_label_every_status_from_the_records(every_status):
    printed = cli("failures", every_status)
    for label in ("truncated", "budget", "api error", "format failure"):
        assert label in printed
    table = cli("table", every_status, "--failures", "--columns", "arm,failures")
    assert "truncated" in table and "budget" in table
