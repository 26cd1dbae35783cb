"""The one reading of a reply, rule by rule (loopbench/graders/reading.py,
loopbench/graders/mentions.py, loopbench/graders/stated_numbers.py, loopbench/graders/naming.py),
through the graders that use it and through its own functions. Each test states one rule and checks
it in several phrasings, right and wrong. A phrasing the reading gets wrong today is marked xfail,
saying what a careful reader says of it."""

import pytest

from loopbench.graders.naming import Candidates, chosen
from loopbench.graders.reading import (
    Said,
    answer_part,
    answer_text,
    final,
    nothing,
    plain,
    read_reply,
)
from loopbench.graders.stated_numbers import stated_number
from loopbench.harness.patterns.cot import final_answer
from tests.graders.answers import graded

CITIES = {"choices": ["Paris", "Lyon", "Nice"], "answer": "B"}
PLANETS = {"choices": ["Mars", "Earth", "Jupiter", "Venus"], "answer": "C"}
EARTH = {**PLANETS, "answer": "B"}
SENTIMENT = {"label": "positive", "labels": ["positive", "negative", "neutral"]}
YES_NO = {"label": "no", "labels": ["yes", "no"]}
BRONCOS = ["Denver Broncos", "The Broncos"]
TESLA = ["Nikola Tesla"]
EXACT = {"numbers": [18]}
CITY = {"fields": {"city": "Rotterdam"}}
PUZZLE = {"numbers": [4, 9, 10, 13]}
DATE = r"\d{4}-\d{2}-\d{2}"


def misread(*case: object, why: str) -> object:
    """A case the reading gets wrong: ``why`` says what a careful reader says."""
    return pytest.param(*case, marks=pytest.mark.xfail(strict=True, reason=why))


def right(grader: str, expected: object, reply: str) -> bool:
    return graded(grader, expected, reply)["correct"]


# 1. The text read: markdown and LaTeX as the plain text they show.


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        ("**18**", "18"),
        ("`18`", "18"),
        ("~~17~~ 18", " 18"),  # struck out: not said
        ("\\frac{1}{2}", "1/2"),
        ("\\dfrac{3}{4}", "3/4"),
        ("\\text{B}", "B"),
        ("\\$5", "$5"),
        ("50\\%", "50%"),
        ("$18$", "18"),
        ("12\u00bd", "12 1/2"),
        ("\u00be", "3/4"),
        ("9 \\times 2", "9 * 2"),
    ],
)
def test_markdown_and_latex_are_read_as_the_text_they_show(written, shown):
    assert plain(written) == shown


@pytest.mark.parametrize(
    "reply",
    [
        "**Answer:** **18**",
        "Answer: `18`",
        "The answer is $\\boxed{18}$.",
        "\\boxed{\\text{18}}",
        "Answer: $18$",
        "### Final Answer\n\n**18**",
    ],
)
def test_a_marked_up_answer_grades_as_its_plain_text(reply):
    assert right("number", 18, reply) is True


# 2. The final answer: the last mark of one, else the reply whole.


@pytest.mark.parametrize(
    ("reply", "correct"),
    [
        ("Answer: 17\nLater: Answer: 18", True),
        ("The answer is 17? Let me see. #### 18", True),
        ("\\boxed{17} is wrong. Final answer: 18", True),
        ("Final answer:\n18", True),
        ("- **Answer**: 18", True),
        ("> Answer: 18", True),
        ("ANSWER: 18", True),
        ("I'd go with 18.", True),
        ("18 eggs in all... Answer: 17", False),
        ("Answer: 18\nAnswer: 17", False),
        ("#### 17", False),
    ],
)
def test_the_last_mark_of_an_answer_gives_the_final_answer(reply, correct):
    assert right("number", 18, reply) is correct


@pytest.mark.parametrize(
    ("reply", "anchored", "text"),
    [
        ("Working.\nAnswer: 18", True, "18"),
        ("The answer is 18.", True, "18."),
        ("#### 18", True, "18"),
        ("\\boxed{18}", True, "18"),
        ("Final answer\n18", True, "18"),
        ("She has 18 eggs.", False, "She has 18 eggs."),
    ],
)
def test_a_reply_with_no_mark_of_an_answer_is_read_whole(reply, anchored, text):
    answer = final(plain(reply))
    assert (answer.anchored, answer.text) == (anchored, text)


# 3. A self-correction after the final answer.


@pytest.mark.parametrize(
    ("grader", "expected", "reply", "correct"),
    [
        ("number", 20, "Answer: 18\n\nActually, correcting myself: the total is 20 dollars.", True),
        (
            "number",
            18,
            "Answer: 18\n\nActually, correcting myself: the total is 20 dollars.",
            False,
        ),
        ("number", 18, "#### 18\nWait, I made an error. The answer is 20.", False),
        ("number", 20, "Answer: 18\nWait, I miscounted: it is 20.", True),
        ("number", 20, "Answer: 18. No wait, 20.", True),
        ("number", 18, "The answer is 18. Hmm, let me recheck: 9 + 11 = 20. So it is 20.", False),
        ("choice", CITIES, "Answer: B\n\nHmm, wait. Actually it is A.", False),
        ("choice", CITIES, "Answer: A\nActually, scratch that: B.", True),
        ("choice", CITIES, "Answer: A\nOn second thought, it's B.", True),
        ("label", SENTIMENT, "Answer: negative\nActually, I misread it: it is positive.", True),
        ("label", SENTIMENT, "Answer: positive\nActually, it's neutral.", False),
        ("em", BRONCOS, "Answer: Carolina Panthers\nSorry, correction: Denver Broncos.", True),
        ("f1", BRONCOS, "Answer: Carolina Panthers. Actually, Denver Broncos.", True),
        ("em", BRONCOS, "Answer: Denver Broncos\nActually, it was the Panthers.", False),
        ("exact", EXACT, "Answer: 17\nActually, it is 18.", True),
        (
            "json",
            CITY,
            'Answer: {"city": "Gdansk"}\nWait, that is wrong: {"city": "Rotterdam"}',
            True,
        ),
        (
            "game24",
            PUZZLE,
            "Answer: (10 + 4) * (13 - 9)\nWait, that's 56. Actually: (10 - 4) * (13 - 9)",
            True,
        ),
        pytest.param("regex", "Nikola Tesla", "Answer: Edison\nActually, Nikola Tesla.", True),
        pytest.param("regex", DATE, "Answer: March 1\nWait, I mean 2024-03-01.", True),
    ],
)
def test_a_self_correction_after_the_answer_is_the_answer(grader, expected, reply, correct):
    assert right(grader, expected, reply) is correct


@pytest.mark.parametrize(
    ("grader", "expected", "reply"),
    [
        ("number", 18, "Answer: 18\nWait, that's wrong."),
        ("number", 18, "Answer: 18. Actually, I made a mistake somewhere."),
        ("number", 18, "#### 18\nHmm, I'm not sure that's right."),
        ("number", 18, "Answer: 18\nWait, I double-counted."),
        ("number", 18, "Answer: 18\nWait, 18 isn't right."),
        ("choice", CITIES, "Answer: B\nActually, that's incorrect."),
        ("choice", CITIES, "Answer: B\nActually, no."),
        ("label", SENTIMENT, "Answer: positive\nWait, no."),
        ("em", BRONCOS, "Answer: Denver Broncos\nScratch that."),
        ("f1", BRONCOS, "Answer: Denver Broncos\nI take that back."),
        ("regex", DATE, "Answer: 2024-03-01\nWait, that's wrong."),
        ("exact", EXACT, "Answer: 18\nWait, that's wrong."),
        ("json", CITY, 'Answer: {"city": "Rotterdam"}\nWait, that is wrong.'),
        ("game24", PUZZLE, "Answer: (10 - 4) * (13 - 9)\nWait, that's wrong."),
        pytest.param("number", 18, "Answer: 18\nI retract that."),
        pytest.param("number", 18, "Answer: 18\nI miscalculated."),
    ],
)
def test_a_retraction_with_nothing_after_it_passes_nothing(grader, expected, reply):
    assert right(grader, expected, reply) is False


@pytest.mark.parametrize(
    ("grader", "expected", "reply"),
    [
        ("number", 18, "Answer: 18\nWait, that's wrong."),
        ("choice", CITIES, "Answer: B\nActually, that's incorrect."),
        ("label", SENTIMENT, "Answer: positive\nWait, no."),
        ("json", CITY, 'Answer: {"city": "Rotterdam"}\nWait, that is wrong.'),
        ("game24", PUZZLE, "Answer: (10 - 4) * (13 - 9)\nWait, that's wrong."),
        pytest.param("em", BRONCOS, "Answer: Denver Broncos\nWait, that's wrong."),
        pytest.param("f1", BRONCOS, "Answer: Denver Broncos\nActually, that's incorrect."),
        pytest.param("regex", DATE, "Answer: 2024-03-01\nWait, that's wrong."),
        pytest.param("exact", EXACT, "Answer: 18\nWait, that's wrong."),
    ],
)
def test_a_retraction_says_it_is_one(grader, expected, reply):
    found = graded(grader, expected, reply)
    assert found["correct"] is False
    assert found["reason"].startswith("retracted"), found["reason"]


@pytest.mark.parametrize(
    ("grader", "expected", "reply"),
    [
        ("number", 18, "Answer: 18\nWait, let me check: 9 * 2 = 18. Yes."),
        ("number", 18, "Answer: 18\nHmm, let me double-check."),
        ("number", 18, "Answer: 18\nOops."),
        ("number", 18, "Answer: 18\nActually, yes, I'm confident."),
        ("choice", CITIES, "Answer: B\nActually, that holds up."),
        ("choice", CITIES, "Answer: B\nWait, A? No, B stands."),
        ("label", SENTIMENT, "Answer: positive\nWait, let me reread the review. Yes, glowing."),
        ("json", CITY, 'Answer: {"city": "Rotterdam"}\nWait, let me check. Yes.'),
        pytest.param("exact", EXACT, "Answer: 18\nHmm, let me double-check."),
        pytest.param("em", BRONCOS, "Answer: Denver Broncos\nHmm, let me double-check."),
        misread(
            "em",
            BRONCOS,
            "Answer: Denver Broncos\nWait, was it? Yes.",
            why="em reads 'Yes' as the corrected answer; the reader keeps Denver Broncos",
        ),
        misread(
            "f1",
            BRONCOS,
            "Answer: Denver Broncos\nActually, yes.",
            why="f1 scores 'yes' (0.00); the reader keeps Denver Broncos",
        ),
        pytest.param("regex", DATE, "Answer: 2024-03-01\nWait, let me double-check. Correct."),
    ],
)
def test_a_hesitation_with_no_new_answer_keeps_the_answer(grader, expected, reply):
    assert right(grader, expected, reply) is True


# 4. The sentence that commits.


@pytest.mark.parametrize(
    ("grader", "expected", "reply", "correct"),
    [
        ("number", 18, "17? No, 18.", True),
        ("number", 18, "Is it 17? No: 18.", True),
        ("number", 17, "17? No, 18.", False),
        ("number", 18, "Could it be 18?", False),
        ("choice", CITIES, "A? No, B.", True),
        ("choice", CITIES, "Could it be A? No. B.", True),
        ("choice", CITIES, "Is it A? No, it's B.", True),
        ("choice", CITIES, "Is it B?", False),
        ("choice", CITIES, "B? No, A.", False),
        ("label", SENTIMENT, "positive? No - negative.", False),
        ("label", SENTIMENT, "negative? No - positive.", True),
        ("f1", BRONCOS, "Broncos? No, Panthers.", False),
        ("f1", BRONCOS, "Panthers? No, Denver Broncos.", True),
        ("em", BRONCOS, "Panthers? No, Denver Broncos.", True),
        ("regex", "Nikola Tesla", "Edison? No, Nikola Tesla.", True),
        ("regex", "Nikola Tesla", "Nikola Tesla? No, Edison.", False),
        pytest.param("exact", EXACT, "17? No, 18.", True),
        pytest.param("label", YES_NO, "Is it yes? No.", True),
    ],
)
def test_a_question_commits_to_nothing_and_a_no_after_it_opens_the_answer(
    grader, expected, reply, correct
):
    assert right(grader, expected, reply) is correct


@pytest.mark.parametrize(
    ("grader", "expected", "reply"),
    [
        ("number", 18, "Answer: 18. She had 20 eggs and ate 2."),
        ("number", 18, "Answer: 18 eggs. That is 3 hens times 6."),
        ("number", 18, "Answer: 9 * 2 = 18. That is more than 12."),
        ("choice", PLANETS, "Answer: C. Mars (A) and Earth (B) are much smaller."),
        ("choice", PLANETS, "Answer: C. Mars and Earth are far lighter."),
        ("choice", CITIES, "Answer: B. A student might pick A."),
        ("label", SENTIMENT, "Answer: positive. Some call it neutral."),
        ("em", TESLA, "Answer: Nikola Tesla. Edison is often credited."),
    ],
)
def test_an_answer_lines_first_sentence_commits_not_its_explanation(grader, expected, reply):
    assert right(grader, expected, reply) is True


@pytest.mark.parametrize(
    ("grader", "expected", "reply"),
    [
        ("number", 18, "Answer: She had 20 eggs. So 18."),
        ("number", 18, "Answer: 16 - 3 - 4 = 9. 9 * 2 = 18."),
        ("choice", PLANETS, "Answer: The planet is big. So C."),
        ("label", SENTIMENT, "Answer: The acting is superb. Overall, positive."),
    ],
)
def test_an_answer_line_commits_in_its_conclusion_or_its_last_step_of_working(
    grader, expected, reply
):
    assert right(grader, expected, reply) is True


@pytest.mark.parametrize(
    ("grader", "expected", "reply", "correct"),
    [
        ("number", 18, "She had 20 eggs and ate 2. So 18 remain.", True),
        ("number", 18, "18 eggs. She had 20 and ate 2.", True),
        ("number", 18, "She had 20 eggs. She ate 2. She has 18 left.", True),
        ("number", 18, "She had 20 eggs and ate 2, leaving 18.", True),
        ("number", 18, "20 - 2 = 18. Therefore, 18 eggs remain.", True),
        ("number", 20, "She had 20 eggs and ate 2. So 18 remain.", False),
        ("choice", PLANETS, "Jupiter is biggest. Hence C.", True),
        ("choice", PLANETS, "Option A, Mars, is too small. Option B, Earth, too. So C.", True),
        ("label", SENTIMENT, "The movie was great. Overall: positive.", True),
        ("label", SENTIMENT, "Positive. The reviewer loves it, nothing negative.", True),
        misread(
            "choice",
            PLANETS,
            "C, which is Jupiter; Earth is option B.",
            True,
            why="chooses B: with no mark the last main clause's option wins, though "
            "'Earth is option B' only explains; the reader says C",
        ),
        pytest.param("choice", PLANETS, "My first thought was B, but it's C.", True),
        pytest.param("number", 18, "My first thought was 17, but it's 18.", True),
    ],
)
def test_a_reply_with_no_mark_commits_in_its_conclusion_or_its_terse_first_sentence(
    grader, expected, reply, correct
):
    assert right(grader, expected, reply) is correct


# The mentions: negated, compared, an aside, offered; the answer is the committed one.


@pytest.mark.parametrize(
    ("expected", "reply"),
    [
        (PLANETS, "It's C - Jupiter is over 300 Earth masses."),
        (PLANETS, "Answer: C (Jupiter). Mars (A) and Earth (B) are much smaller."),
        (EARTH, "I'd eliminate A, C and D, which leaves B."),
        (EARTH, "Eliminating A, C and D leaves B."),
        (EARTH, "We can rule out A, C and D. So B."),
        (PLANETS, "Jupiter is the biggest, far bigger than Earth or Mars. Answer: C"),
        (PLANETS, "Answer: C\nExplanation: Earth (B) and Mars (A) are smaller; Venus (D) too."),
        (PLANETS, "The answer is C because Earth is tiny next to it."),
        (
            PLANETS,
            "Let's go through them. A: Mars - small. B: Earth - small. "
            "C: Jupiter - huge. D: Venus - small. Answer: C",
        ),
    ],
)
def test_an_option_named_in_the_explanation_is_not_chosen(expected, reply):
    assert right("choice", expected, reply) is True


@pytest.mark.parametrize(
    ("grader", "expected", "reply", "correct"),
    [
        ("choice", CITIES, "not A but B", True),
        ("choice", CITIES, "B, not A", True),
        ("choice", CITIES, "Answer: not B", False),
        ("choice", PLANETS, "It's not C, it's D.", False),
        ("choice", CITIES, "B instead of A", True),
        ("choice", CITIES, "A rather than B", False),
        ("label", SENTIMENT, "The review is not positive.", False),
        ("label", SENTIMENT, "Not positive; negative.", False),
        ("number", 18, "Answer: not 17, 18", True),
        ("number", 18, "Answer: 18, not 17 or 19", True),
        ("number", 17, "Answer: 18, not 17", False),
        ("f1", BRONCOS, "It was not Carolina but the Denver Broncos", True),
        ("f1", BRONCOS, "not the Denver Broncos", False),
        ("em", TESLA, "It was not Edison but Nikola Tesla", True),
    ],
)
def test_a_negated_mention_is_not_the_answer(grader, expected, reply, correct):
    assert right(grader, expected, reply) is correct


@pytest.mark.parametrize(
    ("grader", "expected", "reply", "correct"),
    [
        ("choice", CITIES, "A is wrong, so B", True),
        ("choice", PLANETS, "A, B and D are wrong, so C.", True),
        ("choice", CITIES, "B is wrong", False),
        ("choice", CITIES, "Answer: B. A is tempting but wrong.", True),
        ("number", 18, "Answer: 17 is wrong; 18", True),
        ("number", 18, "Answer: 18 isn't right, it's 17", False),
        ("number", 18, "Answer: 18 is not correct", False),
        ("label", SENTIMENT, "negative is wrong: positive", True),
        pytest.param("number", 18, "Answer: 18 out of 20", True),
        pytest.param("number", 18, "She has 18 eggs left out of 20.", True),
        pytest.param("choice", CITIES, "B; A and C don't fit", True),
    ],
)
def test_a_negation_after_a_mention_negates_it(grader, expected, reply, correct):
    assert right(grader, expected, reply) is correct


@pytest.mark.parametrize(
    ("grader", "expected", "reply", "correct"),
    [
        ("choice", PLANETS, "Not A, C or D; so B.", False),
        ("choice", EARTH, "Not A, C or D; so B.", True),
        ("choice", PLANETS, "Neither A nor B nor D. C.", True),
        ("choice", PLANETS, "It isn't A, B or D, so it's C.", True),
        ("choice", PLANETS, "C rather than A or B", True),
        ("choice", CITIES, "not A or B", False),
        ("label", SENTIMENT, "positive, not negative or neutral", True),
        ("label", SENTIMENT, "It isn't negative or neutral; positive.", True),
        ("label", SENTIMENT, "not negative or neutral: positive", True),
        ("number", 18, "neither 17 nor 19 but 18", True),
        ("number", 18, "So she has 18 eggs, not 17 or 19", True),
        (
            "exact",
            {"entities": ["Rotterdam"], "distractors": ["Gdansk", "Porto"]},
            "Not Gdansk or Porto; Rotterdam.",
            True,
        ),
        ("em", BRONCOS, "Not the Panthers or the Chiefs: the Denver Broncos.", True),
    ],
)
def test_a_negation_covers_a_list(grader, expected, reply, correct):
    assert right(grader, expected, reply) is correct


@pytest.mark.parametrize(
    ("grader", "expected", "reply"),
    [
        ("label", SENTIMENT, "Answer: neither negative nor neutral: positive."),
        ("label", SENTIMENT, "Answer: neither negative nor neutral \u2013 positive."),
        ("label", SENTIMENT, "not negative, but positive"),
        ("choice", CITIES, "Not A; B."),
        ("number", 18, "Not 17, not 19: 18."),
        pytest.param("label", SENTIMENT, "Not negative - positive."),
        pytest.param("choice", CITIES, "Neither A nor C - B."),
        pytest.param("label", SENTIMENT, "Answer: neither negative nor neutral - positive."),
    ],
)
def test_a_negation_reaches_no_further_than_its_clause(grader, expected, reply):
    assert right(grader, expected, reply) is True


@pytest.mark.parametrize(
    ("grader", "expected", "reply", "correct"),
    [
        ("choice", PLANETS, "C: heavier than A, B and D together.", True),
        ("choice", PLANETS, "Jupiter, bigger than Earth.", True),
        ("choice", PLANETS, "C, unlike B, is a gas giant.", True),
        ("choice", PLANETS, "Answer: C, compared to B it is huge.", True),
        ("number", 18, "Answer: 18, more than 17.", True),
        ("number", 18, "18, compared with 12 last week", True),
        ("number", 18, "The answer is 18, between 10 and 20.", True),
        ("number", 18, "Answer: more than 17", False),
        ("label", SENTIMENT, "more positive than negative", True),
        ("label", SENTIMENT, "more negative than positive", False),
        pytest.param("choice", PLANETS, "Between A and C, C is right.", True),
    ],
)
def test_a_compared_mention_is_not_the_answer(grader, expected, reply, correct):
    assert right(grader, expected, reply) is correct


@pytest.mark.parametrize(
    ("grader", "expected", "reply", "correct"),
    [
        ("number", 18, "18 eggs (3 hens x 6)", True),
        ("number", 6, "18 eggs (3 hens x 6)", False),
        ("number", 18, "Answer: 18 (9 x 2)", True),
        ("number", 1.5, "Answer: 1.5 (3/2)", True),
        ("choice", PLANETS, "C (Jupiter; B is Earth)", True),
        ("choice", PLANETS, "Answer: C (A and B are too small)", True),
        ("label", SENTIMENT, "positive (negative at first glance)", True),
        ("em", TESLA, "Nikola Tesla (1856-1943)", True),
        ("f1", TESLA, "Nikola Tesla (not Edison)", True),
    ],
)
def test_an_aside_in_brackets_is_not_the_answer(grader, expected, reply, correct):
    assert right(grader, expected, reply) is correct


@pytest.mark.parametrize(
    ("expected", "reply", "correct"),
    [
        (PLANETS, "C (Jupiter)", True),
        (PLANETS, "Answer: (C) Jupiter", True),
        (CITIES, "B) Lyon", True),
        (CITIES, "B) Paris", False),
        ({**CITIES, "answer": "B"}, "C) Nice is wrong, B) Lyon", True),
    ],
)
def test_an_options_letter_and_its_text_side_by_side_are_one_choice(expected, reply, correct):
    assert right("choice", expected, reply) is correct


@pytest.mark.parametrize(
    ("grader", "expected", "reply"),
    [
        ("choice", PLANETS, "C, since Mars is small."),
        ("choice", CITIES, "B, although A is tempting"),
        ("choice", CITIES, "B while A is tempting"),
        ("choice", CITIES, "Answer: B, as A is in France too"),
        ("number", 18, "She has 18 eggs, since she had 20 and ate 2."),
        ("number", 18, "The total is 18 dollars, which is 2 more than 16."),
        pytest.param("label", SENTIMENT, "Positive, despite one negative remark."),
    ],
)
def test_a_clause_that_explains_the_answer_does_not_give_another(grader, expected, reply):
    assert right(grader, expected, reply) is True


# Hedges: what the reading cannot tell is never a pass, and says it is a hedge.


@pytest.mark.parametrize(
    ("grader", "expected", "reply"),
    [
        ("choice", CITIES, "A or B"),
        ("choice", CITIES, "Answer: A/B"),
        ("choice", CITIES, "Answer: B and C"),
        ("choice", CITIES, "Either B or C."),
        ("choice", CITIES, "Paris or Lyon"),
        ("label", {"label": "positive"}, "positive or negative"),
        ("choice", CITIES, "Probably B, but C might also work."),
        ("number", 18, "Answer: 17 or 18"),
        ("number", 18, "Answer: 18-20"),
        ("number", 18, "Answer: 18, 19, 20"),
        ("label", SENTIMENT, "positive or neutral"),
        ("label", SENTIMENT, "Answer: positive/neutral"),
        ("label", SENTIMENT, "mostly positive, partly neutral"),
        ("em", BRONCOS, "Denver Broncos or Carolina Panthers"),
        ("f1", BRONCOS, "Denver Broncos/Carolina Panthers"),
        ("game24", PUZZLE, "Answer: (10 - 4) * (13 - 9) or 4 + 9 + 10 + 13"),
        ("json", CITY, '{"city":"Rotterdam"} or {"city":"Gdansk"}'),
    ],
)
def test_two_committed_answers_are_a_hedge(grader, expected, reply):
    found = graded(grader, expected, reply)
    assert found["correct"] is False
    assert found["reason"].startswith("hedged"), found["reason"]


@pytest.mark.parametrize(
    ("grader", "reply", "correct"),
    [
        ("number", "Answer: 18 or more", False),
        ("number", "Answer: at least 18", False),
        ("number", "Answer: 18+", False),
        ("number", "Answer: up to 18", False),
        ("number", "Answer: over 18", False),
        ("number", "Answer: 18 or fewer", False),
        ("exact", "Answer: at least 18", False),
        ("exact", "Answer: 18 or more", False),
        ("number", "Answer: roughly 18", True),
        ("number", "Answer: about 18", True),
        ("number", "18 (or so)", True),
        pytest.param("number", "Answer: 18 at most", False),
    ],
)
def test_an_amount_left_open_is_a_hedge(grader, reply, correct):
    expected = 18 if grader == "number" else EXACT
    found = graded(grader, expected, reply)
    assert found["correct"] is correct
    assert correct or "or more" in found["reason"], found["reason"]


@pytest.mark.parametrize(
    ("grader", "expected", "reply"),
    [
        ("choice", CITIES, "B. Or maybe C."),
        ("choice", {**CITIES, "answer": "C"}, "B. Or maybe C."),
        ("number", 19, "Answer: 18. Or maybe 19."),
        ("choice", CITIES, "Answer: B, possibly C"),
        ("choice", CITIES, "Answer: B, though C is possible"),
        ("number", 18, "Answer: 18. Or maybe 19."),
        ("number", 18, "Answer: 18\nPerhaps 20, though."),
        ("label", SENTIMENT, "Answer: positive. Or possibly neutral."),
        ("label", SENTIMENT, "positive, maybe neutral"),
        ("em", BRONCOS, "Answer: Denver Broncos. Or maybe the Panthers."),
        ("f1", BRONCOS, "Denver Broncos, possibly Carolina Panthers"),
        ("f1", BRONCOS, "Answer: Denver Broncos\nPerhaps the Panthers."),
        ("regex", DATE, "Answer: 2024-03-01. Or maybe 2024-03-02."),
        ("game24", PUZZLE, "Answer: (10 - 4) * (13 - 9) or maybe (10 + 4) * (13 - 9)"),
        pytest.param("choice", CITIES, "Answer: B. C could also be right."),
        pytest.param("choice", CITIES, "Answer: B (or C)"),
        pytest.param("choice", CITIES, "Answer: B\n\nC is plausible too."),
        pytest.param("exact", EXACT, "Answer: 18. Or maybe 19."),
        ("exact", EXACT, "Answer: 17. Or maybe 18."),
        pytest.param("json", CITY, 'Answer: {"city": "Rotterdam"}. Or maybe {"city": "Gdansk"}'),
    ],
)
def test_another_answer_offered_after_the_answer_is_a_hedge(grader, expected, reply):
    assert right(grader, expected, reply) is False


# The same words read alike in every grader.


@pytest.mark.parametrize(
    ("grader", "expected", "reply", "correct"),
    [
        ("number", 18, "not 17 but 18", True),
        ("exact", EXACT, "not 17 but 18", True),
        ("label", SENTIMENT, "not negative but positive", True),
        ("choice", CITIES, "not A but B", True),
        ("f1", TESLA, "It was not Edison but Nikola Tesla", True),
        ("em", TESLA, "It was not Edison but Nikola Tesla", True),
        ("number", 18, "18 without doubt", True),
        ("exact", EXACT, "18 without doubt", True),
        ("label", SENTIMENT, "positive without doubt", True),
        ("choice", CITIES, "B without doubt", True),
        ("number", 18, "18 (or so)", True),
        ("label", SENTIMENT, "positive (or so)", True),
        ("number", 18, "18, not 17", True),
        ("exact", EXACT, "18, not 17", True),
        ("label", SENTIMENT, "positive, not negative", True),
        ("choice", CITIES, "B, not A", True),
        ("em", BRONCOS, "Denver Broncos, not Panthers", True),
        ("f1", BRONCOS, "Denver Broncos, not Panthers", True),
        ("number", 18, "17 or 18", False),
        ("exact", EXACT, "17 or 18", False),
        ("label", SENTIMENT, "negative or positive", False),
        ("choice", CITIES, "A or B", False),
        ("em", TESLA, "Edison or Nikola Tesla", False),
        ("f1", TESLA, "Edison or Nikola Tesla", False),
        ("number", 18, "It is 18, definitely not 17.", True),
        ("label", SENTIMENT, "It is positive, definitely not negative.", True),
        ("exact", EXACT, "It is 18, definitely not 17.", True),
        pytest.param("f1", TESLA, "Nikola Tesla without doubt", True),
        pytest.param("em", TESLA, "It is Nikola Tesla, definitely not Edison.", True),
    ],
)
def test_the_same_words_read_alike_in_every_grader(grader, expected, reply, correct):
    assert right(grader, expected, reply) is correct


# Numbers, in every written form.


@pytest.mark.parametrize(
    ("reply", "value", "percent"),
    [
        ("Answer: 18", 18, False),
        ("Answer: $1,234.50", 1234.5, False),
        ("Answer: 18,000", 18000, False),
        ("Answer: -3 degrees", -3, False),
        ("Answer: \u22123", -3, False),
        ("Answer: .5", 0.5, False),
        ("Answer: 1/2", 0.5, False),
        ("Answer: $\\frac{1}{2}$", 0.5, False),
        ("\\boxed{\\dfrac{3}{4}}", 0.75, False),
        ("Answer: 3 1/2", 3.5, False),
        ("Answer: 12\u00bd", 12.5, False),
        ("Answer: 1.5 million", 1_500_000, False),
        ("Answer: 3 thousand", 3000, False),
        ("Answer: 2k", 2000, False),
        ("Answer: $2M", 2_000_000, False),
        ("Answer: 25%", 25, True),
        ("Answer: 50\\%", 50, True),
        ("Answer: eighteen", 18, False),
        ("Answer: twenty-one", 21, False),
        ("Answer: one hundred and five", 105, False),
        ("Answer: two and a half", 2.5, False),
        ("Answer: three quarters", 0.75, False),
        ("Answer: minus seven", -7, False),
        ("Answer: 8 degrees below zero", -8, False),
        pytest.param("Answer: 25 percent", 25, True),
        pytest.param("Answer: a dozen", 12, False),
    ],
)
def test_numbers_in_every_written_form(reply, value, percent):
    said = stated_number(reply).value
    assert said is not None
    assert (said.value, said.percent) == (pytest.approx(value), percent)


@pytest.mark.parametrize(
    ("expected", "reply", "correct"),
    [
        (0.25, "Answer: 25%", True),
        (25, "Answer: 25%", True),
        (2.5, "Answer: 25%", False),
        (0.5, "Answer: 1/2", True),
        (1, "Answer: 1/2", False),
        (2, "Answer: 1/2", False),
        (1_500_000, "Answer: 1.5 million", True),
        (1.5, "Answer: 1.5 million", False),
        pytest.param(150, "Answer: 150 km/h", True),
        pytest.param(3, "Answer: 3 hours and 20 minutes", False),
    ],
)
def test_a_percentage_a_fraction_or_a_scaled_number_is_one_number(expected, reply, correct):
    assert right("number", expected, reply) is correct


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("Answer: 9 * 2 = 18", 18),
        ("Answer: 18 = 9 * 2", 18),
        ("She has 9 * 2 = 18 eggs.", 18),
        ("16 - 3 - 4 = 9; 9 * 2 = $18", 18),
        ("Answer: 16 - 3 - 4 = 9. 9 * 2 = 18.", 18),
    ],
)
def test_a_worked_answer_states_the_result_side_of_equals(reply, value):
    said = stated_number(reply).value
    assert said is not None and said.value == value


# Naming a candidate: an option by letter or text, a label.

CITY_OPTIONS = Candidates([["Paris"], ["Lyon"], ["Nice"]], ["A", "B", "C"], "chooses", "option")


@pytest.mark.parametrize(
    ("reply", "index"),
    [
        ("B", 1),
        ("(B)", 1),
        ("b)", 1),
        ("B) Lyon", 1),
        ("The answer is Lyon.", 1),
        ("A good guess is B", 1),
        ("I think B.", 1),
        ("A is right.", 0),
        ("Answer: C", 2),
        ("Apple", None),
        ("A or B", None),
        ("not A", None),
    ],
)
def test_an_option_is_chosen_by_its_letter_as_a_word_or_by_its_text(reply, index):
    assert chosen(reply, CITY_OPTIONS).value == index


@pytest.mark.parametrize(
    ("expected", "reply", "correct"),
    [
        (
            {"label": "very positive", "labels": ["very positive", "positive"]},
            "Very positive!",
            True,
        ),
        ({"label": "positive", "labels": ["very positive", "positive"]}, "very positive", False),
        ({"label": "positive", "labels": ["positive", "negative"]}, "positively", False),
        (
            {"label": "not_entailment", "labels": ["entailment", "not_entailment"]},
            "not_entailment",
            True,
        ),
        (
            {"label": "entailment", "labels": ["entailment", "not_entailment"]},
            "not_entailment",
            False,
        ),
    ],
)
def test_a_label_is_named_as_whole_words_the_longest_where_two_overlap(expected, reply, correct):
    assert right("label", expected, reply) is correct


# The module's own functions.


def test_read_reply_hands_each_committed_sentence_to_the_check_in_order():
    seen: list[tuple[str, bool]] = []

    def check(sentence: str, anchored: bool) -> Said[str]:
        seen.append((sentence, anchored))
        return nothing("states nothing")

    said = read_reply("She had 20 eggs at first. She ate 2. So 18.", check)
    assert seen == [("So 18.", False), ("She ate 2.", False), ("She had 20 eggs at first.", False)]
    assert (said.value, said.stated) == (None, False)
    seen.clear()
    read_reply("Answer: 18. She had 20.", check)
    assert seen == [("18.", True), ("She had 20.", True)]


@pytest.mark.parametrize(
    ("reply", "said", "why"),
    [
        ("Answer: 18. She had 20.", "18.", ""),
        ("Broncos? No, Panthers.", "Panthers.", ""),
        pytest.param("Answer: Denver Broncos\nActually, the Panthers.", "the Panthers.", ""),
        ("Is it the Broncos?", None, "no answer"),
        ("", None, "no answer"),
    ],
)
def test_answer_text_is_the_sentence_the_reply_commits_in(reply, said, why):
    found = answer_text(reply)
    assert (found.value, found.why) == (said, why)


@pytest.mark.parametrize(
    ("reply", "kept"),
    [
        ("Working: 9 * 2.\nAnswer: 18", "18"),
        ("Answer: **18**", "18"),
        ("#### 18", "18"),
        ("\\boxed{18}", "18"),
        (
            "Answer: 18\n\nActually, correcting myself: the total is 20 dollars.",
            "Answer: 18\n\nActually, correcting myself: the total is 20 dollars.",
        ),
        ("Answer: B\nHmm, wait. Actually it is A.", "Answer: B\nHmm, wait. Actually it is A."),
        ("Answer: 18. Or maybe 19.", "Answer: 18. Or maybe 19."),
        ("Answer: B. C could also be right.", "Answer: B. C could also be right."),
        (
            "Answer: 18 eggs in total. She sold 17 of them.",
            "Answer: 18 eggs in total. She sold 17 of them.",
        ),
        ("Answer: B\n\nC could also be right.", "Answer: B\n\nC could also be right."),
        ("She has 18 eggs.", None),
    ],
)
def test_cots_answer_keeps_a_correction_after_the_answer_line(reply, kept):
    assert answer_part(reply) == kept
    # A reply marking no answer is cot's answer whole, read as every grader reads one.
    assert final_answer(reply) == (reply if kept is None else kept)


@pytest.mark.parametrize(
    ("reply", "expected", "correct"),
    [
        ("Answer: 18\n\nActually, correcting myself: the total is 20 dollars.", 20, True),
        ("Answer: 18\n\nActually, correcting myself: the total is 20 dollars.", 18, False),
        ("Answer: 18\nWait, that's wrong.", 18, False),
        ("Answer: 18. Or maybe 19.", 18, False),
    ],
)
def test_what_cot_keeps_grades_as_the_whole_reply_does(reply, expected, correct):
    kept = final_answer(reply)
    assert kept is not None
    assert right("number", expected, kept) is correct
    assert right("number", expected, reply) is correct


# What f1 and em take beyond SQuAD's token score.


@pytest.mark.parametrize(
    ("gold", "reply", "correct"),
    [
        (["not guilty"], "guilty", False),
        (["not guilty"], "Not guilty.", True),
        (["guilty"], "not guilty", False),
        (["Treaty of Versailles"], "Treaty of Paris", False),
        (["Denver Broncos"], "Denver Nuggets", False),
        (["Treaty of Versailles"], "Versailles", True),
        (["Denver Broncos"], "the Broncos from Denver", True),
    ],
)
def test_f1_scores_nothing_for_the_other_polarity_or_another_thing_in_part_of_the_gold(
    gold, reply, correct
):
    found = graded("f1", gold, reply)
    assert found["correct"] is correct
    assert correct or found["score"] == 0.0


@pytest.mark.parametrize(
    ("grader", "gold", "reply", "correct"),
    [
        ("em", ["Denver Broncos"], "Denver Broncos or Carolina Panthers", False),
        ("f1", ["Denver Broncos"], "Denver Broncos or Carolina Panthers", False),
        ("f1", ["Nikola Tesla"], "Either Tesla or Edison", False),
        ("em", ["trick or treat"], "Trick or treat!", True),
        ("f1", ["trick or treat"], "trick or treat", True),
    ],
)
def test_alternatives_are_a_hedge_in_em_and_f1_unless_a_gold_answer_is_written_so(
    grader, gold, reply, correct
):
    assert right(grader, gold, reply) is correct


@pytest.mark.parametrize(
    ("reply", "correct"),
    [
        ("Answer: (10 - 4) * (13 - 9).", True),
        ("Answer: 24 = (10-4)*(13-9)", True),
        ("Answer: (10 - 4) * (13 - 9) or (10 + 4) * (13 - 9)", False),
        ("Answer: 4 + 9 + 10 + 13 or (10 - 4) * (13 - 9)", False),
        ("Not 14 * 4, that's 56; (10 - 4) * (13 - 9)", True),
        pytest.param("(10 - 4) * (13 - 9) = 6 * 4 = 24", True),
    ],
)
def test_game24_reads_the_one_expression_committed_to(reply, correct):
    assert right("game24", PUZZLE, reply) is correct


@pytest.mark.parametrize(
    ("grader", "expected", "reply", "correct"),
    [
        ("number", 18, "Answer: 18\n\nHmm, wait, that doesn't seem right.", False),
        ("choice", PLANETS, "Answer: C\n\nHmm, that doesn't look right.", False),
        ("choice", PLANETS, "C) Jupiter, far bigger than Earth (B) or Venus (D).", True),
        ("choice", PLANETS, "C, not Earth (B) or Venus (D).", True),
        ("number", 0.5, "Not 1 in 4 as it may seem, so the probability is 1/2.", True),
        ("number", 4, "The chance is not 1 in 4.", False),
        ("number", 36, "Answer: 36 (9 boxes x 4)", True),
        ("label", SENTIMENT, "positive (negative at first glance)", True),
        ("em", BRONCOS, "The Denver Broncos won Super Bowl 50.", True),
        ("em", BRONCOS, "The Denver Broncos lost.", False),
        (
            "game24",
            {"numbers": [1, 5, 5, 5]},
            "Answer: (5 - 1/5) * 5\nHmm, let me use 5 * 5 - 1.",
            False,
        ),
        ("game24", {"numbers": [1, 2, 3, 4]}, "$$ (1+2+3)\\times 4 = 24 $$", True),
    ],
)
def test_mentions_in_brackets_and_phrases_read_with_their_neighbours(
    grader, expected, reply, correct
):
    assert right(grader, expected, reply) is correct
