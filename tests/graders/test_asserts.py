"""promptfoo's regex and is-json asserts (loopbench/graders/asserts.py): their regexes matched under
the answer's time limit, their schemas checked when the set loads."""

import time

import pytest

from loopbench.graders import answer_time as answer_time_module
from loopbench.graders import user_regex
from loopbench.graders.answer_time import TooSlow, answer_time
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
        ([{"type": "regex", "value": r"^\d{4}$"}], "1889", True),
        ([{"type": "regex", "value": r"^\d{4}$"}], "Answer: 1889", False),
        ([{"type": "regex", "value": r"^\d{4}$"}], "1889\n", False),
        ([{"type": "regex", "value": r"(?<=Answer )\w+"}], "Answer Paris", True),
        ([{"type": "regex", "value": r"(?<city>[A-Z]\w+)$"}], "Answer: Paris", True),
        ([{"type": "not-regex", "value": "[Ll]yon"}], "Answer: LYON", True),
    ],
)
def test_regex_asserts_are_javascripts_on_the_whole_output(asserts, answer, correct):
    assert graded("asserts", asserts, answer)["correct"] is correct


@pytest.mark.parametrize(
    ("pattern", "says"),
    [
        ("(?i)lyon", "inline flags such as (?i) are Python's"),
        (r"^Paris\Z", "write $ for the end"),
        (r"\Aparis", "write ^ for the start"),
        ("a++", "possessive"),
        ("(?P<city>x)", "JavaScript names a group (?<name>...)"),
        (r"\p{L}", "only with the u flag"),
        (r"(a)\2", "refers to group 2"),
        ("^*", "nothing to repeat"),
        ("(?:a{1000}){1000}", "copies"),
    ],
)
def test_a_regex_javascript_refuses_or_reads_otherwise_is_refused(pattern, says):
    assert says in refused("asserts", [{"type": "regex", "value": pattern}])


@pytest.mark.parametrize(
    ("asserts", "answer", "correct"),
    [
        ([{"type": "equals", "value": "Paris"}], " Paris\n", False),
        ([{"type": "equals", "value": 3.0}], "3", True),
        ([{"type": "equals", "value": {"a": [1]}}], ' {"a": [1]}\n', True),
        ([{"type": "equals", "value": {"a": True}}], '{"a": 1}', False),
        ([{"type": "contains", "value": "Paris"}], "Paris, I think.\nAnswer: Lyon", True),
        ([{"type": "not-icontains", "value": "lyon"}], "LYON?\nAnswer: Paris", False),
        ([{"type": "contains-any", "value": '"a, b", c'}], "xa, by", True),
        ([{"type": "icontains-all", "value": ["PARIS", 1889]}], "paris in 1889", True),
        ([{"type": "starts-with", "value": "Paris"}], " Paris", False),
        ([{"type": "is-json"}], "\n [1, 2] \n", True),
        ([{"type": "is-json"}], "NaN", False),
        ([{"type": "not-is-json"}], "Infinity", True),
        ([{"type": "contains", "value": "Paris", "weight": 0}], "Lyon", True),
    ],
)
def test_asserts_check_the_whole_output_as_promptfoo_does(asserts, answer, correct):
    assert graded("asserts", asserts, answer)["correct"] is correct


def test_an_assert_type_not_graded_says_which_are_in_promptfoos_terms():
    said = refused("asserts", [{"type": "llm-rubric", "value": "is polite"}])
    assert "the types graded are equals, contains" in said and "not-TYPE" in said


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
