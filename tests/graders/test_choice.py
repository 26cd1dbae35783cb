import pytest

from tests.graders.answers import canonical, from_target, graded, refused

CITIES = {"choices": ["Paris", "Lyon", "Nice"], "answer": "B"}


@pytest.mark.parametrize(
    "answer",
    [
        "B",
        "(B)",
        "B) Lyon",
        "b)",
        "Answer: B",
        "The answer is Lyon.",
        "I considered Paris and Nice at first.\nAnswer: B",
        "B, not A",
        "Not A, not C: B",
        "Neither A nor C. The answer is B.",
        "A is wrong, so B",
        "A good guess is B",
        "**Answer:** (B) Lyon",
        "B (Lyon) rather than A",
        "B instead of A",
        "B, not A or C",
        "It can't be A or C, so B",
        "A and C are wrong; B",
        "Answer: B. A is tempting but wrong.",
        "C) Nice is wrong, B) Lyon",
        "B is right but not A",
        "Not A, B",
    ],
)
def test_one_option_chosen_and_it_is_the_expected_one_is_right(answer):
    assert graded("choice", CITIES, answer)["correct"] is True


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("A", "another option"),
        ("Paris", "another option by its text"),
        ("A or B", "two letters"),
        ("Paris or Lyon", "two texts"),
        ("B or maybe C", "a hedge"),
        ("A, B, C", "every option"),
        ("All of the above", "every option in words"),
        ("Paris, Lyon or Nice", "every option by text"),
        ("not B", "the expected one negated"),
        ("not A", "only a negation"),
        ("not A or B", "a negation covers a list"),
        ("B is wrong", "the expected one negated after it"),
        ("A rather than B", "the expected one negated by 'rather than'"),
        ("Apple", "a letter only as a word of its own"),
        ("B) Paris", "letter and text disagree"),
        ("", "nothing"),
        ("I don't know", "no option"),
    ],
)
def test_none_or_several_or_the_wrong_option_is_wrong(answer, why):
    assert graded("choice", CITIES, answer)["correct"] is False, why


def test_the_reason_says_a_hedge_is_a_hedge():
    assert graded("choice", CITIES, "A or B")["reason"] == "hedged: chooses A, B"


def test_all_of_the_above_is_an_option_when_the_question_lists_it():
    options = {"choices": ["Paris", "Lyon", "All of the above"], "answer": "C"}
    assert graded("choice", options, "All of the above")["correct"] is True


def test_the_expected_may_name_the_option_by_its_text():
    assert graded("choice", {**CITIES, "answer": "Lyon"}, "B")["correct"] is True


@pytest.mark.parametrize(
    ("expected", "says"),
    [
        ({"choices": [], "answer": "A"}, "at least 2"),
        ({"choices": ["Paris", "Lyon"], "answer": "C"}, "not one of the 2 options"),
        ({"choices": ["Paris", "Lyon"], "answer": "Nice"}, "neither an option"),
        ({"choices": ["Paris", "paris"], "answer": "A"}, "read alike"),
        ({"answer": "A"}, "choices"),
    ],
)
def test_a_key_that_would_grade_wrongly_is_refused(expected, says):
    assert says in refused("choice", expected)


def test_the_canonical_answer_is_the_chosen_letter():
    assert canonical("choice", CITIES, "The answer is Lyon") == "B"
    assert canonical("choice", CITIES, "(b)") == "B"
    assert canonical("choice", CITIES, "A or B") == ""
    assert canonical("choice", CITIES, "none") == ""


def test_a_data_files_target_letter_and_choices_make_the_expected():
    expected = from_target("choice", ["C"], choices=["Paris", "Lyon", "Nice"])
    assert (expected.choices, expected.answer) == (["Paris", "Lyon", "Nice"], "C")


def test_i_in_a_contraction_is_not_option_i():
    ten = {"choices": [f"option {n}" for n in range(10)], "answer": "B"}
    assert graded("choice", ten, "I'm fairly sure it's B")["correct"] is True
