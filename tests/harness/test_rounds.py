"""`run --until-separated` through the runner and the CLI: rounds stop once the arms are
told apart, a resumed run replays the same decisions, and the table counts the runs not
spent."""

import asyncio
import hashlib
import json

import pytest
from click.testing import CliRunner

from loopbench.harness.arms import parse_arms
from loopbench.harness.cli.main import main
from loopbench.harness.fakes.fake_server import FakeServer, Reply
from loopbench.harness.grid import Grid
from loopbench.harness.models.scripted import FunctionModel
from loopbench.harness.results.reading import read_records
from loopbench.harness.results.records import RunRecord
from loopbench.harness.results.store import ResultsFolder
from loopbench.harness.rounds import _current, run_until_separated
from loopbench.harness.stats.separation import RULE_FILE, SeparationRule, StoppedRun
from loopbench.tasks.loading import load_taskset
from tests.depot_answers import RIGHT

DEPOT = load_taskset("depot")


def answering(chance_by_arm):
    """Right with a chance set per arm (told apart by a phrase of its system prompt), drawn
    from a hash of the question, the arm and how often it was asked: the same every time."""
    asked: dict[tuple[str, str], int] = {}

    def answer(system, question):
        arm = next(phrase for phrase in chance_by_arm if phrase in system)
        nth = asked[(arm, question)] = asked.get((arm, question), 0) + 1
        draw = int(hashlib.sha256(f"{arm}|{question}|{nth}".encode()).hexdigest()[:8], 16)
        right = draw / 16**8 < chance_by_arm[arm]
        return f"Answer: {RIGHT[question] if right else 'I do not know'}"

    return answer


#: Phrases of direct's and cot's system prompts.
DIRECT, COT = "Reply with the answer only", "step by step"


def model(chance_by_arm):
    answer = answering(chance_by_arm)
    return FunctionModel(lambda r: answer(r.system, r.messages[-1].content))


def run(tmp_path, arms, fn, rule):
    meta = {"task_set": "depot", "model": "m", "base_url": "", "fingerprint": DEPOT.fingerprint()}
    with ResultsFolder.open(tmp_path / "r", meta) as folder:
        result, state = asyncio.run(
            run_until_separated(Grid(DEPOT, parse_arms(arms), 1, "m"), rule, fn, folder)
        )
    return result, state, read_records(tmp_path / "r")


def test_a_thirty_point_gap_stops_before_the_maximum(tmp_path):
    rule = SeparationRule(max_repeats=10)
    result, state, records = run(tmp_path, ["direct", "cot"], model({DIRECT: 0.9, COT: 0.5}), rule)
    assert state.rounds < rule.max_repeats
    assert state.decisions["cot"].look.verdict == "worse"
    assert result.ran == len(records) == 2 * len(DEPOT.tasks) * state.rounds


def test_identical_arms_stop_for_futility_before_the_last_round(tmp_path):
    """No gap of the margin is likely on twelve tasks: the run stops early, nothing declared
    different, and the table says why."""
    rule = SeparationRule(max_repeats=10)
    _, state, records = run(tmp_path, ["direct", "cot"], model({DIRECT: 0.5, COT: 0.5}), rule)
    (decision,) = state.decisions.values()
    assert decision.look.verdict == "futile" and decision.round == state.rounds < 10
    # Twelve tasks: too few for a gap of the margin by the last round (conditional power).
    assert decision.look.conditional_power < rule.futility
    assert len(records) == 2 * len(DEPOT.tasks) * state.rounds
    stopped = StoppedRun(rule, ["direct", "cot"], [task.id for task in DEPOT.tasks])
    assert f"no gap of the margin likely against {decision.against} at round {state.rounds}" in (
        stopped.footnote(records)
    )


def test_identical_arms_without_futility_run_every_round_undeclared(tmp_path):
    rule = SeparationRule(max_repeats=4, futility=0.0)
    _, state, records = run(tmp_path, ["direct", "cot"], model({DIRECT: 0.5, COT: 0.5}), rule)
    assert state.rounds == 4 and not state.decisions
    assert len(records) == 2 * len(DEPOT.tasks) * 4


def test_an_arm_stopped_early_runs_no_more_rounds(tmp_path):
    """cot stops at once; the two alike arms go on without it."""
    rule = SeparationRule(max_repeats=5)
    arms = ["direct", "direct:max_steps=5", "cot"]
    _, state, records = run(tmp_path, arms, model({DIRECT: 0.7, COT: 0.0}), rule)
    stopped_at = state.decisions["cot"].round
    assert stopped_at < state.rounds
    assert max(r.repeat for r in records if r.arm == "cot") == stopped_at - 1
    assert max(r.repeat for r in records if r.arm == "direct") == state.rounds - 1


def test_the_folder_is_read_once_and_each_round_replays_what_it_holds(tmp_path, monkeypatch):
    reads, real = [], ResultsFolder.records
    monkeypatch.setattr(ResultsFolder, "records", lambda self: reads.append(1) or real(self))
    rule = SeparationRule(max_repeats=4, futility=0.0)
    _, state, records = run(tmp_path, ["direct", "cot"], model({DIRECT: 0.5, COT: 0.5}), rule)
    assert state.rounds == 4 and len(reads) == 1
    stopped = StoppedRun(rule, ["direct", "cot"], [task.id for task in DEPOT.tasks])
    assert stopped.replay(records) == state  # the records held are the folder's


def test_a_resumed_run_replays_the_decisions_and_runs_nothing_more(tmp_path):
    rule = SeparationRule(max_repeats=10)
    fn = model({DIRECT: 0.9, COT: 0.5})
    _, first, records = run(tmp_path, ["direct", "cot"], fn, rule)
    again, second, _ = run(tmp_path, ["direct", "cot"], fn, rule)
    assert again.ran == 0 and again.skipped == len(records)
    assert second.decisions == first.decisions


def cli(args):
    return CliRunner().invoke(main, args, catch_exceptions=False)


def test_the_cli_stops_early_and_the_table_counts_the_runs_not_spent(tmp_path):
    answer = answering({DIRECT: 0.9, COT: 0.5})

    def responder(body):
        messages = body["messages"]
        return Reply(answer(messages[0]["content"], messages[-1]["content"]))

    out = str(tmp_path / "r")
    with FakeServer(responder) as server:
        ran = cli(
            [
                "run",
                "--base-url",
                server.base_url,
                "--model",
                "fake",
                "--out",
                out,
                "--quiet",
                "--arm",
                "direct",
                "--arm",
                "cot",
                "--until-separated",
                "--max-repeats",
                "10",
            ]
        )
    assert ran.exit_code == 0, ran.output
    rule = json.loads((tmp_path / "r" / RULE_FILE).read_text())["rule"]
    assert rule == {
        "alpha": 0.05,
        "margin": 0.05,
        "max_repeats": 10,
        "boundary": "pocock",
        "futility": 0.2,
        "futility_boundary": "likelihood-two-gaps",
    }
    made = len(read_records(out))
    fixed = 2 * len(DEPOT.tasks) * 10
    assert made < fixed
    note = f"{made} runs made, {fixed - made} not spent"
    assert note in ran.output and "- cot: worse than direct at round" in ran.output
    table = cli(["table", out])
    assert note in table.output and "- cot: worse than direct at round" in table.output


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--max-repeats", "3"], "--max-repeats applies only with --until-separated"),
        (["--margin", "0.1"], "--margin applies only with --until-separated"),
        (["--until-separated", "--repeats", "3"], "give --max-repeats instead of --repeats"),
        (["--until-separated", "--alpha", "1"], "--alpha"),
    ],
)
def test_stopping_options_out_of_place_are_refused(tmp_path, args, says):
    result = CliRunner().invoke(
        main, ["run", "--arm", "direct", "--arm", "cot", "--out", str(tmp_path), *args]
    )
    assert result.exit_code == 2 and says in result.output
    assert not list(tmp_path.iterdir())


def test_one_arm_cannot_be_separated(tmp_path):
    result = CliRunner().invoke(main, ["run", "--arm", "direct", "--until-separated"])
    assert result.exit_code == 2 and "at least two --arm" in result.output


def test_a_record_a_round_supersedes_leaves_the_records_held():
    failed = RunRecord(run_id="a", arm="direct", task_id="t", repeat=0, status="api_error")
    other = failed.model_copy(update={"run_id": "b", "task_id": "u"})
    again = failed.model_copy(update={"run_id": "c", "status": "answered", "supersedes": "a"})
    assert _current([failed, other], [again]) == [other, again]
