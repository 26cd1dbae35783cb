"""Every registered pattern, end to end through `loopbench run` against a loopback server."""

from click.testing import CliRunner

from harness.cli.main import main
from harness.experiment import arm_identity
from harness.fakes.fake_server import FakeServer
from harness.patterns.catalog import registered
from harness.results.store import read_records

# Model calls each arm is specified to make against the fake server's deterministic model
# (it looks one thing up, then answers 84; structured requests get valid arguments).
EXPECTED_TURNS = {
    "direct": 1,
    "cot": 1,
    "react_text": 2,
    "react": 2,
    "react:finish=tool": 8,  # it never calls final_answer, so the step budget ends it
    "plan": 3,  # plan + lookup + answer
    "rewoo": 2,  # whatever the plan holds
    "rewoo:output=json": 2,
    "reflection:cycles=0": 2,
    "reflection:cycles=1": 3,  # the critique approves: no rewrite
    "reflection:cycles=2": 3,
    "reflexion": 4,  # 84 is in no observation, so the check fails and it tries once more
    "self_consistency:samples=3": 3,
    "best_of_n:n=2": 4,  # the evidence check rejects both candidates
    "best_of_n:verifier=model": 3,  # candidate (2) + verdict (1), accepted
    "tot:breadth=2,depth=2": 10,  # a list of 2 + 2 scores, then 2 kept x (1 + 2), answer
    # Its sampled steps are all "84": the repeat is dropped unscored, so one node a level.
    "tot:breadth=2,depth=2,propose=sample": 7,  # (2 proposals + 1 score) x 2, answer
    "plan_execute": 6,  # plan + 2 steps of 2 calls + answer
    "plan_execute:output=json": 6,
    "goal_decomposition": 6,
}


def test_every_registered_pattern_is_covered():
    covered = {spec.split(":")[0] for spec in EXPECTED_TURNS}
    assert covered == set(registered())


def test_each_pattern_makes_the_calls_it_is_specified_to(tmp_path):
    args = ["run", "--model", "fake", "--out", str(tmp_path / "r"), "--quiet"]
    for spec in EXPECTED_TURNS:
        args += ["--arm", spec]
    with FakeServer() as server:
        result = CliRunner().invoke(main, [*args, "--base-url", server.base_url])
        served = server.served.requests
    assert result.exit_code == 0, result.output
    records = read_records(tmp_path / "r")
    turns = {}
    for record in records:
        turns.setdefault(record.arm, set()).add(record.turns)
    expected = {arm_identity(spec): {n} for spec, n in EXPECTED_TURNS.items()}
    assert turns == expected
    assert sum(r.turns for r in records) == served


def test_patterns_command_lists_every_pattern_with_options_and_costs():
    result = CliRunner().invoke(main, ["patterns"])
    for name in registered():
        assert f"\n{name}: " in f"\n{result.output}"
    assert "cycles=1  Critique-and-rewrite cycles" in result.output
    assert "always 2 calls" in result.output
