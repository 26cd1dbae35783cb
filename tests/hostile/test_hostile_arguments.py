"""Tool arguments and code no parser should take, as an endpoint may send them: JSON nested
100,000 deep, an integer of 5,000 digits, code nested past what Python unparses. Each is a
malformed call the pattern answers, never an exception out of loopbench."""

from __future__ import annotations

import asyncio
import json

import pytest

from loopbench.harness.arms import parse_arm
from loopbench.harness.events import FinishEvent, ToolCallEvent
from loopbench.harness.models.scripted import tool_reply
from loopbench.harness.patterns.coding import suite_from_tests
from loopbench.harness.patterns.rewoo import UnresolvedReference, substitute
from loopbench.harness.tools import ToolSet
from loopbench.tasks.loading import load_taskset
from tests.harness.patterns.helpers import run_pattern

DEEP = '{"title": ' + "[" * 100_000 + "]" * 100_000 + "}"
LONG_INTEGER = '{"title": ' + "9" * 5_000 + "}"
TOOLS: ToolSet = load_taskset("depot").toolset({})


@pytest.mark.parametrize(
    ("arguments", "why"),
    [(DEEP, "nested too deep"), (LONG_INTEGER, "Exceeds the limit (4300 digits)")],
    ids=["nested", "long_integer"],
)
def test_arguments_no_parser_takes_are_a_failed_result_the_model_reads(arguments, why):
    result = asyncio.run(TOOLS.invoke("lookup", arguments))
    assert not result.ok
    assert f"the arguments to lookup are not valid JSON ({why}" in result.content
    assert result.args_key is None


def test_a_final_answer_is_read_as_the_tool_set_validated_it():
    # JSON parses these (300 deep), pydantic's own JSON parser would not (200 at most): the
    # answer is the validated arguments, parsed once, so no second parser refuses them.
    deep_extra = "[" * 300 + "]" * 300
    arguments = f'{{"answer": "84", "evidence": ["Paris"], "extra": {deep_extra}}}'
    final = tool_reply(("final_answer", arguments))
    outcome, _, ctx = run_pattern(parse_arm("react:finish=tool").build(), [final])
    assert (outcome.status, outcome.answer) == ("answered", "84")
    [finish] = ctx.trace.of(FinishEvent)
    assert finish.evidence == ["Paris"]
    assert [e.ok for e in ctx.trace.of(ToolCallEvent)] == [True]


def test_a_reference_to_a_step_numbered_past_any_plan_fails_that_step_by_name():
    with pytest.raises(UnresolvedReference, match="which has not run"):
        substitute({"title": "#E" + "1" * 5_000}, {1: "Paris"}, set(), 2)


def test_own_tests_nested_past_what_python_unparses_make_an_empty_suite():
    reply = "```python\nassert add(1, 2) == " + "+".join(["1"] * 1_500) + "\n```"
    assert suite_from_tests(reply, "add") == ("", 0)


def test_well_formed_arguments_are_still_run():
    result = asyncio.run(TOOLS.invoke("calc", json.dumps({"expression": "80 + 4"})))
    assert (result.ok, result.content) == (True, "84")
