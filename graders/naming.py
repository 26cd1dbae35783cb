"""Which of a set of candidates (a question's options, a set's labels) an answer names, as a
careful reader takes it: whole words only, the longest candidate where two overlap, and a
candidate the answer negates ("not A", "A rather than B", "A is wrong") not named. A
negation covers a list ("not A, B or D", "A and B are wrong"). The exact grader's strict
rule (graders/hedges.py) reads negations the same way.

The text read is the final answer (graders/final_answer.py), narrowed to what follows its
last "the answer is" when it says one (``answer_clause``): the reasoning before is not the
answer. The choice and label graders count what is named: exactly one candidate, and the
expected one, is right; two or more is a hedge.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from graders.exact import normalise

#: Words (numbers with their points), or one mark of punctuation: "isn't" is "isn", "'", "t",
#: as ``normalise`` reads it.
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[^\W_]+|[^\w\s]")
#: A word that negates the candidate after it ("not A", "neither A nor B"); besides these,
#: any contraction in "n't" ("isn't A") and ``NEGATING_PAIRS`` negate.
NEGATORS = frozenset(
    [
        "not",
        "no",
        "never",
        "neither",
        "nor",
        "isnt",
        "arent",
        "wasnt",
        "dont",
        "doesnt",
        "cant",
        "cannot",
        "wont",
        "without",
        "except",
        "excluding",
    ]
)
#: Two words negating the candidate after them ("B rather than A").
NEGATING_PAIRS = frozenset([("rather", "than"), ("instead", "of")])
#: A word that negates the candidate before it ("A is wrong").
NEGATED_AFTER = frozenset(["wrong", "incorrect", "false", "eliminated", "excluded", "ruled"])
#: Marks and words ending the reach of a negation.
_STOPS = frozenset(".,;!?:")
_CONJUNCTIONS = frozenset(["but", "and", "or", "then", "so"])
#: Those ending a negation after the candidate: not "but" ("A is tempting but wrong").
_ENDS_AFTER = _CONJUNCTIONS - {"but"}
#: Words joining the items of a list ("A, B or D"; "A and B"; "neither A nor B").
_JOINS = frozenset(["or", "and", "nor"])
#: A list, its items written "M" and its joins "&" (or a comma): items joined by words, or
#: by commas up to a word ("A, B or D"; not "A, B"). A lone item is a list of one.
_LIST = re.compile(r"M(?:(?:,M)+,?&M|&M)+|M")
#: A negation reaches this many words.
_REACH = 3
#: After "A" or "I" these words make it a letter ("A is right"); other lower-case words make
#: it an article or a pronoun ("A good answer", "I think").
_LETTER_VERBS = frozenset(
    [
        "is",
        "or",
        "and",
        "nor",
        "because",
        "as",
        "since",
        "seems",
        "was",
        "would",
        "fits",
        "matches",
        "but",
        "then",
        "looks",
        "only",
        "alone",
    ]
)
_CLAUSE = re.compile(
    r"\b(?:answer|choice|option|label)\s+(?:is|would\s+be|will\s+be|must\s+be|should\s+be)\b"
    r"\s*:?\s*",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)")


@dataclass(frozen=True)
class _Token:
    raw: str
    word: str | None
    """Normalised (lower case, accents dropped); None for punctuation."""
    negates: bool
    """Whether a negation ends here: "not", the "t" of "isn't", the "than" of "rather than"."""


def answer_clause(text: str) -> str:
    """What follows the last "the answer is" in ``text``, to its sentence's end; the whole
    text when it says none."""
    found = list(_CLAUSE.finditer(text))
    if not found:
        return text
    rest = text[found[-1].end() :]
    end = _SENTENCE_END.search(rest)
    clause = rest[: end.start()] if end else rest
    return clause if clause.strip() else text


def named(
    text: str, phrases: Sequence[Sequence[str]], letters: Sequence[str] = ()
) -> tuple[set[int], set[int]]:
    """The candidates ``text`` names, and those it names negated. Candidate ``i`` is named
    by any of ``phrases[i]`` (compared normalised) or by the capital ``letters[i]`` as a
    word of its own."""
    mentions = _mentions(_tokens(text), phrases, letters)
    return {c for c, no in mentions if not no}, {c for c, no in mentions if no}


def negates(words: Sequence[str]) -> bool:
    """Whether ``words`` (normalised) end in a negation: one of ``NEGATORS``, a contraction
    in "n't" ("isn t" normalised), one of ``NEGATING_PAIRS``."""
    if not words:
        return False
    last = words[-1]
    contraction = last == "t" and len(words) > 1 and words[-2].endswith("n")
    return last in NEGATORS or contraction or tuple(words[-2:]) in NEGATING_PAIRS


def _tokens(text: str) -> list[_Token]:
    tokens, words = [], []
    for raw in _TOKEN.findall(text):
        word = normalise(raw).replace(" ", "") if raw[0].isalnum() else None
        words += [] if word is None else [word]
        tokens.append(_Token(raw, word, word is not None and negates(words)))
    return tokens


def _mentions(
    tokens: list[_Token], phrases: Sequence[Sequence[str]], letters: Sequence[str]
) -> list[tuple[int, bool]]:
    """Each candidate named, in order, and whether it is negated."""
    spans: list[tuple[int, int, int]] = []  # (start, end, candidate)
    for candidate, forms in enumerate(phrases):
        for form in forms:
            words = normalise(form).split()
            for start in range(len(tokens)):
                end = _match(tokens, start, words)
                if end is not None:
                    spans.append((start, end, candidate))
    for candidate, letter in enumerate(letters):
        spans += [
            (i, i + 1, candidate) for i in range(len(tokens)) if _is_letter(tokens, i, letter)
        ]
    taken: list[tuple[int, int, int]] = []
    used = bytearray(len(tokens))  # the tokens of the spans taken (a check of each span
    # against every span taken would make a reply full of letters quadratic)
    for span in sorted(spans, key=lambda s: (s[0] - s[1], s[0])):  # longest first
        if not any(used[span[0] : span[1]]):
            taken.append(span)
            used[span[0] : span[1]] = b"\x01" * (span[1] - span[0])
    taken.sort()
    covered = {i for i, mark in enumerate(used) if mark}
    negated = [_negated_before(tokens, start, covered) for start, _, _ in taken]
    for items in _lists(tokens, taken):  # a negation before or after a list covers it
        whole = negated[items[0]] or _negated_after(tokens, taken[items[-1]][1], covered)
        for k in items:
            negated[k] = negated[k] or whole
    return [(candidate, no) for (_, _, candidate), no in zip(taken, negated, strict=True)]


def _lists(tokens: list[_Token], spans: list[tuple[int, int, int]]) -> list[list[int]]:
    """The mentions (``spans``, in order) grouped by the lists they are items of ("A, B or
    D"): an option's letter and its text together ("D) Lille") are one item."""
    starts = {start: k for k, (start, _, _) in enumerate(spans)}
    code = ""  # the text: an item "M", a join "&" or ",", any other word or mark "x"
    items: list[list[int]] = []  # items[n]: the mentions the n-th "M" stands for
    i = 0
    while i < len(tokens):
        raw, word = tokens[i].raw, tokens[i].word
        if i in starts:
            k = starts[i]
            if code.endswith("M") and spans[items[-1][-1]][2] == spans[k][2]:
                items[-1].append(k)
            else:
                code += "M"
                items.append([k])
            i = spans[k][1]
            continue
        if raw not in ("(", ")"):
            code += "," if raw == "," else "&" if word in _JOINS or raw == "/" else "x"
        i += 1
    lists = []
    for found in _LIST.finditer(code):
        first = code.count("M", 0, found.start())
        lists.append([k for item in items[first : first + found[0].count("M")] for k in item])
    return lists


def _match(tokens: list[_Token], start: int, words: list[str]) -> int | None:
    """Where the phrase ``words`` ends if it starts at ``start`` (marks between its words
    skipped: "Sao-Paulo" names "São Paulo"), else None."""
    if not words or tokens[start].word != words[0]:
        return None
    at, i = start + 1, 1
    while i < len(words):
        while at < len(tokens) and tokens[at].word is None:
            at += 1
        if at >= len(tokens) or tokens[at].word != words[i]:
            return None
        at, i = at + 1, i + 1
    return at


def _is_letter(tokens: list[_Token], i: int, letter: str) -> bool:
    raw = tokens[i].raw
    before = tokens[i - 1].raw if i > 0 else ""
    after = tokens[i + 1] if i + 1 < len(tokens) else None
    if raw == letter.lower():  # "(a)", "a)", or the answer being the letter alone
        return before == "(" or (after is not None and after.raw == ")") or len(tokens) <= 2
    if raw != letter or (after is not None and after.raw in ("'", "\u2019")):  # "I'm"
        return False
    article = after is not None and after.word is not None and after.raw.islower()
    return not (
        letter in "AI" and article and after is not None and after.word not in _LETTER_VERBS
    )


def _negated_before(tokens: list[_Token], start: int, covered: set[int]) -> bool:
    words = 0
    for i in range(start - 1, -1, -1):
        token = tokens[i]
        if i in covered or token.raw in _STOPS or token.word in _CONJUNCTIONS:
            return False
        if token.negates:
            return True
        words += token.word is not None
        if words >= _REACH:
            return False
    return False


def _negated_after(tokens: list[_Token], end: int, covered: set[int]) -> bool:
    """ "A is wrong", "A is not correct", "A is tempting but wrong"; a negation that reaches
    another candidate ("A, not B", "A rather than B") negates that one instead."""
    seen: list[_Token] = []
    for i in range(end, len(tokens)):
        token = tokens[i]
        if i in covered:
            return any(t.word in NEGATED_AFTER for t in seen)
        if token.raw in _STOPS or token.word in _ENDS_AFTER or len(seen) > _REACH:
            break
        if token.word is not None:
            seen.append(token)
    return any(t.word in NEGATED_AFTER or t.negates for t in seen)
