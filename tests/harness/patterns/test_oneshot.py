import pytest

from loopbench.harness.arms import parse_arm
from loopbench.harness.events import ParseFailureEvent
from loopbench.harness.models.scripted import text_reply
from loopbench.harness.models.types import ModelAPIError
from loopbench.harness.patterns.cot import final_answer

from .helpers import run_pattern


def test_direct_makes_one_call_without_tools():
    outcome, model, _ = run_pattern(parse_arm("direct").build(), [" 84 "])
    assert (outcome.status, outcome.answer, outcome.steps) == ("answered", "84", 1)
    assert len(model.requests) == 1 and model.requests[0].tools == ()


def test_cot_grades_only_the_answer_line():
    reply = "1973 - 1889 = 84 years.\nAnswer: 84 years"
    outcome, _, _ = run_pattern(parse_arm("cot").build(), [reply])
    assert outcome.answer == "84 years"


def test_cot_without_an_answer_line_is_its_whole_reply_as_the_graders_read_one():
    outcome, _, ctx = run_pattern(parse_arm("cot").build(), ["Not A or C; B."])
    assert (outcome.status, outcome.answer) == ("answered", "Not A or C; B.")
    assert ctx.trace.count(ParseFailureEvent) == 0


def test_cot_with_an_empty_reply_is_unparsed_and_traced():
    outcome, _, ctx = run_pattern(parse_arm("cot").build(), ["  \n"])
    assert outcome.status == "unparsed" and outcome.answer is None
    assert ctx.trace.count(ParseFailureEvent) == 1


def test_truncated_reply_is_not_passed_off_as_an_answer():
    outcome, _, _ = run_pattern(parse_arm("direct").build(), [text_reply("8", "length")])
    assert outcome.status == "truncated" and outcome.answer is None


def test_api_error_is_a_status_with_the_conversation_kept():
    outcome, _, _ = run_pattern(parse_arm("cot").build(), [ModelAPIError("HTTP 500", 500)])
    assert outcome.status == "api_error" and "HTTP 500" in outcome.error
    assert outcome.messages[0].content == "How many years after Porto?"


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("work\nAnswer: 3", "3"),
        ("work\n**Final Answer:** 3 years", "3 years"),
        ("Answer: 2\nthen again\nanswer: 3", "3"),
        ("So the answer is 3.", "3."),
        ("no conclusion", "no conclusion"),
        (" \n", None),
    ],
)
def test_final_answer_extraction(text, answer):
    assert final_answer(text) == answer
