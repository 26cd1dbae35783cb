"""Every registered pattern, end to end through `loopbench run` against a loopback server."""

from itertools import product

from click.testing import CliRunner

from loopbench.harness.arms import arm_identity, parse_arm
from loopbench.harness.cli.main import main
from loopbench.harness.fakes.fake_server import FakeServer
from loopbench.harness.patterns.catalog import registered
from loopbench.harness.results.reading import read_records
from loopbench.harness.results.statuses import INFRASTRUCTURE_STATUSES

# Every registered pattern as it comes, and options that take another path through it,
# against the fake server's deterministic model (it looks one thing up, then answers 84;
# structured requests get valid arguments).
SPECS = [
    *registered(),
    "react:finish=tool",  # it never calls final_answer, so the step budget ends it
    "rewoo:output=json",
    "reflection:cycles=0",
    "reflection:cycles=2",
    "best_of_n:verifier=model",
    "tot:breadth=2,depth=2,propose=sample",
    "plan_execute:output=json",
]


def test_each_pattern_runs_every_task_within_its_max_steps(tmp_path):
    args = ["run", "--model", "fake", "--out", str(tmp_path / "r"), "--quiet"]
    for spec in SPECS:
        args += ["--arm", spec]
    with FakeServer() as server:
        result = CliRunner().invoke(main, [*args, "--base-url", server.base_url])
        served = server.served.requests
    assert result.exit_code == 0, result.output
    records = read_records(tmp_path / "r")
    arms, tasks = {arm_identity(spec) for spec in SPECS}, {r.task_id for r in records}
    assert sorted((r.arm, r.task_id) for r in records) == sorted(product(arms, tasks))
    max_steps = {arm.spec: arm.options.max_steps for arm in map(parse_arm, SPECS)}
    for record in records:
        assert record.status not in INFRASTRUCTURE_STATUSES, record
        assert 1 <= record.turns <= max_steps[record.arm], (record.arm, record.turns)
    assert sum(r.turns for r in records) == served  # every request served is counted


def test_patterns_command_lists_every_pattern_with_options_and_costs():
    result = CliRunner().invoke(main, ["patterns"])
    for name in registered():
        assert f"\n{name}: " in f"\n{result.output}"
    assert "cycles=1  Critique-and-rewrite cycles" in result.output
    assert "always 2 calls" in result.output
