"""``loopbench grade --regrade RESULTS``: the runs whose judge failed graded again, each in a
record superseding the old one, the runs' own fields untouched and no run made again."""

import json
import shutil

import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.harness.fakes.fake_server import FakeServer
from loopbench.harness.results.reading import read_records
from tests.harness.judge_fixtures import JudgeScript, register, runs_reply, write_set
from tests.harness.test_judge_runs import PRICES


def cli(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def endpoints():
    script = JudgeScript()
    with FakeServer(runs_reply) as runs, FakeServer(script) as judge:
        yield runs, judge, script


def grid(tmp_path, runs, judge, *more):
    register()
    prices = tmp_path / "prices.toml"
    prices.write_text(PRICES)
    out = tmp_path / "r"
    ran = cli(
        "run", "--out", str(out), "--quiet", "--prices", str(prices),
        "--tasks", str(write_set(tmp_path / "set")),
        "--model", "runner", "--base-url", runs.base_url,
        "--judge-model", "judge-big", "--judge-base-url", judge.base_url,
        "--arm", "direct", "--arm", "cot", "--max-retries", "1", *more,
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    return out


def regrade(tmp_path, out, judge, *more):
    return cli(
        "grade", "--regrade", str(out), "--tasks", str(tmp_path / "set"),
        "--judge-base-url", judge.base_url, "--prices", str(tmp_path / "prices.toml"),
        "--max-retries", "0", *more,
    )  # fmt: skip


def test_regrading_grades_the_failed_verdicts_and_makes_no_run_again(
    registries, tmp_path, endpoints
):
    runs, judge, script = endpoints
    out = grid(tmp_path, runs, judge)
    before = {r.run_id: r for r in read_records(out)}
    asked_runs, asked_judge = runs.served.requests, judge.served.requests
    script.mended = True
    done = regrade(tmp_path, out, judge)
    assert done.exit_code == 0, done.output
    assert "regraded 4 runs; none is left without a verdict" in done.output
    assert runs.served.requests == asked_runs  # no run made again: nothing for the runs
    assert judge.served.requests == asked_judge + 4
    after = read_records(out)
    assert len(after) == 8 and all(r.grade_status is None for r in after)
    assert {r.run_id for r in read_records(out, superseded=True)} <= set(before)
    traces = {
        line["run_id"]: line["events"]
        for line in map(json.loads, (out / "traces.jsonl").read_text().splitlines())
    }
    for new in (r for r in after if r.supersedes):
        old = before[new.supersedes]
        assert old.grade_status is not None and new.correct is True
        same = ("status", "tokens_in", "tokens_out", "cost_usd", "turns", "answer", "arm")
        assert all(getattr(new, f) == getattr(old, f) for f in same)
        assert new.judge_tokens_in > (old.judge_tokens_in or 0)
        assert new.judge_cost_usd == pytest.approx(
            new.judge_tokens_in * 2e-6 + new.judge_tokens_out * 20e-6
        )
        events = traces[new.run_id]
        assert events[: len(traces[old.run_id])] == traces[old.run_id]
        assert events[-1]["kind"] == "grading" and events[-1]["status"] == "regraded"
    again = regrade(tmp_path, out, judge)
    assert again.exit_code == 0 and "nothing to regrade" in again.output


def test_a_judge_failing_again_leaves_the_runs_marked(registries, tmp_path, endpoints):
    runs, judge, _ = endpoints
    out = grid(tmp_path, runs, judge)
    first = {r.task_id: r for r in read_records(out) if r.grade_status}
    done = regrade(tmp_path, out, judge)
    assert done.exit_code == 0, done.output
    assert "regraded 0 runs; 4 still without a verdict" in done.output
    marked = [r for r in read_records(out) if r.grade_status]
    assert len(marked) == 4 and all(r.supersedes for r in marked)
    assert {r.grade_status for r in marked} == {"judge_api_error", "judge_unreadable"}
    garbled = next(r for r in marked if r.task_id == "garbled")
    assert garbled.judge_tokens_in > first["garbled"].judge_tokens_in  # both attempts paid


def test_with_the_cache_the_same_regrade_again_replays_the_judge(registries, tmp_path, endpoints):
    runs, judge, script = endpoints
    cache = str(tmp_path / "cache")
    out = grid(tmp_path, runs, judge, "--cache", cache)
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    script.mended = True
    asked = judge.served.requests
    first = regrade(tmp_path, out, judge, "--cache", cache)
    assert "regraded 4 runs" in first.output
    assert judge.served.requests == asked + 4  # the unreadable reply asked afresh
    second = regrade(tmp_path, copy, judge, "--cache", cache)
    assert "regraded 4 runs" in second.output
    assert judge.served.requests == asked + 4  # replayed: nothing sent, nothing paid
    assert [r.correct for r in read_records(copy)] == [r.correct for r in read_records(out)]


def test_regrading_a_folder_with_every_verdict_says_so(registries, tmp_path, endpoints):
    runs, _, _ = endpoints
    register()
    out = tmp_path / "r"
    ran = cli(
        "run", "--out", str(out), "--quiet", "--tasks", "depot", "--limit", "1", "--arm", "direct",
        "--model", "runner", "--base-url", runs.base_url,
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    done = cli("grade", "--regrade", str(out))
    assert done.exit_code == 0
    assert "nothing to regrade" in done.output


def test_regrading_with_another_judge_or_no_folder_is_refused(registries, tmp_path, endpoints):
    runs, judge, _ = endpoints
    out = grid(tmp_path, runs, judge)
    other = regrade(tmp_path, out, judge, "--judge-model", "judge-small")
    assert other.exit_code == 2
    assert "graded by another judge" in other.output and "judge-small" in other.output
    assert len(other.output.strip().splitlines()) == 1
    missing = cli("grade", "--regrade", str(tmp_path / "nowhere"))
    assert missing.exit_code == 2 and "cannot be read" in missing.output
    assert not (tmp_path / "nowhere").exists()
    wrong_set = cli("grade", "--regrade", str(out), "--tasks", "depot")
    assert wrong_set.exit_code == 2 and "were made on 'rubrics'" in wrong_set.output


def test_a_run_whose_task_changed_since_is_left_as_it_was(registries, tmp_path, endpoints):
    runs, judge, script = endpoints
    out = grid(tmp_path, runs, judge)
    tasks = tmp_path / "set" / "tasks.jsonl"
    tasks.write_text(tasks.read_text().replace("Explain down.", "Explain down again."))
    script.mended = True
    done = regrade(tmp_path, out, judge)
    assert done.exit_code == 0, done.output
    assert "regraded 2 runs" in done.output
    assert "2 runs left as they were" in done.output
    assert {r.task_id for r in read_records(out) if r.grade_status} == {"down"}
