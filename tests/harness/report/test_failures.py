"""The failure taxonomy: each rule on a run the harness really ran, and its near misses.

Runs go through ``Runner.run_one`` with a scripted model on the depot task set, so
records and traces are exactly what ``loopbench run`` writes (traces as read back from
JSON). Every rule has one run carrying exactly its label, in the native tool-call and
the text action formats where both apply.
"""

import asyncio
import json
import re

import pytest
from click.testing import CliRunner

from loopbench.harness.arms import parse_arms
from loopbench.harness.cli.failures import failures_command
from loopbench.harness.cli.main import main
from loopbench.harness.fakes.fake_server import FakeServer, Reply, question_index
from loopbench.harness.models.scripted import ScriptedModel, text_reply, tool_reply
from loopbench.harness.models.types import ModelAPIError
from loopbench.harness.report.failures import (
    LABELS,
    RULES,
    label_run,
    labelled_frame,
    summarize_failures,
)
from loopbench.harness.results.reading import TRACES
from loopbench.harness.results.records import RunRecord
from loopbench.harness.results.store import RecordWriter
from loopbench.harness.runner import Job, Runner, RunSettings
from loopbench.tasks.loading import load_taskset
from tests.harness.patterns.helpers import arm_with_max_steps

DEPOT = load_taskset("depot")
FORMS = ["react", "react_text"]


def run_one(spec, replies, task_id="eiffel-opera-house", settings=None):
    """A run as the harness records it: its record and its trace as read from disk."""
    task = next(t for t in DEPOT.tasks if t.id == task_id)
    [arm] = parse_arms([spec])
    runner = Runner(DEPOT, ScriptedModel(replies), "m", settings or RunSettings())
    record, trace = asyncio.run(runner.run_one(Job(arm, task, 0)))
    return record, json.loads(json.dumps(trace.to_json()))


def labelled(spec, replies, task_id="eiffel-opera-house", settings=None):
    record, events = run_one(spec, replies, task_id, settings)
    return label_run(record, events)


def look(form, title):
    if form == "react":
        return tool_reply(("lookup", {"title": title}))
    return f"Thought: I look it up.\nAction: lookup[{title}]"


def calc(form, expression):
    if form == "react":
        return tool_reply(("calc", {"expression": expression}))
    return f"Thought: I calculate.\nAction: calc[{expression}]"


def final(form, answer):
    return answer if form == "react" else f"Thought: I know it.\nAction: finish[{answer}]"


def eiffel_and_opera(form):
    return [look(form, "Eiffel Tower"), look(form, "Sydney Opera House")]


def test_every_label_has_a_rule_or_is_the_fallback():
    fallbacks = {"wrong but grounded", "wrong with no trace"}
    assert set(RULES) | fallbacks == set(LABELS) and not set(RULES) & fallbacks


def test_a_correct_run_gets_no_label_even_with_a_repeated_action():
    replies = [look("react", "Eiffel Tower"), *eiffel_and_opera("react")]
    replies += [calc("react", "1973 - 1889"), "84 years"]
    assert labelled("react", replies) == []


@pytest.mark.parametrize("form", FORMS)
def test_repetition_is_the_same_action_twice(form):
    replies = [look(form, "Eiffel Tower"), look(form, "Eiffel Tower"), final(form, "1889")]
    assert labelled(form, replies) == ["repetition"]


@pytest.mark.parametrize("form", FORMS)
def test_the_same_tool_with_other_arguments_is_no_repetition(form):
    assert labelled(form, [*eiffel_and_opera(form), final(form, "1889")]) == ["wrong but grounded"]


def test_repetition_compares_arguments_as_json_not_as_written():
    replies = [
        tool_reply(("lookup", '{"title": "Eiffel Tower"}')),
        tool_reply(("lookup", '{"title":"Eiffel Tower"}')),
        "1889",
    ]
    assert labelled("react", replies) == ["repetition"]


def test_a_step_budget_spent_giving_the_same_reply_is_repetition():
    # finish=tool: a reply without a final_answer call is nudged, again and again.
    labels = labelled("react:finish=tool,max_steps=3", ["It is 1889."] * 3)
    assert labels == ["repetition", "format failure", "budget"]


def test_the_same_reply_twice_then_an_answer_is_no_loop():
    answer = tool_reply(("final_answer", {"answer": "1889", "evidence": ["Eiffel Tower"]}))
    replies = [look("react", "Eiffel Tower"), "It is 1889.", "It is 1889.", answer]
    assert labelled("react:finish=tool", replies) == ["format failure"]


def test_a_step_budget_spent_on_new_actions_is_budget_alone():
    replies = eiffel_and_opera("react")
    assert labelled("react:max_steps=2", replies) == ["budget"]


@pytest.mark.parametrize("form", FORMS)
def test_a_miss_never_found_later_is_a_tool_miss_not_recovered(form):
    replies = [look(form, "Tour Eiffel"), look(form, "Sydney Opera House"), final(form, "1973")]
    assert labelled(form, replies) == ["tool miss not recovered"]


@pytest.mark.parametrize("form", FORMS)
def test_a_miss_found_later_under_a_corrected_title_is_recovered(form):
    replies = [look(form, "Eifel Tower"), look(form, "Eiffel Tower"), final(form, "1889")]
    assert labelled(form, replies) == ["wrong but grounded"]


def test_a_miss_found_later_under_a_shorter_title_is_recovered():
    replies = [look("react", "Larkspur Hamburg depot"), look("react", "Hamburg depot"), "2012"]
    assert labelled("react", replies, "hamburg-manager-age") == ["wrong but grounded"]


def test_a_second_miss_of_the_same_entity_is_no_recovery():
    replies = [look("react", "Eifel Tower"), look("react", "Eifel Towr"), "The Eiffel Tower"]
    assert labelled("react", replies) == ["tool miss not recovered"]


@pytest.mark.parametrize("form", FORMS)
def test_a_number_no_observation_holds_is_unsupported(form):
    replies = [*eiffel_and_opera(form), final(form, "85 years")]
    assert labelled(form, replies) == ["unsupported number"]


@pytest.mark.parametrize("form", FORMS)
def test_a_number_in_the_question_is_supported(form):
    replies = [look(form, "Sputnik 1"), final(form, "11 years")]
    assert labelled(form, replies, "sputnik-apollo") == ["wrong but grounded"]


def test_a_number_only_a_failed_call_echoed_is_unsupported():
    # The miss says "no entry titled 'Eiffel Tower 1890'": the model's words, not evidence.
    replies = [look("react", "Eiffel Tower 1890"), look("react", "Eiffel Tower"), "1890"]
    assert labelled("react", replies) == ["unsupported number"]


def test_a_calc_result_supports_its_magnitude():
    replies = [*eiffel_and_opera("react"), calc("react", "1889 - 1973"), "84 years, from 1889"]
    assert labelled("react", replies) == ["wrong but grounded"]


def test_a_number_cut_from_a_long_observation_is_not_called_unsupported():
    # "2012" sits past the first 100 characters of Vossberg Carriers' entry.
    replies = [look("react", "Vossberg Carriers"), "2012"]
    cut = RunSettings(max_trace_text=100)
    assert labelled("react", replies, "predecessor-years", cut) == ["wrong but grounded"]
    assert labelled("react", replies, "predecessor-years") == ["wrong but grounded"]
    record, events = run_one(
        "react", [look("react", "Vossberg Carriers"), "2013"], "predecessor-years"
    )
    assert label_run(record, events) == ["unsupported number"]


@pytest.mark.parametrize("form", FORMS)
def test_an_answer_one_off_a_calc_result_is_an_arithmetic_slip(form):
    replies = [*eiffel_and_opera(form), calc(form, "1973 - 1889"), final(form, "83 years")]
    assert labelled(form, replies) == ["arithmetic slip"]


@pytest.mark.parametrize("form", FORMS)
def test_stated_arithmetic_that_differs_from_calc_is_an_arithmetic_slip(form):
    answer = "1973 - 1889 = 94, so 94 years"
    replies = [*eiffel_and_opera(form), calc(form, "1973 - 1889"), final(form, answer)]
    assert labelled(form, replies) == ["arithmetic slip"]


def test_stated_arithmetic_that_agrees_with_calc_is_no_slip():
    answer = "1973 - 1889 = 84, so 84 years after 1889"
    replies = [*eiffel_and_opera("react"), calc("react", "1973 - 1889"), answer]
    assert labelled("react", replies) == ["wrong but grounded"]


def test_a_number_far_from_every_calc_result_is_unsupported_not_a_slip():
    replies = [*eiffel_and_opera("react"), calc("react", "1973 - 1889"), "12 years"]
    assert labelled("react", replies) == ["unsupported number"]


def test_a_number_near_a_calc_result_that_an_observation_holds_is_no_slip():
    replies = [look("react", "Eiffel Tower"), calc("react", "1889 + 1"), "1889"]
    assert labelled("react", replies) == ["wrong but grounded"]


@pytest.mark.parametrize("form", FORMS)
def test_answering_without_a_tool_call_is_no_evidence(form):
    assert labelled(form, [final(form, "11 years")], "sputnik-apollo") == ["no evidence"]


def test_a_final_answer_call_alone_is_no_evidence():
    call = tool_reply(("final_answer", {"answer": "11 years", "evidence": ["Sputnik 1"]}))
    assert labelled("react:finish=tool", [call], "sputnik-apollo") == ["no evidence"]


def test_an_arm_without_tools_answering_from_the_question_is_wrong_but_grounded():
    assert labelled("direct", ["11 years"], "sputnik-apollo") == ["wrong but grounded"]


def test_a_run_records_whether_it_was_offered_tools_and_what_its_answer_is():
    react, _ = run_one("react", ["11 years"], "sputnik-apollo")
    cot, _ = run_one("cot", ["11 years"], "sputnik-apollo")
    assert (react.tools_offered, react.answer_kind) == (True, "text")
    assert (cot.tools_offered, cot.answer_kind) == (False, "text")


def test_the_rules_read_tools_offered_from_the_record_not_from_a_registry():
    # A plugin pattern not installed where the folder is read: the record says it all.
    offered = RunRecord(
        arm="my_agent", task_id="t", repeat=0, status="answered", answer="8", correct=False,
        tools_offered=True, answer_kind="text",
    )  # fmt: skip
    assert label_run(offered, None) == ["no evidence"]
    not_offered = offered.model_copy(update={"tools_offered": False})
    assert label_run(not_offered, None) == ["wrong with no trace"]
    # The record's word wins over the options a tool pattern has.
    silent = not_offered.model_copy(update={"pattern": "react", "options": {"tool": "plain"}})
    assert label_run(silent, None) == ["wrong with no trace"]


def test_records_written_before_the_facts_are_judged_from_their_options_and_metrics():
    older = RunRecord(
        arm="react", task_id="t", repeat=0, status="answered", answer="8", correct=False
    )
    assert older.tools_offered is None and older.answer_kind is None
    assert label_run(older, None) == ["no evidence"]  # react took the tools in schema 1
    plugin = older.model_copy(update={"pattern": "my_agent", "arm": "my_agent"})
    assert label_run(plugin, None) == ["wrong with no trace"]
    with_options = plugin.model_copy(update={"options": {"tool": "improved"}})
    assert label_run(with_options, None) == ["no evidence"]
    coding = older.model_copy(update={"metrics": {"code_edits": 0.0}})
    assert label_run(coding, None) == ["wrong with no trace"]


def test_a_code_answer_is_not_read_for_numbers():
    record, events = run_one("react", [*eiffel_and_opera("react"), "85 years"])
    assert label_run(record, events) == ["unsupported number"]
    code = record.model_copy(update={"answer_kind": "code"})
    assert label_run(code, events) == ["wrong but grounded"]


def test_an_empty_final_reply_is_a_format_failure():
    assert labelled("react", [""]) == ["format failure"]


def test_a_reply_cut_at_the_output_limit_is_truncated():
    assert labelled("react", [text_reply("84 ye", finish_reason="length")]) == ["truncated"]


def test_an_endpoint_failure_is_an_api_error():
    assert labelled("react", [ModelAPIError("HTTP 500", status=500)]) == ["api error"]


def test_a_pattern_that_raised_is_a_harness_error():
    assert labelled("react", [RuntimeError("a bug")]) == ["harness error"]


def test_a_budget_too_small_to_start_is_refused():
    # parse_arm refuses such an arm; one built in code is refused by the limits wrapper
    task = DEPOT.tasks[0]
    runner = Runner(DEPOT, ScriptedModel([]), "m", RunSettings())
    record, trace = asyncio.run(runner.run_one(Job(arm_with_max_steps("react", 0), task, 0)))
    assert label_run(record, json.loads(json.dumps(trace.to_json()))) == ["refused"]


def test_a_verifier_that_accepted_nothing_is_none_accepted():
    record = RunRecord(arm="best_of_n", task_id="t", repeat=0, status="none_accepted")
    assert label_run(record, []) == ["none accepted"]


def test_an_answer_never_graded_is_not_labelled():
    record = RunRecord(arm="react", task_id="t", repeat=0, status="answered", answer="85")
    assert label_run(record, []) == []


def test_without_a_trace_only_the_record_rules_apply():
    wrong, events = run_one("react", [*eiffel_and_opera("react"), "85 years"])
    assert label_run(wrong, events) == ["unsupported number"]
    assert label_run(wrong, None) == ["wrong with no trace"]
    repeated, _ = run_one("react", [look("react", "Paris"), look("react", "Paris"), "8"])
    assert label_run(repeated, None) == ["repetition"]
    bare, _ = run_one("react", ["11 years"], "sputnik-apollo")
    assert label_run(bare, None) == ["no evidence"]


def test_a_damaged_event_is_refused_naming_it():
    record, events = run_one("react", [look("react", "Paris"), "8"])
    [call] = [e for e in events if e["kind"] == "tool_call"]
    call["ok"] = "perhaps"
    with pytest.raises(ValueError, match=r"event \d+ \(tool_call\).*ok"):
        label_run(record, events)


def write_folder(path, runs):
    path.mkdir()
    with RecordWriter(path) as writer:
        for record, events in runs:
            writer.append(record, events)
    return path


def test_a_folder_with_traces_missing_for_some_runs_still_labels_them(tmp_path):
    kept = run_one("react", [*eiffel_and_opera("react"), "85 years"])
    lost = run_one("react", [*eiffel_and_opera("react"), "86 years"], "nile-danube")
    folder = write_folder(tmp_path / "r", [kept, lost])
    lines = (folder / TRACES).read_text().splitlines(keepends=True)
    (folder / TRACES).write_text(lines[0])
    labelled = labelled_frame(folder)
    runs = {run.task_id: run for run in labelled.itertuples()}
    assert runs["eiffel-opera-house"].labels == ("unsupported number",)
    assert runs["nile-danube"].labels == ("wrong with no trace",) and not runs["nile-danube"].traced
    [arm] = summarize_failures(labelled)
    assert (arm.failed, arm.untraced, arm.counts["unsupported number"]) == (2, 1, 1)


def failures(*args):
    return CliRunner().invoke(failures_command, [str(a) for a in args])


@pytest.fixture
def folder(tmp_path):
    return write_folder(
        tmp_path / "r",
        [
            run_one("react", [*eiffel_and_opera("react"), "85 years"]),
            run_one("react", ["11 years"], "sputnik-apollo"),
            run_one("direct", ["84"]),
        ],
    )


def test_failures_prints_a_table_per_arm_with_examples(folder):
    result = failures(folder)
    assert result.exit_code == 0, result.output
    assert "**react**: 2 of 2 runs failed" in result.output
    assert "| unsupported number | 1 | 50% |" in result.output
    assert "| no evidence | 1 | 50% |" in result.output
    assert "- no evidence: sputnik-apollo (repeat 0, run " in result.output
    assert "**direct**: 0 of 1 runs failed" in result.output


def test_failures_as_json_and_csv(folder):
    [react] = json.loads(failures(folder, "--arm", "react", "--format", "json").output)
    assert (react["arm"], react["runs"], react["failed"], react["untraced"]) == ("react", 2, 2, 0)
    assert react["labels"]["no evidence"]["share"] == 0.5
    [example] = react["labels"]["no evidence"]["examples"]
    assert example["task_id"] == "sputnik-apollo" and len(example["run_id"]) == 32
    rows = failures(folder, "--format", "csv", "--examples", "0").output.splitlines()
    assert rows[0] == "arm,label,runs,failed,share,examples"
    assert "react,unsupported number,1,2,0.5," in rows and len(rows) == 1 + 2 * len(LABELS)


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        ("unknown arm", "no arm 'rewoo' in"),
        ("no runs", "no finished runs yet"),
        ("no folder", "no such file"),
        ("bad JSON", f"{TRACES}:2: damaged trace line"),
        ("bad event", f"{TRACES}:1: damaged trace line (event"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(folder, tmp_path, damage, said):
    args = [folder]
    traces = folder / TRACES
    if damage == "unknown arm":
        args += ["--arm", "rewoo"]
    elif damage == "no runs":
        args = [write_folder(tmp_path / "empty", [])]
    elif damage == "no folder":
        args = [tmp_path / "nowhere"]
    elif damage == "bad JSON":
        lines = traces.read_text().splitlines(keepends=True)
        traces.write_text(lines[0] + "{not json\n" + "".join(lines[2:]))
    else:
        # Written compact or spaced alike: the first tool call's kind becomes a number.
        damaged = re.sub(r'"kind": ?"tool_call"', '"kind": 3', traces.read_text(), count=1)
        traces.write_text(damaged)
    result = failures(*args)
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit)
    [line] = result.output.strip().splitlines()
    assert line.startswith("Error: ") and said in line


# End to end: a fake server playing a model that fails in known ways, task by task.
SCRIPTS = {
    "eiffel-opera-house": [("lookup", "Eiffel Tower")] * 8,
    "everest-kilimanjaro": [("lookup", "Mount Everst"), "Mount Everest is higher."],
    "nile-danube": [("lookup", "Nile"), ("lookup", "Danube"), ("calc", "6650 - 2850"), "3801 km"],
    "sputnik-apollo": ["11 years"],
    "bridge-opera-house": [
        ("lookup", "Golden Gate Bridge"),
        ("lookup", "Sydney Opera House"),
        "The Golden Gate Bridge, by 40 years",
    ],
    "tower-bridge-height": [""] * 8,
    "hamburg-bilbao-years": [Reply("6 ye", finish_reason="length")],
    "most-trucks": [Reply(status=500)],
    "ceo-age": [("lookup", "Ingrid Maalouf"), "1974"],
    "lyon-turin-trucks": [("lookup", "Lyon depot"), ("lookup", "Turin depot"), "102"],
    "predecessor-years": ["25 years"],
    "hamburg-manager-age": ["41"],
}
EXPECTED = {
    "eiffel-opera-house": {"repetition", "budget"},
    "everest-kilimanjaro": {"tool miss not recovered"},
    "nile-danube": {"arithmetic slip"},
    "sputnik-apollo": {"no evidence"},
    "bridge-opera-house": {"unsupported number"},
    "tower-bridge-height": {"format failure"},
    "hamburg-bilbao-years": {"truncated"},
    "most-trucks": {"api error"},
    "ceo-age": {"wrong but grounded"},
}
#: The text loop nudges a reply it cannot read, and the model repeats it till the budget.
EXPECTED_TEXT = EXPECTED | {"tower-bridge-height": {"format failure", "repetition", "budget"}}
ARGUMENT = {"lookup": "title", "calc": "expression"}


def scripted(body):
    """Plays SCRIPTS in whichever form the request asks for: tool calls or text actions."""
    messages = body["messages"]
    start = question_index(messages)
    question = messages[start]["content"]
    [task] = [t for t in DEPOT.tasks if t.question in question]
    step = SCRIPTS[task.id][sum(m["role"] == "assistant" for m in messages[start:])]
    if isinstance(step, Reply):
        return step
    if body.get("tools"):
        if isinstance(step, str):
            return Reply(step)
        tool, argument = step
        arguments = json.dumps({ARGUMENT[tool]: argument})
        call = {"id": "c", "type": "function", "function": {"name": tool, "arguments": arguments}}
        return Reply(tool_calls=[call], finish_reason="tool_calls")
    if isinstance(step, str):
        return Reply(f"Thought: done.\nAction: finish[{step}]" if step else "")
    return Reply(f"Thought: next.\nAction: {step[0]}[{step[1]}]")


def test_failures_labels_a_grid_that_failed_in_known_ways(tmp_path):
    out = tmp_path / "grid"
    grid = ["--arm", "react", "--arm", "react_text", "--out", str(out), "--quiet"]
    with FakeServer(scripted) as server:
        endpoint = ["--base-url", server.base_url, "--model", "fake", "--max-retries", "0"]
        ran = CliRunner().invoke(
            main,
            ["run", *endpoint, *grid],
            env={"LOOPBENCH_API_KEY": "sk-test"},
            catch_exceptions=False,
        )
    assert ran.exit_code == 0, ran.output
    result = failures(out, "--format", "json", "--examples", "12")
    assert result.exit_code == 0, result.output
    for arm in json.loads(result.output):
        assert (arm["runs"], arm["failed"], arm["untraced"]) == (12, 9, 0)
        found: dict[str, set[str]] = {}
        for label, counted in arm["labels"].items():
            for example in counted["examples"]:
                found.setdefault(example["task_id"], set()).add(label)
        assert found == (EXPECTED if arm["arm"] == "react" else EXPECTED_TEXT), arm["arm"]
