"""The judge's endpoint wired into a grid: its calls on their own loopback endpoint, counted
and priced apart from the runs', its sampling pinned and recorded, and a judge that fails a
grading status of its own, never the pattern's."""

import json

import pytest
from click.testing import CliRunner

import loopbench
from loopbench.harness.cli.main import main
from loopbench.harness.config import JudgeConfig, load_experiment
from loopbench.harness.fakes.fake_server import FakeServer
from loopbench.harness.judge_endpoint import judge_sampling
from loopbench.harness.results.identity import identity_changes
from loopbench.harness.results.reading import read_records
from tests.harness.judge_fixtures import JudgeScript, register, runs_reply, write_set

PRICES = """as_of = "2026-12-01"
[models.runner]
input = 1.0
cached_input = 0.1
output = 10.0
[models.judge-big]
input = 2.0
cached_input = 0.2
output = 20.0
"""


def cli(*args, env=None):
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


@pytest.fixture
def endpoints():
    script = JudgeScript()
    with FakeServer(runs_reply) as runs, FakeServer(script) as judge:
        yield runs, judge, script


def grid(tmp_path, runs, judge, *more):
    register()
    prices = tmp_path / "prices.toml"
    prices.write_text(PRICES)
    tasks = write_set(tmp_path / "set")
    out = tmp_path / "r"
    ran = cli(
        "run", "--out", str(out), "--quiet", "--prices", str(prices), "--tasks", str(tasks),
        "--model", "runner", "--base-url", runs.base_url,
        "--judge-model", "judge-big", "--judge-base-url", judge.base_url,
        "--arm", "direct", "--arm", "cot", "--max-retries", "1", *more,
    )  # fmt: skip
    return ran, out


def test_the_judges_tokens_are_what_its_endpoint_served_and_none_are_the_runs(
    registries, tmp_path, endpoints
):
    runs, judge, _ = endpoints
    ran, out = grid(tmp_path, runs, judge)
    assert ran.exit_code == 0, ran.output
    records = read_records(out)
    assert len(records) == 8
    assert sum(r.judge_tokens_in or 0 for r in records) == judge.served.prompt_tokens
    assert sum(r.judge_tokens_out or 0 for r in records) == judge.served.completion_tokens
    assert sum(r.tokens_in for r in records) == runs.served.prompt_tokens
    assert sum(r.tokens_out for r in records) == runs.served.completion_tokens
    for r in records:
        assert r.cost_usd == pytest.approx(r.tokens_in * 1e-6 + r.tokens_out * 10e-6)
        assert r.judge_cost_usd == pytest.approx(
            (r.judge_tokens_in or 0) * 2e-6 + (r.judge_tokens_out or 0) * 20e-6
        )
    # The judge's endpoint saw only the judge's requests, the runs' only theirs.
    assert all(b["model"] == "judge-big" for b in judge.served.bodies)
    assert all(b["model"] == "runner" for b in runs.served.bodies)


def test_a_judge_that_fails_is_a_grading_status_and_the_patterns_outcome_stands(
    registries, tmp_path, endpoints
):
    runs, judge, _ = endpoints
    ran, out = grid(tmp_path, runs, judge)
    assert ran.exit_code == 0, ran.output
    by_task = {}
    for r in read_records(out):
        by_task.setdefault(r.task_id, []).append(r)
    for tid, status, correct in [
        ("good", None, True),
        ("bad", None, False),
        ("down", "judge_api_error", None),
        ("garbled", "judge_unreadable", None),
    ]:
        for r in by_task[tid]:
            assert (r.status, r.grade_status, r.correct) == ("answered", status, correct), tid
    down = by_task["down"][0]
    assert down.judge_tokens_in == 0 and down.retries == 0  # the runs' calls never retried
    garbled = by_task["garbled"][0]
    assert garbled.judge_tokens_in and garbled.judge_tokens_out  # a failed verdict still paid
    traces = [json.loads(line) for line in (out / "traces.jsonl").read_text().splitlines()]
    events = {t["run_id"]: t["events"] for t in traces}
    grading = [e for e in events[down.run_id] if e["kind"] == "grading"]
    assert grading and grading[0]["status"] == "judge_api_error"
    assert not any(e["kind"] == "pattern_error" for e in events[down.run_id])


def test_the_judges_sampling_is_pinned_sent_and_recorded(registries, tmp_path, endpoints):
    runs, judge, _ = endpoints
    ran, out = grid(tmp_path, runs, judge, "--seed", "7", "--temperature", "0.9")
    assert ran.exit_code == 0, ran.output
    assert {(b["temperature"], b["seed"]) for b in judge.served.bodies} == {(0.0, 7)}
    assert {b["temperature"] for b in runs.served.bodies} == {0.9}
    meta = json.loads((out / "experiment.json").read_text())
    identity = meta["grader"]["identity"]
    assert identity["judge_model"] == "judge-big"
    assert identity["judge_sampling"] == {"temperature": 0.0, "seed": 7}


def test_without_a_seed_the_judge_is_sent_seed_0(registries, tmp_path, endpoints):
    runs, judge, _ = endpoints
    ran, _ = grid(tmp_path, runs, judge)
    assert ran.exit_code == 0, ran.output
    assert {(b["temperature"], b["seed"]) for b in judge.served.bodies} == {(0.0, 0)}


def test_a_folder_graded_by_another_judge_takes_no_more_runs(registries, tmp_path, endpoints):
    runs, judge, _ = endpoints
    ran, out = grid(tmp_path, runs, judge)
    assert ran.exit_code == 0, ran.output
    again = cli(
        "run", "--out", str(out), "--quiet", "--tasks", str(tmp_path / "set"),
        "--model", "runner", "--base-url", runs.base_url,
        "--judge-model", "judge-small", "--judge-base-url", judge.base_url, "--arm", "direct",
    )  # fmt: skip
    assert again.exit_code == 2
    [refused] = [line for line in again.output.splitlines() if line.startswith("Error")]
    assert "judge_model 'judge-big' before, 'judge-small' now" in refused
    same = cli(
        "run", "--out", str(out), "--quiet", "--tasks", str(tmp_path / "set"),
        "--model", "runner", "--base-url", runs.base_url, "--max-retries", "1",
        "--judge-model", "judge-big", "--judge-base-url", judge.base_url, "--arm", "direct",
    )  # fmt: skip
    assert same.exit_code == 0, same.output  # the same judge resumes


def test_a_folder_written_before_identities_resumes():
    grader = {"name": "exact", "options": {}}
    assert identity_changes({"grader": grader}, {"grader": grader}) == []
    judged = {**grader, "identity": {"judge_model": "a"}}
    assert identity_changes({"grader": grader}, {"grader": judged})
    assert identity_changes({"grader": judged}, {"grader": judged}) == []


def test_a_judge_base_url_without_a_model_is_refused_in_one_line(tmp_path):
    ran = cli("run", "--judge-base-url", "http://127.0.0.1:9/v1", "--arm", "direct")
    assert ran.exit_code == 2
    assert "needs --judge-model" in ran.output
    assert len(ran.output.strip().splitlines()) == 1
    experiment = tmp_path / "e.toml"
    experiment.write_text('arms = ["direct"]\n[judge]\nbase_url = "http://127.0.0.1:9/v1"\n')
    ran = cli("run", "--experiment", str(experiment))
    assert ran.exit_code == 2 and "needs --judge-model" in ran.output
    assert str(experiment) in ran.output


def test_a_judge_grader_without_a_judge_is_refused_before_any_request(
    registries, tmp_path, endpoints
):
    runs, _, _ = endpoints
    register()
    ran = cli(
        "run", "--out", str(tmp_path / "r"), "--quiet", "--tasks", str(write_set(tmp_path / "s")),
        "--model", "runner", "--base-url", runs.base_url, "--arm", "direct",
    )  # fmt: skip
    assert ran.exit_code == 2 and "needs --judge-model" in ran.output
    assert runs.served.requests == 0


def test_the_judge_of_an_experiment_file_and_its_key_kept_out_of_every_file(
    registries, tmp_path, endpoints
):
    runs, judge, _ = endpoints
    register()
    tasks = write_set(tmp_path / "set")
    experiment = tmp_path / "e.toml"
    experiment.write_text(
        f'arms = ["direct"]\ntasks = "{tasks}"\nmax_retries = 0\n'
        f'[judge]\nmodel = "judge-big"\nbase_url = "{judge.base_url}"\n'
        'api_key_env = "JUDGE_KEY"\n'
    )
    secret = "sk-judge-0123456789abcdef"
    out = tmp_path / "r"
    ran = CliRunner().invoke(
        main,
        ["run", "--experiment", str(experiment), "--out", str(out), "--quiet",
         "--model", "runner", "--base-url", runs.base_url],
        env={"JUDGE_KEY": secret},
        catch_exceptions=False,
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    assert secret not in ran.output
    assert judge.served.requests == 4
    for path in out.rglob("*"):
        if path.is_file():
            assert secret not in path.read_text(errors="replace"), path


def test_anthropics_judge_is_sent_no_seed():
    assert judge_sampling("anthropic", 5) == {"temperature": 0.0}
    assert judge_sampling("openai", None) == {"temperature": 0.0, "seed": 0}


def test_the_python_api_takes_a_judge_function(registries, tmp_path):
    register()
    asked = []

    def judge_fn(request):
        asked.append(request)
        return "PASS" if "rubric good" in request.messages[-1].content else "FAIL"

    experiment = loopbench.Experiment(
        tasks=str(write_set(tmp_path / "set")),
        arms=["direct"],
        model=lambda request: "Answer: it",
        judge=judge_fn,
        judge_model="judge-big",
        out=tmp_path / "r",
        sampling=loopbench.Sampling(seed=3),
    )
    records = experiment.run().records()
    assert {r.task_id: r.correct for r in records} == {
        "good": True,
        "bad": False,
        "down": False,
        "garbled": False,
    }
    assert all(r.judge_tokens_in is not None for r in records)
    assert {(q.temperature, q.seed, q.model) for q in asked} == {(0.0, 3, "judge-big")}


def test_a_judge_grades_the_final_answer_only(registries, tmp_path, endpoints):
    runs, judge, _ = endpoints
    register()
    ran = cli(
        "run", "--out", str(tmp_path / "r"), "--quiet", "--tasks", str(write_set(tmp_path / "s")),
        "--model", "runner", "--base-url", runs.base_url, "--max-retries", "1",
        "--judge-model", "judge-big", "--judge-base-url", judge.base_url,
        "--arm", "self_consistency:samples=3",
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    records = read_records(tmp_path / "r")
    assert {r.status for r in records} == {"answered"}
    assert all(r.first_correct is None for r in records)
    assert judge.served.requests == 5  # one a run, and the failing one's retry


def test_a_judge_on_ray_workers_is_refused():
    ran = cli("run", "--executor", "ray", "--judge-model", "j", "--arm", "direct")
    assert ran.exit_code == 2 and "--executor local" in ran.output


def test_a_judge_flag_overrides_one_key_of_the_files_judge(tmp_path):
    experiment = tmp_path / "e.toml"
    experiment.write_text(
        'arms = ["direct"]\n[judge]\nmodel = "judge-big"\nbase_url = "http://127.0.0.1:9/v1"\n'
    )
    config = load_experiment(experiment).merged({"judge": {"model": "judge-small"}})
    assert config.judge == JudgeConfig(model="judge-small", base_url="http://127.0.0.1:9/v1")
