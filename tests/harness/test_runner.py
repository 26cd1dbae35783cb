import asyncio
import importlib.metadata

from loopbench.harness.arms import parse_arms
from loopbench.harness.events import LimitReachedEvent
from loopbench.harness.grid import Grid
from loopbench.harness.models.scripted import ScriptedModel, tool_reply
from loopbench.harness.models.types import Message, ModelResponse, Usage
from loopbench.harness.report.rendering import render
from loopbench.harness.report.table import summarize
from loopbench.harness.results.frames import records_frame
from loopbench.harness.runner import Job, Runner, RunSettings
from loopbench.tasks.loading import load_taskset


def test_expand_covers_every_run_once_in_a_repeatable_shuffled_order():
    arms = parse_arms(["direct", "cot", "react_text"])
    depot = load_taskset("depot")
    jobs = list(Grid(depot, arms, 2, "m").jobs())
    keys = [(j.arm.spec, j.task.id, j.repeat) for j in jobs]
    assert len(keys) == len(set(keys)) == 3 * 12 * 2
    assert [j.repeat for j in jobs] == sorted(j.repeat for j in jobs)  # repeats stay outermost
    assert keys == [(j.arm.spec, j.task.id, j.repeat) for j in Grid(depot, arms, 2, "m").jobs()]
    round_robin = [a.spec for a in arms] * 12
    assert [k[0] for k in keys[:36]] != round_robin  # no arm always runs right after another


def _one_run(spec, replies, task_id="eiffel-opera-house"):
    depot = load_taskset("depot")
    task = next(t for t in depot.tasks if t.id == task_id)
    [arm] = parse_arms([spec])
    runner = Runner(depot, ScriptedModel(replies), "m")
    record, trace = asyncio.run(runner.run_one(Job(arm, task, 0)))
    return record, trace


def _critique(needs, text=""):
    return tool_reply(("critique", {"needs_refinement": needs, "critique": text}))


def test_reflection_records_whether_its_draft_was_right():
    record, _ = _one_run("reflection:cycles=1", ["74 years", _critique(True, "1973-1889"), "84"])
    assert (record.first_correct, record.correct) == (False, True)
    kept, _ = _one_run("reflection:cycles=1", ["84 years", _critique(False)])
    assert (kept.first_correct, kept.correct) == (True, True)


def test_a_record_carries_the_arm_identity_its_resolved_options_and_the_release():
    record, _ = _one_run("react_text:guard=on", ["Action: finish[84]"])
    assert record.arm == "react_text:guard=on" and record.schema_version == 2
    assert record.options["guard"] is True and record.options["max_steps"] == 8
    assert record.loopbench_version == importlib.metadata.version("loopbench")


def test_a_limit_keeps_the_partial_work_in_the_trace():
    looping = [tool_reply(("lookup", {"title": "Eiffel Tower"}))] * 3
    record, trace = _one_run("react:max_steps=2", looping)
    assert record.status == "step_budget" and record.turns == 2
    [limit] = trace.of(LimitReachedEvent)
    assert [m["role"] for m in limit.conversation] == ["user", *["assistant", "tool"] * 2]


def test_an_empty_reply_is_unparsed_not_an_answered_empty_string():
    for spec in ("react", "plan"):
        replies = ["1. look it up", ""] if spec == "plan" else [""]
        record, _ = _one_run(spec, replies)
        assert (record.status, record.answer, record.correct) == ("unparsed", None, None), spec
        assert record.parse_failures == 1


def test_calls_without_usage_are_recorded_and_flagged_under_the_table():
    no_usage = ModelResponse(Message("assistant", "84"), usage=Usage(missing=1))
    record, _ = _one_run("direct", [no_usage])
    assert (record.usage_missing, record.tokens_in, record.tokens_out) == (1, 0, 0)
    table = render(summarize(records_frame([record])), "md")
    assert "Usage unknown: 1 model calls (direct) reported no token usage" in table
    complete, _ = _one_run("direct", ["84"])
    assert "Usage unknown" not in render(summarize(records_frame([complete])), "md")


def test_count_tokens_estimates_a_call_without_usage_and_says_so():
    no_usage = ModelResponse(Message("assistant", "84 years"), usage=Usage(missing=1))
    depot = load_taskset("depot")
    [arm] = parse_arms(["direct"])
    settings = RunSettings(estimate=lambda text: len(text.split()))
    runner = Runner(depot, ScriptedModel([no_usage]), "m", settings)
    record, _ = asyncio.run(runner.run_one(Job(arm, depot.tasks[0], 0)))
    assert (record.usage_missing, record.usage_estimated, record.tokens_out) == (1, 1, 2)
    assert record.tokens_in > 10  # the question and the system prompt, counted
    table = render(summarize(records_frame([record])), "md")
    assert "Usage estimated: 1 model calls (direct)" in table and "Usage unknown" not in table


def test_the_shipped_tokenizer_counts_real_tokens():
    from loopbench.harness.models.estimate import shipped_tokenizer

    count = shipped_tokenizer()
    assert 8 <= count("How many years passed between the completion of the Eiffel Tower") <= 20
    assert count("") == 0
