import pytest

from tests.graders.answers import graded, refused

DATE = r"\d{4}-\d{2}-\d{2}"


@pytest.mark.parametrize(
    ("expected", "answer", "correct"),
    [
        (DATE, "2024-03-01", True),
        (DATE, "  2024-03-01 \n", True),
        (DATE, "Working it out...\nAnswer: 2024-03-01", True),
        (DATE, "It was 2024-03-01.", False),
        (DATE, "2024-03-01 or 2024-03-02", False),
        (DATE, "not 2024-03-01", False),
        ("yes|no", "yes", True),
        ("yes|no", "yes or no", False),
        ({"pattern": "yes", "ignore_case": True}, "Yes", True),
        ("yes", "Yes", False),
    ],
)
def test_the_whole_final_answer_must_match(expected, answer, correct):
    assert graded("regex", expected, answer)["correct"] is correct


@pytest.mark.parametrize("pattern", ["(", "[a-", "*x"])
def test_a_pattern_that_does_not_compile_is_refused(pattern):
    assert "not a regular expression" in refused("regex", pattern)
