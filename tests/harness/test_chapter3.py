"""experiments/chapter3.toml: seed 003's six configurations and budgets, on the depot set."""

from pathlib import Path

from click.testing import CliRunner

from loopbench.harness.arms import parse_arms
from loopbench.harness.cli.main import main
from loopbench.harness.config import load_experiment
from loopbench.harness.fakes.fake_server import FakeServer
from loopbench.harness.results.reading import read_records

CHAPTER3 = Path(__file__).parents[2] / "experiments" / "chapter3.toml"


def test_the_six_configurations_with_the_chapters_budgets():
    written = load_experiment(CHAPTER3)
    arms = {arm.spec: arm.resolved for arm in parse_arms(written.arms)}
    assert written.repeats == 3 and len(arms) == 6
    assert arms["direct:max_output_tokens=60"]["max_output_tokens"] == 60
    assert arms["cot:max_output_tokens=400"]["max_output_tokens"] == 400
    loops = [options for spec, options in arms.items() if spec.startswith("react_text")]
    assert {(o["guard"], o["tool"]) for o in loops} == {
        (False, "plain"),
        (True, "plain"),
        (False, "improved"),
        (True, "improved"),
    }
    assert all(o["max_steps"] == 7 and o["max_output_tokens"] == 200 for o in loops)


def test_the_completion_limits_reach_the_endpoint(tmp_path):
    with FakeServer() as server:
        args = ["run", "--experiment", str(CHAPTER3), "--repeats", "1", "--model", "fake"]
        args += ["--out", str(tmp_path / "r"), "--quiet", "--base-url", server.base_url]
        result = CliRunner().invoke(main, args)
        limits = {body.get("max_tokens") for body in server.served.bodies}
    assert result.exit_code == 0, result.output
    assert limits == {60, 400, 200}
    assert len(read_records(tmp_path / "r")) == 6 * 12


def test_the_chapters_own_figures_are_published_beside_each_configuration():
    written = load_experiment(CHAPTER3)
    assert {arm: round(100 * p.accuracy) for arm, p in written.published.items()} == {
        "direct:max_output_tokens=60": 3,
        "cot:max_output_tokens=400": 22,
        "react_text:max_steps=7,max_output_tokens=200": 56,
        "react_text:guard=on,max_steps=7,max_output_tokens=200": 75,
        "react_text:tool=improved,max_steps=7,max_output_tokens=200": 75,
        "react_text:guard=on,tool=improved,max_steps=7,max_output_tokens=200": 100,
    }
    assert {p.model for p in written.published.values()} == {"gpt-5-mini"}
