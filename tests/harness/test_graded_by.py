"""A results folder says which grader, with which options, graded its runs: the table's
title names it, a folder written before it was recorded reads as graded by the rule of
then (exact: seed 003's), and runs graded otherwise are not added to a folder."""

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.results.identity import graded_by, identity_changes

REFERENCE = Path(__file__).parents[2] / "results" / "reference" / "local-smollm2"


def title(folder):
    shown = CliRunner().invoke(main, ["table", str(folder)])
    assert shown.exit_code == 0, shown.output
    return shown.output.splitlines()[0]


def test_the_table_title_names_the_grader_and_its_rule(tmp_path):
    # The reference run was written before the grader was recorded: by the rule of then.
    assert "graded by exact (seed 003's rule);" in title(REFERENCE)
    copy = tmp_path / "r"
    shutil.copytree(REFERENCE, copy)
    meta = json.loads((copy / "experiment.json").read_text())
    for recorded, said in [
        ({"name": "exact", "options": {}}, "exact (strict: the final answer, hedges refused)"),
        ({"name": "exact", "options": {"rule": "seed"}}, "exact (seed 003's rule)"),
        ({"name": "number", "options": {"tolerance": 0.01}}, "number (tolerance=0.01)"),
    ]:
        (copy / "experiment.json").write_text(json.dumps({**meta, "grader": recorded}))
        assert f"graded by {said};" in title(copy)


def test_an_older_code_folder_reads_as_graded_by_its_tests():
    assert graded_by({"task_set": "coding"}, code=True) == "code_tests"
    assert graded_by(None, code=False) == "exact (seed 003's rule)"


def test_runs_graded_by_another_rule_are_not_added_to_a_folder():
    strict = {"grader": {"name": "exact", "options": {}}}
    seed = {"grader": {"name": "exact", "options": {"rule": "seed"}}}
    [said] = identity_changes(seed, strict)
    assert said.startswith("grader exact (seed 003's rule), not exact (strict")
    assert (
        identity_changes({"grader": {"name": "exact", "options": {"rule": "strict"}}}, strict) == []
    )
    assert identity_changes({}, strict) == []  # an older folder still resumes
