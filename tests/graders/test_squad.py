import pytest

from tests.graders.answers import canonical, from_target, graded, refused

GOLD = ["Denver Broncos", "The Broncos"]


@pytest.mark.parametrize(
    ("answer", "correct"),
    [
        ("Denver Broncos", True),
        ("the broncos!", True),
        ("The final...\nAnswer: Broncos", True),
        ("Denver", False),
        ("Broncos or Panthers", False),
        ("not the Broncos", False),
        ("", False),
    ],
)
def test_em_is_squads_exact_match(answer, correct):
    verdict = graded("em", GOLD, answer)
    assert (verdict["correct"], verdict["score"]) == (correct, float(correct))


@pytest.mark.parametrize(
    ("answer", "score"),
    [
        ("Denver Broncos", 1.0),
        ("Denver", 2 / 3),  # precision 1, recall 1/2 against "Denver Broncos"
        ("the Broncos, who beat Carolina", 0.4),  # 1 of 4 tokens, recall 1 on "Broncos"
        ("Carolina Panthers", 0.0),
    ],
)
def test_f1_records_squads_token_f1_with_the_best_gold_answer(answer, score):
    verdict = graded("f1", GOLD, answer)
    assert verdict["score"] == pytest.approx(score)
    assert verdict["correct"] is (score >= 0.5)


def test_the_threshold_comes_from_the_task_or_the_option():
    assert not graded("f1", {"answers": GOLD, "threshold": 0.8}, "Denver")["correct"]
    assert not graded("f1:threshold=0.8", GOLD, "Denver")["correct"]
    assert graded("f1:threshold=0.6", GOLD, "Denver")["correct"]


@pytest.mark.parametrize(
    ("grader", "expected", "says"),
    [
        ("f1", [], "at least 1"),
        ("f1", ["the"], "nothing once normalised"),
        ("f1", {"answers": ["x"], "threshold": 0}, "threshold"),
        ("em", {"answers": ["x"], "threshold": 0.5}, "threshold"),
    ],
)
def test_a_key_that_would_grade_wrongly_is_refused(grader, expected, says):
    assert says in refused(grader, expected)


def test_the_canonical_answer_is_squad_normalised():
    assert canonical("f1", GOLD, "Answer: The Broncos!") == "broncos"
    assert canonical("em", GOLD, "An  Apple.") == "apple"


def test_a_data_files_answers_make_the_gold_answers():
    assert from_target("f1", ["a b", "c"], threshold=0.7).threshold == 0.7
    assert from_target("em", "Denver").answers == ["Denver"]


def test_a_data_files_number_is_a_gold_answer_as_its_text():
    assert from_target("em", 1889).answers == ["1889"]
    assert from_target("f1", [1889, 2.5]).answers == ["1889", "2.5"]


@pytest.mark.parametrize(
    ("answer", "score"),
    [
        ("not the Denver Broncos", 0.0),
        ("Carolina Panthers, not Denver Broncos", 0.0),
        ("It isn't the Panthers", 0.0),
        ("Denver Broncos, not Carolina Panthers", 1.0),
        ("Denver Broncos; never Carolina", 1.0),
    ],
)
def test_what_f1_negates_does_not_count_in_the_verdict_or_the_score(answer, score):
    verdict = graded("f1", GOLD, answer)
    assert (verdict["correct"], verdict["score"]) == (score >= 0.5, pytest.approx(score))


def test_a_negation_a_gold_answer_holds_is_scored():
    assert graded("f1", ["not guilty"], "Not guilty.")["score"] == 1.0
