import pytest

from tests.graders.answers import canonical, from_target, graded, refused


@pytest.mark.parametrize(
    ("expected", "answer"),
    [
        (18, "18"),
        (18, "She has 16 - 3 - 4 = 9 eggs, sold at $2: 9 * 2 = 18.\n#### 18"),
        (18, "#### 18\n"),
        (18, "9 * 2 = 18 dollars.\nAnswer: $18"),
        (18, "Answer: 9 * 2 = 18"),
        (18, "Answer: 18 (9 eggs at $2)"),
        (18, "She makes 9 * 2 = 18 dollars a day"),
        (18, "The answer is 18. Check: 9 + 9 = 18."),
        (1234.5, "Answer: $1,234.50"),
        (1234567, "#### 1,234,567"),
        (-3, "The temperature falls to -3 degrees.\nAnswer: -3"),
        (50, "Answer: 50%"),
        (0.5, "Answer: 0.5"),
        (18, "Answer: not 17, 18"),
        (18, "Answer: 17 is wrong; 18"),
    ],
)
def test_the_final_number_is_read(expected, answer):
    assert graded("number", expected, answer)["correct"] is True


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("18 eggs... so\nAnswer: 17", "the reasoning's numbers do not count"),
        ("#### 17", "#### says 17"),
        ("Answer: 218", "a number holding the expected one"),
        ("Answer: 18 or 19", "a hedge"),
        ("Answer: either 17 or 18", "a hedge"),
        ("Answer: not 18", "the number negated"),
        ("I have 18 apples but give 1 away", "the last number"),
        ("no idea", "no number"),
    ],
)
def test_another_number_a_hedge_or_none_is_wrong(answer, why):
    assert graded("number", 18, answer)["correct"] is False, why


def test_tolerance_is_absolute_from_the_task_or_the_option():
    assert not graded("number", 3.14159, "Answer: 3.14")["correct"]
    assert graded("number", {"number": 3.14159, "tolerance": 0.01}, "Answer: 3.14")["correct"]
    assert graded("number:tolerance=0.01", 3.14159, "Answer: 3.14")["correct"]


@pytest.mark.parametrize(
    ("expected", "says"),
    [("18", "number"), ({"number": 1, "tolerance": -1}, "tolerance"), (True, "number")],
)
def test_a_key_that_would_grade_wrongly_is_refused(expected, says):
    assert says in refused("number", expected)


def test_an_option_it_does_not_take_is_refused():
    assert "not an option" in refused("number:tol=1", 18)


def test_the_canonical_answer_is_the_final_number():
    assert canonical("number", 18, "9 * 2 = 18\n#### 18") == "18"
    assert canonical("number", 18, "Answer: $1,234.50") == "1234.5"
    assert canonical("number", 18, "Answer: 18 or 19") == ""


def test_a_data_files_numeric_text_is_the_number():
    assert from_target("number", "1,234").number == 1234
    assert from_target("number", 7, tolerance=0.5).tolerance == 0.5


@pytest.mark.parametrize(
    "answer",
    [
        "Answer: 18, 19, 20",
        "Answer: 18 and 19",
        "Answer: roughly 18 to 20 eggs",
        "Answer: 18-20",
        "I think 18 to 20",
    ],
)
def test_numbers_listed_together_are_a_hedge(answer):
    result = graded("number", 18, answer)
    assert result["correct"] is False
    assert "hedged: states 18" in result["reason"]


@pytest.mark.parametrize(
    "answer",
    [
        "Answer: 18 eggs (3 hens x 6)",
        "3 boxes of 6 = 18",
        "Answer: 18 = 9 * 2",
        "Answer: 18, not 17",
        "Answer: 18 not 17",
        "Answer: 18 and 18",
        "She has 2, 3 and 4 hens; in all 18",
        "Answer: eighteen",
        "I make it eighteen eggs",
    ],
)
def test_a_worked_answer_or_a_number_word_reads_one_number(answer):
    assert graded("number", 18, answer)["correct"] is True


@pytest.mark.parametrize(
    "answer", ["Answer: 18 is not correct", "Answer: 18 isn't right", "Answer: not eighteen"]
)
def test_a_negation_after_the_number_negates_it(answer):
    assert graded("number", 18, answer)["correct"] is False
