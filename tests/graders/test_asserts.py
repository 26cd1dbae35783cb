"""promptfoo's regex and is-json asserts (graders/asserts.py): their regexes matched under
the answer's time limit, their schemas checked when the set loads."""

import time

import pytest

from graders import answer_time as answer_time_module
from graders import user_regex
from graders.answer_time import TooSlow, answer_time
from tests.graders.answers import graded, graded_apart, refused

SLOW = {"type": "regex", "value": "(x|x)+$"}
LONG_REPLY = "x" * 40 + "!"


@pytest.mark.parametrize("kind", ["regex", "not-regex"])
def test_a_regex_assert_that_takes_too_long_is_wrong_whatever_its_not(kind):
    result, seconds = graded_apart("asserts", [{**SLOW, "type": kind}], LONG_REPLY)
    assert result["correct"] is False
    assert result["reason"] == "regex '(x|x)+$' took longer than 0.5 s on this answer; graded wrong"
    assert seconds < 60


def test_fifty_slow_asserts_end_within_one_answers_limit():
    asserts = [{"type": "not-regex", "value": f"(x|x)+{'x' * i}$"} for i in range(50)]
    result, seconds = graded_apart("asserts", asserts, LONG_REPLY)
    assert result["correct"] is False and "took longer than 0.5 s" in result["reason"]
    assert seconds < 30  # fifty matches of a second each would take 50 s


def test_the_regexes_of_one_answer_share_its_limit(monkeypatch):
    monkeypatch.setattr(answer_time_module, "LIMIT_S", 0.2)
    with answer_time():
        assert user_regex.search("x+", "xxx")
        time.sleep(0.3)
        with pytest.raises(TooSlow, match=r"regex 'y' took longer than 0.2 s"):
            user_regex.search("y", "xxx")
    assert user_regex.search("x+", "xxx")  # the next answer has its own


@pytest.mark.parametrize(
    ("asserts", "answer", "correct"),
    [
        ([{"type": "regex", "value": r"^\d{4}$"}], "Answer: 1889", True),
        ([{"type": "regex", "value": r"(?<=Answer )\w+"}], "Answer Paris", True),
        ([{"type": "not-regex", "value": "(?i)lyon"}], "Answer: Paris", True),
        ([{"type": "not-regex", "value": "(?i)lyon"}], "Answer: LYON", False),
    ],
)
def test_regex_asserts_mean_what_they_meant(asserts, answer, correct):
    assert graded("asserts", asserts, answer)["correct"] is correct


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ({"$ref": "#"}, "refs loop"),
        ({"$ref": "file:///etc/passwd"}, "does not resolve inside the schema"),
        ({"type": 5}, "not a JSON Schema"),
        ("file://schema.json", "must be a JSON Schema written in the test"),
    ],
)
def test_an_is_json_schema_is_checked_when_the_set_loads(value, says):
    assert says in refused("asserts", [{"type": "is-json", "value": value}])


def test_an_is_json_schema_pattern_that_takes_too_long_is_wrong_saying_so():
    schema = {"properties": {"code": {"pattern": "(x+x+)+y"}}}
    answer = '{"code": "' + "x" * 5000 + '"}'
    result, _ = graded_apart("asserts", [{"type": "not-is-json", "value": schema}], answer)
    assert result["correct"] is False and "took longer than 0.5 s" in result["reason"]
