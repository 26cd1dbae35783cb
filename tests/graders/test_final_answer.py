"""The one rule every answer grader reads: which text of a reply is its final answer."""

import pytest

from graders.final_answer import final_answer


@pytest.mark.parametrize(
    ("reply", "final"),
    [
        ("Rotterdam", "Rotterdam"),
        ("  84 \n", "84"),
        ("3 + 4 = 7, so\nAnswer: 7", "7"),
        ("**Final Answer:** Rotterdam", "Rotterdam"),
        ("- Answer: **42**", "42"),
        ("answer: a\nmore thought\nANSWER: b.", "b."),
        ("I would say A. Actually, final answer: B", "B"),
        ("Counting again, the final answer is 42", "42"),
        ("Final answer: 5\nOn reflection the final answer is 6", "6"),
        ("Answer: 5\nI checked it twice.", "5"),
        ("Answer:\n42", "42"),
        ("The answer is 5", "5"),
        ("I think the answer is Denver Broncos.", "Denver Broncos."),
        ('The format is {"a": 1}. My answer: {"a": 2}', '{"a": 2}'),
        ("Answering this takes two steps: 5", "Answering this takes two steps: 5"),
        ("Answer:", "Answer:"),
    ],
)
def test_the_final_answer_is_the_last_answer_line_else_the_whole_reply(reply, final):
    assert final_answer(reply) == final
