"""Estimating the tokens of a long reply: tokenized a piece at a time, each cut where a word
starts, and past ``TOKENIZED_CHARS`` counted at the rate of what was tokenized."""

from __future__ import annotations

from loopbench.harness.models.estimate import (
    PIECE_CHARS,
    TOKENIZED_CHARS,
    count_text,
    estimated_usage,
)
from loopbench.harness.models.types import Message, ModelRequest, ModelResponse


class Words:
    """A tokenizer of words, keeping what it was asked to count."""

    def __init__(self) -> None:
        self.given: list[int] = []

    def __call__(self, text: str) -> int:
        self.given.append(len(text))
        return len(text.split())


def test_a_long_text_is_tokenized_in_pieces_that_split_as_the_whole_does():
    count = Words()
    text = "word " * (3 * PIECE_CHARS // 5)
    assert count_text(count, text) == len(text.split())
    assert len(count.given) > 1 and max(count.given) <= PIECE_CHARS


def test_past_the_tokenized_part_the_rest_counts_at_its_rate():
    count = Words()
    text = "word " * (TOKENIZED_CHARS // 5 * 8)  # eight times the part tokenized
    assert abs(count_text(count, text) - len(text.split())) < len(text.split()) / 1000
    assert sum(count.given) <= TOKENIZED_CHARS + PIECE_CHARS


def test_a_reply_of_megabytes_is_estimated_without_tokenizing_it_whole():
    count = Words()
    reply = ModelResponse(Message("assistant", "a " * (16 << 20)))
    usage = estimated_usage(count, ModelRequest("m", (Message("user", "hi"),)), reply)
    assert usage.input_tokens == 1
    assert abs(usage.output_tokens - (16 << 20)) < (16 << 20) / 1000
    assert max(count.given) <= PIECE_CHARS
    assert sum(count.given) <= TOKENIZED_CHARS + PIECE_CHARS + len("hi")
