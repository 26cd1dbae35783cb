"""Models as a grid axis: every arm on every model, each model on its own endpoint, each
record priced as its own model, and tables, comparisons and plots grouped by model and arm."""

import json

import pytest
from click.testing import CliRunner

import loopbench
from loopbench.harness.cli.main import main
from loopbench.harness.fakes.fake_server import FakeServer, Reply
from loopbench.harness.results.reading import read_records
from tests.depot_answers import RIGHT

DEPOT = loopbench.load_taskset("depot")
PRICES = """as_of = "2026-11-30"
[models.strong]
input = 1.0
cached_input = 0.1
output = 10.0
[models.weak]
input = 0.1
cached_input = 0.01
output = 1.0
"""


def answers(right: bool):
    def responder(body):
        question = body["messages"][-1]["content"]
        return Reply(f"Answer: {RIGHT[question] if right else 'no idea'}")

    return responder


def cli(*args, env=None):
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


@pytest.fixture
def two_endpoints():
    with FakeServer(answers(True)) as strong, FakeServer(answers(False)) as weak:
        yield strong, weak


def grid(tmp_path, strong, weak, *more):
    prices = tmp_path / "prices.toml"
    prices.write_text(PRICES)
    out = tmp_path / "r"
    ran = cli(
        "run", "--out", str(out), "--quiet", "--prices", str(prices),
        "--model", "strong", "--base-url", strong.base_url,
        "--model", "weak", "--base-url", weak.base_url,
        "--arm", "direct", "--arm", "cot", *more,
    )  # fmt: skip
    return ran, out, prices


def test_every_arm_runs_on_every_model_each_on_its_own_endpoint(tmp_path, two_endpoints):
    strong, weak = two_endpoints
    ran, out, _ = grid(tmp_path, strong, weak)
    assert ran.exit_code == 0, ran.output
    records = read_records(out)
    tasks = len(DEPOT.tasks)
    assert len(records) == 2 * 2 * tasks
    assert {b["model"] for b in strong.served.bodies} == {"strong"}
    assert {b["model"] for b in weak.served.bodies} == {"weak"}
    assert strong.served.requests == weak.served.requests == 2 * tasks
    assert all(r.correct == (r.model == "strong") for r in records)
    meta = json.loads((out / "experiment.json").read_text())
    assert meta["model"] == ["strong", "weak"]
    assert meta["base_url"] == {"strong": strong.base_url, "weak": weak.base_url}


def test_each_record_is_priced_as_its_own_model(tmp_path, two_endpoints):
    ran, out, _ = grid(tmp_path, *two_endpoints)
    assert ran.exit_code == 0, ran.output
    for r in read_records(out):
        per_million = (1.0, 10.0) if r.model == "strong" else (0.1, 1.0)
        expected = (r.tokens_in * per_million[0] + r.tokens_out * per_million[1]) / 1e6
        assert r.cost_usd == pytest.approx(expected)


def test_the_table_groups_by_model_and_arm(tmp_path, two_endpoints):
    _, out, prices = grid(tmp_path, *two_endpoints)
    rows = json.loads(cli("table", str(out), "--format", "json", "--prices", str(prices)).output)
    assert [(r["model"], r["arm"], r["accuracy"]) for r in rows] == [
        ("strong", "cot", 1.0),
        ("strong", "direct", 1.0),
        ("weak", "cot", 0.0),
        ("weak", "direct", 0.0),
    ]
    strong_cost = sum(r.cost_usd for r in read_records(out) if r.model == "strong")
    assert sum(r["cost_usd"] for r in rows if r["model"] == "strong") == pytest.approx(strong_cost)
    md = cli("table", str(out), "--vs", "direct", "--prices", str(prices)).output
    assert "| strong  | cot " in md and "| weak    | direct " in md
    for kind in ("status", "tokens", "turns"):
        plotted = cli("plot", str(out), "--kind", kind, "-o", str(tmp_path / f"{kind}.png"))
        assert plotted.exit_code == 0, plotted.output


def test_failures_are_counted_per_model_and_arm(tmp_path, two_endpoints):
    _, out, _ = grid(tmp_path, *two_endpoints)
    listed = json.loads(cli("failures", str(out), "--format", "json").output)
    failed = {arm["arm"]: arm["failed"] for arm in listed}
    tasks = len(DEPOT.tasks)
    assert failed == {
        "strong · cot": 0,
        "strong · direct": 0,
        "weak · cot": tasks,
        "weak · direct": tasks,
    }
    rows = json.loads(cli("table", str(out), "--format", "json", "--failures").output)
    described = {(r["model"], r["arm"]): r["failures"] for r in rows}
    assert described[("weak", "cot")] == described[("weak", "direct")] == "wrong but grounded 100%"
    assert not described[("strong", "cot")]


def test_power_and_measured_cost_keep_each_models_arms_apart(tmp_path, two_endpoints):
    _, out, _ = grid(tmp_path, *two_endpoints)
    estimated = cli("power", "--from", str(out), "--format", "json", "--icc", "0.3")
    assert estimated.exit_code == 0, estimated.output
    found = json.loads(estimated.output)["from"]
    assert (found["arms"], found["repeats"], found["best"]) == (4, 1, "strong · cot")
    assert [pair["arm"] for pair in found["pairs"]] == [
        "strong · direct",
        "weak · cot",
        "weak · direct",
    ]
    measured = cli("cost", "measured", str(out), "--format", "json")
    assert measured.exit_code == 0, measured.output
    rows = {row["arm"]: row["accuracy"] for row in json.loads(measured.output)}
    assert rows == {
        "strong · cot": 1.0,
        "strong · direct": 1.0,
        "weak · cot": 0.0,
        "weak · direct": 0.0,
    }


def test_the_printed_table_after_the_run_groups_by_model(tmp_path, two_endpoints):
    ran, _, _ = grid(tmp_path, *two_endpoints)
    assert "| model" in ran.output and "| weak" in ran.output


def test_a_rerun_resumes_and_another_set_of_models_is_refused(tmp_path, two_endpoints):
    strong, weak = two_endpoints
    grid(tmp_path, strong, weak)
    again, _, _ = grid(tmp_path, strong, weak)
    assert again.exit_code == 0 and "0 runs done, 48 already recorded" in again.output
    one = cli(
        "run", "--out", str(tmp_path / "r"), "--quiet", "--model", "strong",
        "--base-url", strong.base_url, "--arm", "direct",
    )  # fmt: skip
    assert one.exit_code == 2 and "model ['strong', 'weak'], not 'strong'" in one.output


def test_compare_matches_each_model_and_arm(tmp_path, two_endpoints):
    strong, weak = two_endpoints
    _, out, _ = grid(tmp_path, strong, weak)
    compared = cli("compare", str(out), str(out), "--format", "json")
    assert compared.exit_code == 0, compared.output
    arms = {row["arm"] for row in json.loads(compared.output)["arms"]}
    assert arms == {"strong · direct", "strong · cot", "weak · direct", "weak · cot"}


def test_an_experiment_file_gives_each_model_its_endpoint_and_key(tmp_path, two_endpoints):
    strong, weak = two_endpoints
    experiment = tmp_path / "e.toml"
    experiment.write_text(
        f'arms = ["direct"]\nout = "{tmp_path / "r"}"\n'
        f'[[models]]\nname = "strong"\nbase_url = "{strong.base_url}"\napi_key_env = "KEY_A"\n'
        f'[[models]]\nname = "weak"\nbase_url = "{weak.base_url}"\napi_key_env = "KEY_B"\n'
    )
    env = {"KEY_A": "sk-a-0001", "KEY_B": "sk-b-0002"}
    ran = cli("run", "--experiment", str(experiment), "--quiet", env=env)
    assert ran.exit_code == 0, ran.output
    assert len(read_records(tmp_path / "r")) == 2 * len(DEPOT.tasks)
    assert strong.served.requests == weak.served.requests == len(DEPOT.tasks)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--model", "a", "--model", "b", "--base-url", "x", "--base-url", "y", "--base-url", "z"],
         "3 --base-url for 2 --model"),
        (["--model", "local", "--model", "b", "--base-url", "http://127.0.0.1:1/v1"],
         "--model local runs the embedded model alone"),
        (["--model", "a", "--model", "a", "--base-url", "http://127.0.0.1:1/v1"],
         "a model is named twice"),
        (["--model", "a", "--model", "b", "--base-url", "http://127.0.0.1:1/v1",
          "--until-separated", "--arm", "cot"], "on one model"),
    ],
)  # fmt: skip
def test_bad_model_lists_are_refused_in_one_line(tmp_path, args, says):
    result = CliRunner().invoke(main, ["run", "--arm", "direct", "--out", str(tmp_path), *args])
    assert result.exit_code == 2 and says in result.output, result.output
    assert "Traceback" not in result.output


def test_the_api_takes_several_models_as_functions(tmp_path):
    results = loopbench.Experiment(
        "depot",
        ["direct"],
        models={
            "knows": lambda r: f"Answer: {RIGHT[r.messages[-1].content]}",
            "guesses": lambda r: "Answer: 7",
        },
        out=tmp_path / "r",
    ).run()
    table = results.table()
    assert list(zip(table["model"], table["accuracy"], strict=True)) == [
        ("guesses", 0.0),
        ("knows", 1.0),
    ]


def test_the_report_names_each_arm_after_its_model(tmp_path, two_endpoints):
    _, out, prices = grid(tmp_path, *two_endpoints)
    page = tmp_path / "report.html"
    made = cli("report", str(out), "-o", str(page), "--prices", str(prices))
    assert made.exit_code == 0, made.output
    html = page.read_text()
    for label in ("strong · cot", "strong · direct", "weak · cot", "weak · direct"):
        assert label in html
