import pytest

from tests.graders.answers import canonical, from_target, graded, refused

SENTIMENT = {"label": "positive", "labels": ["positive", "negative", "neutral"]}


@pytest.mark.parametrize(
    "answer",
    [
        "positive",
        "Positive.",
        "POSITIVE!",
        "Sentiment: positive",
        "The reviewer loved it.\nAnswer: positive",
        "positive, not negative",
        "The answer is positive.",
        "It's positive rather than negative",
        "positive instead of negative",
        "positive, not negative or neutral",
        "Negative and neutral are both wrong: positive",
    ],
)
def test_the_expected_label_alone_is_right(answer):
    assert graded("label", SENTIMENT, answer)["correct"] is True


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("negative", "another label"),
        ("not positive, negative", "the label negated and another named"),
        ("not positive", "the label negated"),
        ("isn't positive", "negated with an apostrophe"),
        ("negative rather than positive", "the label negated by 'rather than'"),
        ("not positive or negative", "a negation covers a list"),
        ("positive is wrong", "the label negated after it"),
        ("positive or negative", "a hedge"),
        ("positive, negative or neutral", "every label"),
        ("positively", "not the word"),
        ("", "nothing"),
    ],
)
def test_another_label_a_negation_or_a_hedge_is_wrong(answer, why):
    assert graded("label", SENTIMENT, answer)["correct"] is False, why


def test_a_label_with_an_apostrophe_is_named_as_written():
    unsure = {"label": "don't know", "labels": ["yes", "no", "don't know"]}
    assert graded("label", unsure, "I don't know.")["correct"] is True
    assert graded("label", unsure, "No")["correct"] is False


def test_multi_word_labels_match_whole_and_longest_first():
    labels = ["very positive", "positive", "negative"]
    assert graded("label", {"label": "very positive", "labels": labels}, "Very positive")["correct"]
    assert not graded("label", {"label": "positive", "labels": labels}, "very positive")["correct"]


def test_a_label_holding_not_is_a_label():
    rte = {"label": "not_entailment", "labels": ["entailment", "not_entailment"]}
    assert graded("label", rte, "not_entailment")["correct"] is True
    assert graded("label", {**rte, "label": "entailment"}, "not_entailment")["correct"] is False


def test_the_sets_labels_come_from_the_option():
    spec = 'label:labels=["positive","negative"]'
    assert graded(spec, {"label": "positive"}, "positive or negative")["correct"] is False


def test_a_label_outside_the_labels_is_refused():
    assert "not one of labels" in refused("label", {"label": "happy", "labels": ["a", "b"]})


def test_the_canonical_answer_is_the_label_named():
    assert canonical("label", SENTIMENT, "Sentiment: Positive.") == "positive"
    assert canonical("label", SENTIMENT, "positive or negative") == ""


def test_a_data_files_target_is_the_label():
    assert from_target("label", "positive").label == "positive"
