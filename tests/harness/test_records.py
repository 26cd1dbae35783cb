"""Records are a public format: older results folders load, and the schema is documented."""

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from loopbench.harness.arms import parse_arm
from loopbench.harness.cli.main import main
from loopbench.harness.fakes.fake_server import FakeServer
from loopbench.harness.patterns.catalog import registered
from loopbench.harness.results.legacy import SCHEMA_1_DEFAULTS, schema_1_identity
from loopbench.harness.results.reading import read_records
from loopbench.harness.results.records import SCHEMA_VERSION, RunRecord

ROOT = Path(__file__).parents[2]
#: Written by loopbench 0.1.0 (schema 1) against the fake server: 15 arms x 12 tasks x 2.
SCHEMA_1_FOLDER = ROOT / "tests" / "fixtures" / "results-0.1.0"
SCHEMA_1_ARMS = {
    "direct",
    "cot",
    "react_text",
    "react_text:guard=on",
    "react_text:guard=on,tool=improved",
    "react",
    "plan",
    "rewoo",
    "reflection:cycles=2",
    "reflexion",
    "best_of_n:n=2",
    "tot:breadth=2",
    "plan_execute:replan=on",
    "goal_decomposition",
    "self_consistency:samples=3",
}


def test_schema_1_arms_are_read_as_todays_identities():
    records = read_records(SCHEMA_1_FOLDER)
    assert len(records) == 360
    assert {r.arm for r in records} == SCHEMA_1_ARMS
    assert all(r.schema_version == 1 for r in records)


def test_a_schema_1_arm_keeps_options_set_to_other_than_their_old_default():
    written = "plan_execute:guard=off,max_steps=20,max_tokens=20000,output=tool,replan=on,"
    written += "step_budget=3,step_timeout_s=0,tool=plain"
    assert schema_1_identity(written) == "plan_execute:max_steps=20,replan=on"
    assert schema_1_identity("no_such_pattern:x=1") == "no_such_pattern:x=1"
    # best_of_n's and reflexion's max_steps were per candidate and per attempt.
    assert schema_1_identity("best_of_n:max_steps=12,n=3") == "best_of_n:candidate_steps=12"
    assert schema_1_identity("reflexion:attempts=3,max_steps=4") == (
        "reflexion:attempt_steps=4,attempts=3"
    )


def test_every_schema_1_pattern_is_still_registered():
    assert set(SCHEMA_1_DEFAULTS) <= set(registered())


def test_a_schema_1_folder_compares_cleanly_against_one_written_today(tmp_path):
    args = ["run", "--model", "fake", "--out", str(tmp_path / "now"), "--quiet", "--repeats", "2"]
    for arm in sorted(SCHEMA_1_ARMS):
        args += ["--arm", arm]
    with FakeServer() as server:
        ran = CliRunner().invoke(main, [*args, "--base-url", server.base_url])
    assert ran.exit_code == 0, ran.output
    compared = CliRunner().invoke(
        main, ["compare", str(SCHEMA_1_FOLDER), str(tmp_path / "now"), "--format", "json"]
    )
    assert compared.exit_code == 0, compared.output
    rows = {row["arm"]: row for row in json.loads(compared.stdout)["arms"]}
    assert set(rows) == SCHEMA_1_ARMS
    assert all(row["n_pairs"] == 24 for row in rows.values())
    # What changed since 0.1.0 is named in today's terms, with both values: tot kept one
    # node a level, and best_of_n's per-candidate max_steps is candidate_steps today.
    assert "beam: 1 → 2" in rows["tot:breadth=2"]["option_changes"]
    assert 'propose: "sample" → "list"' in rows["tot:breadth=2"]["option_changes"]
    best_of_n = rows["best_of_n:n=2"]["option_changes"]
    assert "candidate_steps: 8 → 6" in best_of_n and "max_steps: 16 → 24" in best_of_n
    assert not rows["react_text"]["option_changes"]  # nothing new means anything else
    assert rows["direct"]["option_changes"] == [
        "max_steps: (absent) → 8",
        "max_tokens: (absent) → 20000",
        "step_timeout_s: (absent) → 0",
    ]


def test_compare_names_a_changed_default_and_still_compares(tmp_path):
    before, after = tmp_path / "before", tmp_path / "after"
    for folder, max_steps in ((before, 8), (after, 10)):
        folder.mkdir()
        lines = [
            _minimal(task_id=f"t{i}", options={"guard": False, "max_steps": max_steps})
            for i in range(4)
        ]
        (folder / "runs.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    result = CliRunner().invoke(main, ["compare", str(before), str(after), "--format", "md"])
    assert result.exit_code == 0, result.output
    assert "max_steps: 8 → 10" in result.output


def _minimal(**fields):
    return {"arm": "react_text", "task_id": "t1", "repeat": 0, "status": "answered", **fields}


def test_a_record_with_only_the_identifying_fields_loads_and_tabulates(tmp_path):
    lines = [
        _minimal(task_id="t1", correct=True, answer="84"),
        _minimal(task_id="t2", correct=False, answer="3"),
        _minimal(task_id="t3", status="step_budget"),
    ]
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    records = read_records(tmp_path)
    assert [r.pattern for r in records] == ["react_text"] * 3
    assert records[0].schema_version == SCHEMA_VERSION
    result = CliRunner().invoke(main, ["table", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "| react_text" in result.output and "33% [" in result.output


@pytest.mark.parametrize("kind", ["frontier", "status", "tokens", "turns"])
def test_a_schema_1_folder_plots(tmp_path, kind):
    args = ["plot", str(SCHEMA_1_FOLDER), "--kind", kind, "-o", str(tmp_path / "p.png")]
    result = CliRunner().invoke(main, [*args, "--price-as", "gpt-5-mini"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "p.png").stat().st_size > 1000


def test_the_schema_document_describes_every_field_and_its_version():
    doc = (ROOT / "docs" / "records.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `(\w+)` \| (\d+) \|", doc, re.MULTILINE))
    assert set(rows) == set(RunRecord.model_fields)
    assert rows["loopbench_version"] == "2" and rows["arm"] == "1"
    assert f"Current schema version: {SCHEMA_VERSION}" in doc


def test_an_arm_identity_names_only_what_was_set():
    arm = parse_arm("react_text:tool=improved,guard=true")
    assert arm.spec == "react_text:guard=on,tool=improved"
    assert parse_arm("react_text").spec == "react_text"
    assert arm.resolved["max_steps"] == 8


def test_compare_matches_an_arm_whose_defaults_one_side_wrote_out(tmp_path):
    grid = ["--arm", "react_text:guard=on|off,tool=plain"]
    args = ["run", "--model", "fake", "--out", str(tmp_path / "now"), "--quiet", "--repeats", "2"]
    with FakeServer() as server:
        ran = CliRunner().invoke(main, [*args, *grid, "--base-url", server.base_url])
    assert ran.exit_code == 0, ran.output
    compared = CliRunner().invoke(
        main, ["compare", str(SCHEMA_1_FOLDER), str(tmp_path / "now"), "--format", "json"]
    )
    assert compared.exit_code == 0, compared.output
    result = json.loads(compared.stdout)
    assert {row["arm"] for row in result["arms"]} == {"react_text", "react_text:guard=on"}
    assert result["matched"] == {
        "react_text:guard=off,tool=plain": "react_text",
        "react_text:guard=on,tool=plain": "react_text:guard=on",
    }
    assert "direct" in result["only_before"] and result["only_after"] == []
    old_name = "react_text:guard=off,max_steps=8,max_tokens=20000,step_timeout_s=0,tool=plain"
    chosen = CliRunner().invoke(
        main, ["compare", str(SCHEMA_1_FOLDER), str(tmp_path / "now"), "--arm", old_name]
    )
    assert chosen.exit_code == 0, chosen.output


def test_resuming_an_older_folder_refuses_an_arm_whose_options_now_resolve_otherwise(tmp_path):
    folder = tmp_path / "old"
    shutil.copytree(SCHEMA_1_FOLDER, folder)
    with FakeServer() as server:
        meta = json.loads((folder / "experiment.json").read_text())
        meta["base_url"] = server.base_url
        (folder / "experiment.json").write_text(json.dumps(meta))
        args = ["run", "--model", "fake", "--out", str(folder), "--quiet", "--repeats", "2"]
        # Written before sampling was a setting, when temperature 0 was sent: the same again.
        args += ["--base-url", server.base_url, "--temperature", "0"]
        unchanged = CliRunner().invoke(main, [*args, "--arm", "react_text"])
        changed = CliRunner().invoke(main, [*args, "--arm", "best_of_n:n=2"])
        served = server.served.requests
    assert unchanged.exit_code == 0 and "0 runs done, 24 already recorded" in unchanged.output
    assert changed.exit_code == 2
    assert "runs of best_of_n:n=2 there were made with other options" in changed.output
    assert "candidate_steps 8 there, 6 now" in changed.output
    assert served == 0 and len(read_records(folder)) == 360


def test_compare_does_not_judge_cost_on_tokens_an_endpoint_did_not_report(tmp_path):
    before, after = tmp_path / "before", tmp_path / "after"
    for folder, usage in ((before, {"tokens_in": 1000}), (after, {"usage_missing": 1})):
        folder.mkdir()
        lines = [_minimal(task_id=f"t{i}", correct=True, answer="84", **usage) for i in range(6)]
        (folder / "runs.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    args = ["compare", str(before), str(after), "--format", "json", "--price-as", "gpt-5-mini"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)["arms"]
    assert "cost not compared: 6 model calls reported no token usage" in row["why"]
