"""Estimated token counts, for calls whose response reported no usage (``--count-tokens``).

An endpoint that leaves ``usage`` out makes its tokens unknown, and loopbench records
them as unknown, never as zero. Asked to, it estimates them instead: the request's
text (system prompt, messages, tool schemas) and the reply's text are counted with a
real tokenizer, the one the embedded model ships with (SmolLM2's, in its GGUF file,
loaded without its weights). Another model's tokenizer splits text differently, so
the counts are an estimate, and records say how many calls were estimated.

The run's token ceiling (``max_tokens``) estimates such calls whether or not they are
estimated for the counts, or it would never be reached: ``ceiling_counter``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable

from loopbench.harness.errors import BadInput
from loopbench.harness.models.types import ModelRequest, ModelResponse, Usage

TokenCount = Callable[[str], int]
#: What the run's token ceiling counts with (``ceiling_counter``), and its name.
CeilingCount = tuple[TokenCount, str]
CHARS_PER_TOKEN = 4
#: A text is tokenized this many characters at a time: a tokenizer's answer for a whole
#: reply (a list of token ids) takes many times the text's own memory.
PIECE_CHARS = 1 << 16
#: Past this many characters of one text, the rest counts at the rate of what was tokenized:
#: a reply megabytes long is estimated in milliseconds, as well as a tokenizer would.
TOKENIZED_CHARS = 1 << 20


class EstimateUnavailable(BadInput):
    """No tokenizer to estimate with."""


def shipped_tokenizer() -> TokenCount:
    """Count tokens with the embedded model's tokenizer (the ``local`` extra)."""
    from loopbench.harness.models.local import LocalModelError, model_file

    try:
        path = model_file()
        import llama_cpp
    except (LocalModelError, ImportError) as exc:
        raise EstimateUnavailable(
            f"--count-tokens needs the embedded model's tokenizer: {exc}"
        ) from None
    vocab = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)

    def count(text: str) -> int:
        return len(vocab.tokenize(text.encode("utf-8"), add_bos=False)) if text else 0

    return count


def estimated_usage(count: TokenCount, request: ModelRequest, response: ModelResponse) -> Usage:
    """The usage of one call, estimated from the text it sent and received."""
    sent = [request.system, *(m.content for m in request.messages)]
    sent += [json.dumps([t.parameters for t in request.tools])] if request.tools else []
    sent += [c.arguments for m in request.messages for c in m.tool_calls]
    received = [response.message.content, *(c.arguments for c in response.message.tool_calls)]
    return Usage(
        input_tokens=sum(count_text(count, text) for text in sent),
        output_tokens=sum(count_text(count, text) for text in received),
        missing=1,  # still not reported: estimated, not known
        estimated=1,
    )


def count_text(count: TokenCount, text: str) -> int:
    """``text``'s tokens, counted a piece at a time (each cut before a space, where a word
    starts, so the pieces split as the whole does); beyond ``TOKENIZED_CHARS``, estimated
    at the rate of the pieces counted."""
    # guard: long-text-tokenized-pieces
    if len(text) <= PIECE_CHARS:
        return count(text)
    tokens = start = 0
    # guard: past-tokenized-part-rest
    while start < min(len(text), TOKENIZED_CHARS):
        end = start + PIECE_CHARS
        if end < len(text):
            space = text.rfind(" ", start + PIECE_CHARS // 2, end)
            end = space if space > start else end
        tokens += count(text[start:end])
        start = end
    if start < len(text):
        tokens += round((len(text) - start) * tokens / start)
    return tokens


@functools.cache
def ceiling_counter() -> CeilingCount:
    """What ``max_tokens`` counts a call that reported no usage with (and was not estimated
    by ``--count-tokens``): the embedded model's tokenizer, loaded once per process on the
    first such call; where it is not installed, four characters a token."""
    return counter_or_characters(shipped_tokenizer)


def counter_or_characters(load: Callable[[], TokenCount]) -> CeilingCount:
    try:
        return load(), "tokenizer"
    except (EstimateUnavailable, ValueError):  # not installed, or its file did not load
        # guard: token-ceiling-without-tokenizer
        return (lambda text: -(-len(text) // CHARS_PER_TOKEN)), "characters"
