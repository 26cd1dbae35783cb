"""Reasoning settings (reasoning_effort, thinking_budget) on an arm, for the run and in an
experiment file: sent only when set, the arm's over the run's, recorded in records, traces
and the response cache's key; an endpoint refusing them stops the grid in one line."""

import json
from collections import Counter
from pathlib import Path

import pytest
from aiohttp import web
from click.testing import CliRunner

import loopbench
from loopbench.harness.arms import parse_arm
from loopbench.harness.cli.main import main
from loopbench.harness.events import RequestEvent
from loopbench.harness.fakes.fake_server import FakeServer
from loopbench.harness.models.cache import canonical_request, request_key
from loopbench.harness.models.types import Message, ModelAPIError, ModelRequest
from loopbench.harness.models.wire import request_body
from loopbench.harness.patterns.base import PatternOptions
from loopbench.harness.patterns.limits import _with_reasoning
from loopbench.harness.reasoning import ReasoningError, check_budget, refusal
from loopbench.harness.results.otlp_spans import _call_attributes
from loopbench.harness.results.reading import read_records
from loopbench.harness.sampling import Sampling, describe


@pytest.fixture
def server():
    with FakeServer() as srv:
        yield srv


class RefusingServer(FakeServer):
    """Answers as the fake does, but 400s a request carrying reasoning_effort as a model
    that does not reason would, naming the setting."""

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        if "reasoning_effort" not in body:
            return await self._answer(body)
        self.served.requests += 1
        self.served.bodies.append(body)
        error = {"message": "Unrecognized request argument supplied: reasoning_effort"}
        return web.json_response({"error": error}, status=400)

    async def _answer(self, body):
        class Replayed:  # the body read already, handed to the fake's own handler
            async def json(self):
                return body

        return await FakeServer.handle(self, Replayed())  # type: ignore[arg-type]


def run(server, out, *args):
    argv = ["run", "--base-url", server.base_url, "--model", "fake", "--tasks", "depot"]
    return CliRunner().invoke(main, [*argv, "--limit", "2", "--out", str(out), "--quiet", *args])


def traced_requests(out: Path) -> dict[str, list[dict]]:
    """Every request each run's trace holds, by the run's arm."""
    arms = {r.run_id: r.arm for r in read_records(out)}
    requests: dict[str, list[dict]] = {}
    for line in (out / "traces.jsonl").read_text().splitlines():
        trace = json.loads(line)
        events = [e["request"] for e in trace["events"] if e["kind"] == "request"]
        requests.setdefault(arms[trace["run_id"]], []).extend(events)
    return requests


def efforts(server) -> Counter:
    return Counter(body.get("reasoning_effort") for body in server.served.bodies)


def test_an_arm_option_is_its_identity_only_when_set():
    plain, low = parse_arm("cot"), parse_arm("cot:reasoning_effort=low")
    assert plain.spec == "cot" and "reasoning_effort" not in plain.resolved
    assert "thinking_budget" not in plain.resolved
    assert low.spec == "cot:reasoning_effort=low" and low.resolved["reasoning_effort"] == "low"
    budget = parse_arm("react:thinking_budget=2048,guard=on")
    assert budget.spec == "react:guard=on,thinking_budget=2048"
    assert budget.resolved["thinking_budget"] == 2048


@pytest.mark.parametrize(
    ("arm", "words"),
    [
        ("cot:reasoning_effort=max", "give one of none, minimal, low, medium, high"),
        ("cot:reasoning_effort=LOW", "give one of none, minimal, low, medium, high"),
        ("direct:thinking_budget=1000", "at least 1024 (Anthropic's minimum)"),
        ("direct:thinking_budget=2k", "at least 1024 (Anthropic's minimum)"),
    ],
)
def test_a_bad_arm_setting_is_one_line_naming_the_arm(server, tmp_path, arm, words):
    result = run(server, tmp_path / "r", "--arm", arm)
    assert result.exit_code == 2
    line = result.output.strip().splitlines()[-1]
    assert f"arm {arm!r}" in line and words in line
    assert server.served.requests == 0


def test_an_arms_effort_goes_on_every_request_of_that_arm_and_no_other(server, tmp_path):
    out = tmp_path / "r"
    result = run(
        server, out, "--arm", "react:reasoning_effort=low", "--arm", "cot", "--arm", "rewoo"
    )
    assert result.exit_code == 0, result.output
    records = read_records(out)
    turns = Counter()
    for record in records:
        turns[record.arm] += record.turns
    assert turns["react:reasoning_effort=low"] >= 2 * 2  # two tasks, a tool call each
    assert efforts(server) == {"low": turns["react:reasoning_effort=low"],
                               None: turns["cot"] + turns["rewoo"]}  # fmt: skip
    traced = traced_requests(out)
    assert {r.get("reasoning_effort") for r in traced["react:reasoning_effort=low"]} == {"low"}
    assert all("reasoning_effort" not in r for arm in ("cot", "rewoo") for r in traced[arm])
    assert all(record.sampling == {} for record in records)
    low = next(r for r in records if r.arm == "react:reasoning_effort=low")
    assert low.options["reasoning_effort"] == "low"
    assert "reasoning_effort" not in next(r for r in records if r.arm == "cot").options


def test_the_run_setting_goes_on_every_request_and_the_arms_own_wins(server, tmp_path):
    out = tmp_path / "r"
    result = run(server, out, "--arm", "cot:reasoning_effort=low", "--arm", "react",
                 "--reasoning-effort", "high")  # fmt: skip
    assert result.exit_code == 0, result.output
    records = read_records(out)
    turns = Counter()
    for record in records:
        turns[record.arm] += record.turns
    assert efforts(server) == {"low": turns["cot:reasoning_effort=low"], "high": turns["react"]}
    assert all(r.sampling == {"reasoning_effort": "high"} for r in records)
    meta = json.loads((out / "experiment.json").read_text())
    assert meta["sampling"] == {"reasoning_effort": "high"}
    assert "sampling: reasoning_effort high" in result.output
    traced = traced_requests(out)
    assert {r["reasoning_effort"] for r in traced["react"]} == {"high"}


def test_a_thinking_budget_alone_is_recorded_but_not_sent_to_an_openai_style_endpoint(
    server, tmp_path
):
    out = tmp_path / "r"
    result = run(server, out, "--arm", "cot:thinking_budget=4096", "--thinking-budget", "2048")
    assert result.exit_code == 0, result.output
    assert server.served.requests > 0
    assert not any("thinking" in key for body in server.served.bodies for key in body)
    assert {r["thinking_budget"] for r in traced_requests(out)["cot:thinking_budget=4096"]} == {
        4096
    }
    assert all(r.sampling == {"thinking_budget": 2048} for r in read_records(out))


def test_a_pipeline_stage_sends_its_own(tmp_path):
    requests: list[ModelRequest] = []

    def model(request: ModelRequest) -> str:
        requests.append(request)
        return "Answer: 84"

    experiment = loopbench.Experiment(
        tasks="depot", arms=["cot>direct:reasoning_effort=high"], model=model,
        out=tmp_path / "r", limit=1, sampling=loopbench.Sampling(thinking_budget=3000),
    )  # fmt: skip
    experiment.run()
    assert [(r.reasoning_effort, r.thinking_budget) for r in requests] == [
        (None, 3000),
        ("high", 3000),
    ]
    requests.clear()
    arm = "pipeline:reasoning_effort=low,stages=cot>direct;reasoning_effort=high"
    experiment = loopbench.Experiment(
        tasks="depot", arms=[arm], model=model, out=tmp_path / "p", limit=1
    )
    experiment.run()
    assert [r.reasoning_effort for r in requests] == ["low", "high"]  # the stage's own wins


def test_a_folder_is_tied_to_its_reasoning_settings(server, tmp_path):
    out = tmp_path / "r"
    assert run(server, out, "--arm", "direct", "--reasoning-effort", "low").exit_code == 0
    other = run(server, out, "--arm", "direct", "--reasoning-effort", "high", "--repeats", "2")
    assert other.exit_code == 2
    assert "sampling reasoning_effort low, not reasoning_effort high" in other.output
    assert "--reasoning-effort" in other.output


def test_an_experiment_file_sets_them_and_refuses_bad_ones_naming_the_field(server, tmp_path):
    file = tmp_path / "grid.toml"
    file.write_text('arms = ["direct"]\nreasoning_effort = "medium"\nthinking_budget = 8192\n')
    assert run(server, tmp_path / "a", "--experiment", str(file)).exit_code == 0
    assert efforts(server) == {"medium": server.served.requests}
    records = read_records(tmp_path / "a")
    assert all(
        r.sampling == {"reasoning_effort": "medium", "thinking_budget": 8192} for r in records
    )
    file.write_text('arms = ["direct"]\nthinking_budget = 512\n')
    result = run(server, tmp_path / "b", "--experiment", str(file))
    assert result.exit_code == 2 and "grid.toml" in result.output
    assert "thinking_budget" in result.output and "at least 1024" in result.output


@pytest.mark.parametrize(
    ("args", "words"),
    [(["--reasoning-effort", "max"], "--reasoning-effort"), (["--thinking-budget", "10"], "1024")],
)
def test_bad_run_settings_are_refused_before_anything_is_sent(server, tmp_path, args, words):
    result = run(server, tmp_path / "r", "--arm", "direct", *args)
    assert result.exit_code == 2 and words in result.output
    assert server.served.requests == 0


def test_the_settings_and_their_checks():
    with pytest.raises(ReasoningError, match="give one of none, minimal"):
        Sampling(reasoning_effort="extreme")  # type: ignore[arg-type]
    for bad in (1023, 0, -5, True, 2048.0, "x"):
        with pytest.raises(ReasoningError, match="at least 1024"):
            check_budget(bad)
    assert check_budget("1024") == 1024
    request = ModelRequest("m", (), reasoning_effort="low")
    applied = Sampling(reasoning_effort="high", thinking_budget=2048).apply(request)
    assert (applied.reasoning_effort, applied.thinking_budget) == ("low", 2048)
    assert describe({"reasoning_effort": "low", "temperature": 0.5}) == (
        "reasoning_effort low, temperature 0.5"
    )


def test_a_requests_own_setting_wins_over_the_arms():
    arm = PatternOptions(reasoning_effort="low", thinking_budget=2048)
    own = _with_reasoning(ModelRequest("m", (), reasoning_effort="high"), arm)
    assert (own.reasoning_effort, own.thinking_budget) == ("high", 2048)
    plain = ModelRequest("m", ())
    assert _with_reasoning(plain, PatternOptions()) is plain


def test_only_the_effort_is_on_the_wire_and_only_when_set():
    plain = ModelRequest("m", (Message("user", "q"),))
    assert "reasoning_effort" not in request_body(plain)
    body = request_body(ModelRequest("m", (), reasoning_effort="minimal", thinking_budget=2048))
    assert body["reasoning_effort"] == "minimal" and "thinking" not in json.dumps(body)


def test_the_cache_key_tells_efforts_apart_and_keeps_older_keys():
    plain = ModelRequest("m", (Message("user", "q"),))
    keys = {
        request_key(canonical_request(ModelRequest("m", plain.messages, **settings), "a#0", 0))
        for settings in (
            {},
            {"reasoning_effort": "low"},
            {"reasoning_effort": "high"},
            {"thinking_budget": 2048},
            {"thinking_budget": 4096},
        )
    }
    assert len(keys) == 5
    canonical = canonical_request(plain, "a#0", 0)
    assert not {"reasoning_effort", "thinking_budget"} & set(canonical)


def test_otlp_spans_carry_them():
    request = {"model": "m", "system": "", "messages": [], "tools": [], "temperature": None,
               "max_output_tokens": None, "stop": [], "reasoning_effort": "low"}  # fmt: skip
    attributes = _call_attributes(RequestEvent(call=1, request=request), None, "m")
    assert attributes["loopbench.request.reasoning_effort"] == "low"
    assert "loopbench.request.thinking_budget" not in attributes


def test_an_endpoint_refusing_the_setting_stops_the_grid_in_one_line(tmp_path):
    out = tmp_path / "r"
    with RefusingServer() as srv:
        first = run(srv, out, "--arm", "direct")
        assert first.exit_code == 0, first.output
        result = run(srv, out, "--arm", "direct", "--arm", "cot:reasoning_effort=low",
                     "--limit", "5", "--repeats", "3")  # fmt: skip
        refused = sum("reasoning_effort" in body for body in srv.served.bodies)
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert errors == [
        "Error: the endpoint refused reasoning_effort low for model fake (HTTP 400: "
        '{"error": {"message": "Unrecognized request argument supplied: reasoning_effort"}}): '
        "it may not be a reasoning model; leave the setting out"
    ]
    assert 1 <= refused <= 16  # the runs in flight at most, not every run of the grid
    records = read_records(out)
    assert len(records) >= 2 and all(r.status == "answered" for r in records)
    assert all(r.arm == "direct" for r in records)


def test_other_failures_are_not_taken_for_a_refusal():
    asked = ModelRequest("m", (), reasoning_effort="high", thinking_budget=2048)
    assert refusal(asked, ModelAPIError("HTTP 400: context length exceeded", 400)) is None
    assert refusal(asked, ModelAPIError("HTTP 500: reasoning failed", 500)) is None
    plain = ModelRequest("m", ())
    assert refusal(plain, ModelAPIError("HTTP 400: reasoning_effort unknown", 400)) is None
    said = refusal(asked, ModelAPIError("HTTP 422: thinking is not supported", 422))
    assert said is not None
    assert str(said).startswith(
        "the endpoint refused reasoning_effort high and thinking_budget 2048 for model m "
        "(HTTP 422: thinking is not supported)"
    )
