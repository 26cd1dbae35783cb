"""Which of a set of candidates (a question's options, a set's labels, a task's names) a
reply commits to: each named by its text (whole words, compared normalised, the longest
where two overlap) or, for an option, by its capital letter as a word of its own ("B",
"(B)", "B) Lyon"; "A" and "I" not as an article or a pronoun: "A good guess is B").
Where a sentence names options by letter, their texts count only beside a letter ("C
(Jupiter)"): an option's text in the explanation is not a choice. The reply is read as
loopbench/graders/reading.py reads it, the mentions as loopbench/graders/mentions.py marks them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from loopbench.graders.exact import normalise
from loopbench.graders.mentions import Mention, Verdict, verdict
from loopbench.graders.reading import Said, hedge, nothing, read_reply
from loopbench.graders.stated_numbers import numbers_of, read_number
from loopbench.graders.tokens import Token, tokens

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
        "it",
    ]
)


@dataclass(frozen=True)
class Candidates:
    """What a grader reads a reply against: candidate ``i`` is named by any of
    ``phrases[i]`` or by the letter ``letters[i]``; ``verb``, ``what`` and ``show`` word a
    reason ("chooses A, B"; "names no label")."""

    phrases: Sequence[Sequence[str]]
    letters: Sequence[str] = ()
    verb: str = "names"
    what: str = "candidate"
    show: Callable[[int], str] = str


def chosen(reply: str, candidates: Candidates) -> Said[int]:
    """The one candidate ``reply`` commits to, or why none."""
    return read_reply(reply, lambda sentence, marked: commits(sentence, candidates, marked))


def commits(sentence: str, candidates: Candidates, anchored: bool = True) -> Said[int]:
    """What one sentence commits to (see ``chosen``): an answer line's first committed
    mention; in a sentence of reasoning, its conclusion (its last)."""
    found = verdict_of(sentence, candidates.phrases, candidates.letters, last=not anchored)
    none = f"{candidates.verb} no {candidates.what}"
    if not found.mentioned:
        return nothing(none)
    keys = [k for k in found.keys if isinstance(k, int)]
    if not keys:
        return nothing(f"{none} it does not negate")
    if found.hedge:
        shown = ", ".join(map(candidates.show, keys))
        more = " or more" if found.hedge == "leaves it open" else ""
        another = " or another" if len(keys) == 1 and not more else ""
        return hedge(f"{candidates.verb} {shown}{more}{another}")
    return Said(keys[0])


def verdict_of(
    sentence: str, phrases: Sequence[Sequence[str]], letters: Sequence[str] = (), last: bool = False
) -> Verdict:
    toks = tokens(sentence)
    return verdict(toks, found_in(toks, phrases, letters), last=last)


def found_in(
    toks: list[Token], phrases: Sequence[Sequence[str]], letters: Sequence[str] = ()
) -> list[Mention]:
    """The candidates named in ``toks`` (see ``chosen``), each keyed by its index."""
    found = _phrases(toks, phrases) + _letters(toks, letters)
    if any(isinstance(m.key, tuple) for m in found):
        # guard: naming-option-text-explanation-not
        found = _beside_letters(toks, found)
    found = _longest(found)
    for m in found:
        if isinstance(m.key, tuple):
            m.key = m.key[1]
    return found


def _phrases(toks: list[Token], phrases: Sequence[Sequence[str]]) -> list[Mention]:
    found = _numeric(toks, phrases)
    for candidate, forms in enumerate(phrases):
        for form in forms:
            words = [_word(t) for t in tokens(form) if t.kind != "mark"]
            for start in range(len(toks)):
                end = _match(toks, start, words)
                if end is not None:
                    found.append(Mention(candidate, start, end))
    return found


def _numeric(toks: list[Token], phrases: Sequence[Sequence[str]]) -> list[Mention]:
    """Candidates that are numbers ("56"), named by any number of that value ("fifty-six")."""
    values: dict[float, int] = {}
    for candidate, forms in enumerate(phrases):
        for form in forms:
            said = read_number(form)
            if said is not None:
                values.setdefault(said, candidate)
    if not values:
        return []
    spans, stated = numbers_of(toks)
    return [
        Mention(values[stated[m.key].value], m.start, m.end)
        for m in spans
        if isinstance(m.key, int) and stated[m.key].value in values
    ]


def _match(toks: list[Token], start: int, words: list[str]) -> int | None:
    """Where the phrase ``words`` ends if it starts at ``start`` (marks between its words
    skipped: "Sao-Paulo" names "São Paulo"), else None."""
    if not words or _word(toks[start]) != words[0]:
        return None
    at, i = start + 1, 1
    while i < len(words):
        while at < len(toks) and toks[at].kind == "mark":
            at += 1
        if at >= len(toks) or _word(toks[at]) != words[i]:
            return None
        at, i = at + 1, i + 1
    return at


def _word(token: Token) -> str:
    return normalise(token.raw).replace(" ", "") if token.kind != "mark" else ""


def _letters(toks: list[Token], letters: Sequence[str]) -> list[Mention]:
    """Each letter named, keyed ("letter", i) until the texts beside it are chosen."""
    return [
        Mention(("letter", candidate), i, i + 1)
        for candidate, letter in enumerate(letters)
        for i in range(len(toks))
        if _is_letter(toks, i, letter)
    ]


def _is_letter(toks: list[Token], i: int, letter: str) -> bool:
    raw = toks[i].raw
    before = toks[i - 1].raw if i > 0 else ""
    after = toks[i + 1] if i + 1 < len(toks) else None
    if raw == letter.lower():  # "(a)", "a)", or the answer being the letter alone
        return before == "(" or (after is not None and after.raw == ")") or len(toks) <= 2
    if raw != letter:
        return False
    if before in ("'", "\u2019") or (after is not None and after.raw in ("'", "\u2019")):
        return False
    article = after is not None and after.kind == "word" and after.raw.islower()
    return not (letter in "AI" and article and after is not None and after.low not in _LETTER_VERBS)


def _beside_letters(toks: list[Token], found: list[Mention]) -> list[Mention]:
    """Where options are named by letter, an option's text counts only beside a letter:
    its own option's ("C (Jupiter)"), or another's beside a letter with none of its own
    ("B) Paris": letter and text disagree)."""
    letters = [(m.key[1], m) for m in found if isinstance(m.key, tuple)]
    texts = [m for m in found if not isinstance(m.key, tuple)]
    kept = [m for _, m in letters]
    paired: set[int] = set()
    taken: set[int] = set()
    for own in (True, False):
        for t, m in enumerate(texts):
            for k, (option, letter) in enumerate(letters):
                if t in taken or (option == m.key) != own or (not own and k in paired):
                    continue
                if _beside(toks, letter, m):
                    kept.append(Mention(("text", m.key), m.start, m.end))
                    paired.add(k)
                    taken.add(t)
                    break
    return kept


def _beside(toks: list[Token], one: Mention, two: Mention) -> bool:
    lo, hi = (one.end, two.start) if one.end <= two.start else (two.end, one.start)
    return hi - lo <= 3 and all(t.kind == "mark" for t in toks[lo:hi])


def _longest(found: list[Mention]) -> list[Mention]:
    """Where two mentions overlap, the longer."""
    taken: list[Mention] = []
    used: set[int] = set()
    for m in sorted(found, key=lambda m: (m.start - m.end, m.start)):
        span = set(range(m.start, m.end))
        if not span & used:
            taken.append(m)
            used |= span
    return taken
