"""Sampling settings as run settings: sent only when set, on every request of every arm that
does not set its own, recorded, tied to the folder, shown and compared."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import loopbench
from loopbench.harness.cli.main import main
from loopbench.harness.fakes.fake_server import FakeServer
from loopbench.harness.models.types import ModelRequest
from loopbench.harness.results.reading import read_records
from loopbench.harness.sampling import LEGACY, Sampling, SamplingError, describe, describe_runs

SETTINGS = ("temperature", "top_p", "seed")
#: Arms that send no temperature of their own, and one that does (its chains sample at 0.7).
PLAIN_ARMS = ["direct", "cot", "react_text", "react", "plan", "rewoo", "reflection"]


@pytest.fixture
def server():
    with FakeServer() as srv:
        yield srv


def run(server, out, *args):
    argv = ["run", "--base-url", server.base_url, "--model", "fake", "--limit", "2"]
    result = CliRunner().invoke(main, [*argv, "--out", str(out), "--quiet", *args])
    return result


def sent(server):
    """The sampling settings of every request the server received."""
    return [{k: body[k] for k in SETTINGS if k in body} for body in server.served.bodies]


@pytest.mark.parametrize("arm", PLAIN_ARMS)
def test_the_run_settings_reach_every_request_of_an_arm_without_its_own(server, tmp_path, arm):
    result = run(server, tmp_path / "r", "--arm", arm, "--temperature", "0.3", "--seed", "3",
                 "--top-p", "0.9", "--repeats", "2")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert server.served.requests > 0
    assert all(s == {"temperature": 0.3, "top_p": 0.9, "seed": 3} for s in sent(server))
    records = read_records(tmp_path / "r")
    assert {json.dumps(r.sampling, sort_keys=True) for r in records} == {
        '{"seed": 3, "temperature": 0.3, "top_p": 0.9}'
    }
    meta = json.loads((tmp_path / "r" / "experiment.json").read_text())
    assert meta["sampling"] == {"temperature": 0.3, "top_p": 0.9, "seed": 3}
    assert "sampling: seed 3, temperature 0.3, top_p 0.9" in result.output


@pytest.mark.parametrize("arm", PLAIN_ARMS)
def test_without_settings_nothing_is_sent(server, tmp_path, arm):
    result = run(server, tmp_path / "r", "--arm", arm)
    assert result.exit_code == 0, result.output
    assert server.served.requests > 0 and all(s == {} for s in sent(server))
    assert all(r.sampling == {} for r in read_records(tmp_path / "r"))
    assert "sampling: no sampling settings sent (the endpoint's defaults)" in result.output


def test_an_arm_with_its_own_temperature_keeps_it(server, tmp_path):
    result = run(server, tmp_path / "r", "--arm", "self_consistency:samples=3",
                 "--temperature", "0.2", "--seed", "5")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert all(s == {"temperature": 0.7, "seed": 5} for s in sent(server))


def test_a_folder_is_tied_to_its_sampling_settings(server, tmp_path):
    out = tmp_path / "r"
    assert run(server, out, "--arm", "direct", "--temperature", "0.7").exit_code == 0
    other = run(server, out, "--arm", "direct", "--repeats", "2")
    assert other.exit_code == 2
    assert "sampling temperature 0.7, not no sampling settings sent" in other.output
    assert (
        run(server, out, "--arm", "direct", "--temperature", "0.7", "--repeats", "2").exit_code == 0
    )
    assert len(read_records(out)) == 4


def test_a_folder_written_before_sampling_settings_was_sent_temperature_0(server, tmp_path):
    out = tmp_path / "r"
    assert run(server, out, "--arm", "direct").exit_code == 0
    meta = json.loads((out / "experiment.json").read_text())
    del meta["sampling"]
    (out / "experiment.json").write_text(json.dumps(meta))
    refused = run(server, out, "--arm", "cot")
    assert refused.exit_code == 2 and "as loopbench sent before sampling" in refused.output
    assert run(server, out, "--arm", "cot", "--temperature", "0").exit_code == 0


def test_an_experiment_file_sets_them_and_flags_win(server, tmp_path):
    file = tmp_path / "grid.toml"
    file.write_text('arms = ["direct"]\ntemperature = 0.4\ntop_p = 0.5\nseed = 9\n')
    assert run(server, tmp_path / "a", "--experiment", str(file)).exit_code == 0
    assert all(s == {"temperature": 0.4, "top_p": 0.5, "seed": 9} for s in sent(server))
    server.served.bodies.clear()
    assert run(server, tmp_path / "b", "--experiment", str(file), "--seed", "1").exit_code == 0
    assert all(s == {"temperature": 0.4, "top_p": 0.5, "seed": 1} for s in sent(server))


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--temperature", "-1"], "--temperature"),
        (["--temperature", "nan"], "--temperature"),
        (["--top-p", "0"], "--top-p"),
        (["--top-p", "1.5"], "--top-p"),
        (["--seed", "x"], "--seed"),
    ],
)
def test_impossible_settings_are_refused_before_anything_is_sent(server, tmp_path, args, words):
    result = run(server, tmp_path / "r", "--arm", "direct", *args)
    assert result.exit_code == 2 and words in result.output
    assert server.served.requests == 0


def test_an_impossible_setting_in_a_file_names_the_file_and_field(server, tmp_path):
    file = tmp_path / "grid.toml"
    file.write_text('arms = ["direct"]\ntop_p = 2.0\n')
    result = run(server, tmp_path / "r", "--experiment", str(file))
    assert result.exit_code == 2 and "grid.toml" in result.output and "top_p" in result.output
    assert server.served.requests == 0


def test_the_api_sends_them_too(tmp_path):
    requests: list[ModelRequest] = []

    def model(request: ModelRequest) -> str:
        requests.append(request)
        return "Answer: 84"

    experiment = loopbench.Experiment(
        tasks="depot", arms=["direct", "cot"], model=model, out=tmp_path / "r", limit=2,
        sampling=loopbench.Sampling(temperature=0.5, seed=2),
    )  # fmt: skip
    experiment.run()
    assert requests and all((r.temperature, r.top_p, r.seed) == (0.5, None, 2) for r in requests)
    assert all(r.sampling == {"temperature": 0.5, "seed": 2} for r in experiment.run().records())


def test_settings_no_endpoint_takes_are_refused():
    for bad in ({"temperature": -0.1}, {"top_p": 0.0}, {"top_p": 1.01}, {"seed": 1.5}):
        with pytest.raises(SamplingError):
            Sampling(**bad)
    request = ModelRequest("m", (), temperature=0.9)
    applied = Sampling(temperature=0.1, top_p=0.5).apply(request)
    assert (applied.temperature, applied.top_p, applied.seed) == (0.9, 0.5, None)


def test_sampling_in_words_old_and_mixed():
    assert describe(None) == ("temperature 0 (as loopbench sent before sampling was a run setting)")
    assert describe(LEGACY) == "temperature 0"
    assert describe({}) == "no sampling settings sent (the endpoint's defaults)"
    mixed = describe_runs([{"temperature": 0.7}, {"temperature": 0.7}, {}])
    assert mixed.startswith("differs between runs: ") and "temperature 0.7" in mixed


def test_compare_names_sampling_that_differs(server, tmp_path):
    before, after = tmp_path / "b", tmp_path / "a"
    assert run(server, before, "--arm", "direct").exit_code == 0
    assert run(server, after, "--arm", "direct", "--temperature", "0.8").exit_code == 0
    result = CliRunner().invoke(main, ["compare", str(before), str(after), "--format", "json"])
    payload = json.loads(result.stdout)
    assert payload["sampling"] == {
        "baseline": "no sampling settings sent (the endpoint's defaults)",
        "candidate": "temperature 0.8",
        "differs": True,
    }
    text = CliRunner().invoke(main, ["compare", str(before), str(after)]).stdout
    assert "Sampling differs: the baseline was sent no sampling settings" in text


def test_repeats_that_agree_on_every_task_are_said_to_add_no_information(server, tmp_path):
    """The fake server answers the same question the same way: repeats are one sample."""
    out = tmp_path / "r"
    result = run(server, out, "--arm", "direct", "--arm", "cot", "--repeats", "3")
    assert result.exit_code == 0, result.output
    assert "Repeats add no information" in result.output
    table = loopbench.load(out).table()
    assert list(table["repeats_agree"]) == [1.0, 1.0]


def test_repeats_that_differ_on_one_task_are_not_flagged(tmp_path):
    """The first task is answered alike every time, the second not: the repeats still
    add information."""
    asked: dict[str, int] = {}
    fixed = loopbench.load_taskset("depot").tasks[0].question

    def model(request: ModelRequest) -> str:
        question = request.messages[0].content
        asked[question] = asked.get(question, 0) + 1
        return "Answer: 84" if question == fixed else f"Answer: {asked[question]}"

    out = Path(tmp_path / "r")
    loopbench.Experiment(
        tasks="depot", arms=["direct"], repeats=3, limit=2, out=out, concurrency=1,
        model=model,
    ).run()  # fmt: skip
    answers = {}
    for record in read_records(out):
        answers.setdefault(record.task_id, set()).add(record.answer)
    assert sorted(len(a) for a in answers.values()) == [1, 3]
    assert list(loopbench.load(out).table()["repeats_agree"]) == [0.0]
    assert "Repeats" not in loopbench.load(out).render()
