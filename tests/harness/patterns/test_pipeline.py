"""pipeline: stages chained, each given the question and the answer before it, in one trace,
within the pipeline's limits."""

import asyncio
import json

import pytest
from click.testing import CliRunner

from loopbench.harness.arms import ArmError, arm_identity, parse_arm
from loopbench.harness.cli.main import main
from loopbench.harness.config import load_experiment
from loopbench.harness.events import LimitReachedEvent, RequestEvent, StageEvent, ToolCallEvent
from loopbench.harness.fakes.fake_server import FakeServer
from loopbench.harness.models.counting import CountingClient
from loopbench.harness.models.scripted import FunctionModel, text_reply
from loopbench.harness.models.scripted import tool_reply as call
from loopbench.harness.models.types import ModelResponse, Usage
from loopbench.harness.patterns.base import RunContext
from loopbench.harness.patterns.registry import UnknownPattern
from loopbench.harness.results.reading import read_records
from loopbench.harness.runner import Job, Runner
from loopbench.harness.trace import Trace

from .helpers import TASKS, below_floor

QUESTION = "How many years after the Eiffel Tower did the Sydney Opera House open?"
#: A plan of many steps: plan_execute spends every call its max_steps gives it.
LONG_PLAN = {"steps": [{"id": i, "description": f"Look up fact {i}."} for i in range(1, 11)]}


def run(spec, reply, question=QUESTION):
    """Arm ``spec`` run as the runner runs it, against ``reply``: (outcome, requests, trace)."""
    arm = parse_arm(spec)
    model = FunctionModel(reply, keep_requests=True)
    trace = Trace()
    counted = CountingClient(model, trace)
    ctx = RunContext(question, counted, "m", TASKS.toolset(), trace, prompts=arm.prompts)
    outcome = asyncio.run(arm.build().run(ctx))
    return outcome, model.requests, trace


def numbered(request):
    """Each call's answer names the call: 'Answer: result1', 'Answer: result2', ..."""
    numbered.calls += 1
    return f"Answer: result{numbered.calls}"


def busy(request):
    """Plans ten steps and looks things up until cut off; a text ReAct finishes at once; a
    request with no tools gets an answer."""
    if request.tool_choice:
        return call((request.tool_choice, LONG_PLAN))
    if request.tools:
        return call(("lookup", {"title": "Paris"}))
    if "Action:" in request.system:
        return "Thought: done.\nAction: finish[84]"
    return "84"


def answering(request):
    """Looks one thing up, then answers."""
    last = request.messages[-1]
    observed = last.role == "tool" or last.content.startswith("Observation:")
    if request.tools:
        return "84" if observed else call(("lookup", {"title": "Paris"}))
    if observed:
        return "Thought: done.\nAction: finish[84]"
    return "Thought: look it up.\nAction: lookup[Paris]"


def test_each_stage_is_given_the_question_and_the_previous_stages_answer():
    numbered.calls = 0
    outcome, requests, _ = run("pipeline:stages=direct>cot>direct", numbered)
    given = [r.messages[-1].content for r in requests]
    assert given[0] == QUESTION
    assert QUESTION in given[1] and "result1" in given[1]
    assert QUESTION in given[2] and "result2" in given[2] and "result1" not in given[2]
    assert (outcome.status, outcome.answer) == ("answered", "Answer: result3")
    assert outcome.metrics["stage_ended"] == 3
    assert [outcome.metrics[f"stage_{n}_calls"] for n in (1, 2, 3)] == [1, 1, 1]
    assert all(outcome.metrics[f"stage_{n}_tokens"] > 0 for n in (1, 2, 3))


def test_the_handover_and_each_stages_prompts_are_slots_an_arm_overrides(tmp_path):
    (tmp_path / "handover.toml").write_text(
        "handover = 'Stage {{ stage }} of {{ question }} after: {{ answer }}'\n"
    )
    (tmp_path / "terse.toml").write_text("answer = 'Answer tersely.'\n")
    numbered.calls = 0
    spec = (
        f"pipeline:prompts={tmp_path / 'handover.toml'},"
        f"stages=direct>direct;prompts={tmp_path / 'terse.toml'}"
    )
    _, requests, _ = run(spec, numbered, question="Q?")
    assert requests[1].messages[-1].content == "Stage 2 of Q? after: Answer: result1"
    assert requests[1].system == "Answer tersely." != requests[0].system
    arm = parse_arm(spec)
    assert arm.spec == "pipeline:prompts=handover,stages=direct>direct;prompts=terse"
    assert arm.resolved["stages"][1]["prompts"] == {"answer": "Answer tersely."}


def test_no_run_exceeds_max_steps_and_every_stage_gets_its_calls():
    """plan_execute spends all the calls it is given: each stage is given what the
    pipeline's max_steps leaves it, less the floors of the stages after it."""
    stages = "stages=plan_execute>plan_execute>react_text"
    for max_steps in (7, 8, 12, 20, 33, 40):
        outcome, requests, trace = run(f"pipeline:max_steps={max_steps},{stages}", busy)
        assert len(requests) <= max_steps
        assert [e.stage for e in trace.of(StageEvent)] == [1, 2, 3], max_steps
        assert (outcome.status, outcome.answer) == ("answered", "84")
        assert outcome.metrics["stage_3_calls"] == 1
        assert outcome.metrics["stage_1_calls"] == min(16, max_steps - 4)


def test_the_trace_holds_every_stage_with_its_steps_numbered_on():
    _, requests, trace = run("pipeline:stages=react_text>react>react", answering)
    starts = trace.of(StageEvent)
    assert [(e.stage, e.arm) for e in starts] == [(1, "react_text"), (2, "react"), (3, "react")]
    calls = [e.call for e in trace.of(RequestEvent)]
    assert calls == list(range(1, len(requests) + 1))
    # Every action is numbered as the call that asked for it, in every stage.
    last_call = 0
    for event in trace.events:
        if isinstance(event, RequestEvent):
            last_call = event.call
        elif isinstance(event, ToolCallEvent):
            assert event.step == last_call
    steps = [e.step for e in trace.of(ToolCallEvent)]
    assert steps == sorted(steps) and len(set(steps)) == len(steps) > 1
    assert trace.events.index(starts[1]) < trace.events.index(trace.of(ToolCallEvent)[-1])


def test_a_stage_that_does_not_answer_ends_the_pipeline_with_its_status():
    def looping(request):
        return "Thought: look again.\nAction: lookup[Paris]"

    outcome, requests, trace = run("pipeline:stages=react_text;max_steps=3>direct", looping)
    assert (outcome.status, len(requests), outcome.metrics["stage_ended"]) == ("step_budget", 3, 1)
    assert len(trace.of(StageEvent)) == 1 and "stage_2_calls" not in outcome.metrics
    assert len(trace.of(LimitReachedEvent)) == 1


def test_max_tokens_holds_across_the_stages():
    def costly(request):
        return ModelResponse(text_reply("84").message, "stop", Usage(30, 10))

    outcome, requests, _ = run("pipeline:max_tokens=50,stages=direct>direct>direct", costly)
    # 40 tokens a call: the second call starts below 50, the third (stage 3's) at 80 is not made.
    assert (outcome.status, len(requests), outcome.metrics["stage_ended"]) == ("token_budget", 2, 3)


def test_a_call_that_reported_no_usage_is_estimated_once_for_the_ceiling():
    def unreported(request):
        return ModelResponse(text_reply("84").message, "stop", Usage(missing=1))

    outcome, _, _ = run("pipeline:stages=direct>direct", unreported)
    assert outcome.metrics["ceiling_estimated_calls"] == 2
    stage_tokens = outcome.metrics["stage_1_tokens"] + outcome.metrics["stage_2_tokens"]
    assert stage_tokens == outcome.metrics["ceiling_estimated_tokens"] > 0
    assert not [key for key in outcome.metrics if key.startswith("stage_") and "ceiling" in key]


def test_a_pipeline_below_its_stages_floors_added_up_is_refused_with_no_request():
    spec = "pipeline:max_steps=6,stages=plan_execute>plan_execute>react_text"
    with pytest.raises(ArmError, match=r"needs max_steps of at least 7 .*plan_execute 3"):
        parse_arm(spec)
    at_floor = parse_arm(spec.replace("max_steps=6", "max_steps=7"))
    assert at_floor.build().call_floor().calls == 7
    model = FunctionModel(busy, keep_requests=True)
    trace = Trace()
    ctx = RunContext("q", CountingClient(model, trace), "m", TASKS.toolset(), trace)
    outcome = asyncio.run(below_floor(spec.replace("max_steps=6,", ""), 6).run(ctx))
    assert (outcome.status, model.requests) == ("refused", [])
    with FakeServer() as server:
        ran = CliRunner().invoke(main, ["run", "--model", "fake", "--arm", spec])
        assert server.served.requests == 0
    assert ran.exit_code == 2 and "needs max_steps of at least 7" in ran.output


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("pipeline:stages=cot", "two stages or more"),
        ("pipeline:stages=cot>>direct", "stage 2 is ''"),
        ("pipeline:stages=cot>react_text:guard=on", "stage 2 is 'react_text:guard=on'"),
        ("pipeline:stages=cot>nope", "stage 2: no pattern named 'nope'"),
        ("pipeline:stages=cot>react_text;guard=maybe", "stage 2: guard='maybe'"),
        ("pipeline:stages=cot>react_text;guard=on,tool=improved", "no option 'tool'"),
        ("pipeline:stages=cot>pipeline", "stage 2 is a pipeline"),
        ("pipeline:stages=react_text>react_text;tool=improved", "one set of tools"),
        ("pipeline:stages=cot>react_text;max_steps=0", "stage 2: react_text needs max_steps"),
    ],
)
def test_a_stage_written_wrong_is_refused_in_one_line(spec, says):
    with pytest.raises((ArmError, UnknownPattern)) as refused:
        parse_arm(spec)
    message = str(refused.value)
    assert says in message and "\n" not in message and message.startswith(f"arm {spec!r}")
    ran = CliRunner().invoke(main, ["run", "--model", "fake", "--arm", spec])
    assert ran.exit_code == 2 and says in ran.output


def test_an_arm_names_its_stages_as_given_canonically():
    assert parse_arm("pipeline").spec == "pipeline"
    written = "pipeline:stages=react_text;tool=plain;guard=true>cot"
    assert arm_identity(written) == "pipeline:stages=react_text;guard=on;tool=plain>cot"
    assert arm_identity(arm_identity(written)) == arm_identity(written)


def test_the_run_has_the_tools_its_stages_ask_for():
    task = TASKS.tasks[0]
    runner = Runner(TASKS, FunctionModel(busy), "m")
    for spec, offered in [
        ("pipeline:stages=cot>react_text", True),
        ("pipeline:stages=cot>direct", False),
    ]:
        record, _ = asyncio.run(runner.run_one(Job(parse_arm(spec), task, 0)))
        assert record.tools_offered is offered, spec
    improved = parse_arm("pipeline:stages=cot>react_text;tool=improved")
    assert improved.options.tool_options() == {"lookup": {"variant": "improved"}}


def test_an_experiment_file_with_a_stage_list_runs(tmp_path):
    (tmp_path / "terse.toml").write_text("answer = 'Answer tersely.'\n")
    terse = tmp_path / "terse.toml"
    (tmp_path / "exp.toml").write_text(
        'tasks = "depot"\nlimit = 2\narms = [\n  "direct",\n'
        '  {pattern = "pipeline", max_steps = 12, stages = [{pattern = "plan_execute"}, '
        f'{{pattern = "direct", prompts = "{terse}"}}]}},\n'
        '  {pattern = "pipeline", stages = [{pattern = "cot"}, '
        '{pattern = "react_text", guard = true}]},\n]\n'
    )
    out = tmp_path / "out"
    with FakeServer() as server:
        args = ["run", "--experiment", str(tmp_path / "exp.toml"), "--out", str(out)]
        ran = CliRunner().invoke(main, [*args, "--model", "fake", "--base-url", server.base_url])
    assert ran.exit_code == 0, ran.output
    records = read_records(out)
    assert {r.arm for r in records} == {
        "direct",
        "pipeline:max_steps=12,stages=plan_execute>direct;prompts=terse",
        "pipeline:stages=cot>react_text;guard=on",
    }
    pipelines = [r for r in records if r.pattern == "pipeline"]
    for record in pipelines:
        assert record.status == "answered" and record.turns <= record.options["max_steps"]
        assert record.metrics["stage_ended"] == 2
        assert record.metrics["stage_1_calls"] + record.metrics["stage_2_calls"] == record.turns
        assert (record.prompts_hash is None) == ("prompts" not in record.arm)
    stages = {r.arm: [s["pattern"] for s in r.options["stages"]] for r in pipelines}
    assert sorted(stages.values()) == [["cot", "react_text"], ["plan_execute", "direct"]]
    traces = [json.loads(line) for line in (out / "traces.jsonl").read_text().splitlines()]
    kinds = [[e["kind"] for e in t["events"]] for t in traces]
    assert sorted(k.count("stage") for k in kinds) == [0, 0, 2, 2, 2, 2]


def test_an_experiment_file_may_write_its_arms_as_tables_of_tables(tmp_path):
    (tmp_path / "exp.toml").write_text(
        '[[arms]]\npattern = "react_text"\nguard = true\n\n'
        '[[arms]]\npattern = "pipeline"\nmax_steps = 10\n'
        '[[arms.stages]]\npattern = "cot"\n[[arms.stages]]\npattern = "react_text"\n'
        "max_steps = 4\n"
    )
    arms = load_experiment(tmp_path / "exp.toml").arms
    assert arms == [
        "react_text:guard=on",
        "pipeline:max_steps=10,stages=cot>react_text;max_steps=4",
    ]


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ('{pattern = "pipeline", stages = [{guard = true}]}', "stages.0.pattern"),
        ('{pattern = "pipeline", stages = [{pattern = "cot", x = [1]}]}', "stages.0.x"),
        ('{pattern = "react_text", guard = "on|off"}', "guard 'on|off'"),
    ],
)
def test_an_arm_table_written_wrong_is_refused_in_one_line(tmp_path, table, says):
    (tmp_path / "exp.toml").write_text(f"arms = [\n  {table},\n]\n")
    ran = CliRunner().invoke(main, ["run", "--experiment", str(tmp_path / "exp.toml")])
    assert ran.exit_code == 2 and "field 'arms.0' on line 1" in ran.output and says in ran.output
    assert len(ran.output.strip().splitlines()) == 1
