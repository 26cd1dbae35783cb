"""What a committed sentence (loopbench/graders/reading.py) gives as its answer: its mentions of the
candidates a grader reads (a question's options, a set's labels, a task's names, numbers),
each marked as a careful reader takes it.

- **Negated**: after a negation within three words of its clause ("not A", "neither A nor
  B", "it can't be A, B or D", "I'd eliminate A and C", "B rather than A"), or followed by
  one ("A is wrong", "17 is not right"). A negation covers a list.
- **Compared**: after "than", "between", "versus", "unlike" ("bigger than Earth").
- **An aside**: in brackets after a mention outside them ("18 eggs (3 hens x 6)"); a
  mention beside another of the same candidate is one with it ("C (Jupiter)").
- **Committed** otherwise. Mentions joined only by commas, "and", "or", "/" are one list.

The answer is a committed list of a main clause (a clause not opened by "because",
"which", "while"...; else of any clause): one said to be the answer ("B is correct"), else
that of the last concluding clause ("so B", "but it's C"), else the first (an answer line)
or the last (a sentence of working, preferring one after a result word: "making $18").
It is a hedge when that list holds
two candidates ("A or B", "17 and 18"), when it leaves an amount open ("18 or more", "at
least 18"), or when a later clause offers another candidate as a possibility ("B, or
maybe C"; "probably B, possibly C"). Another candidate named later without such a word
explains the answer and is not chosen ("C - Jupiter is over 300 Earth masses").
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

from loopbench.graders.tokens import Token
from loopbench.graders.words import (
    AFFIRMED_AFTER,
    ALTERNATIVE,
    COMPARED_AFTER,
    CONCLUDING,
    LIST_JOINS,
    NEGATED_AFTER,
    NEGATION_OF,
    NEGATORS,
    OPEN_ENDED,
    POSSIBLE_AFTER,
    RESULTS,
    SUBORDINATE,
    negates,
)

#: Marks ending the reach of a negation and opening a clause of their own.
_CLAUSE_MARKS = frozenset(".;:!\u2013\u2014,")
#: A negation reaches this many words before what it negates, this many after.
_REACH_BEFORE = 3
_REACH_AFTER = 4


@dataclass
class Mention:
    """A candidate named from token ``start`` to ``end``."""

    key: Hashable
    start: int
    end: int
    negated: bool = False
    compared: bool = False
    aside: bool = False
    alternative: bool = False
    open_ended: bool = False
    clause: int = 0
    subordinate: bool = False
    concluding: bool = False
    affirmed: bool = False
    """Whether words after it say it is the answer ("B is correct", "B is the answer")."""
    result: bool = False
    """Whether a word giving a result comes just before it ("cost $50", "comes to 18")."""
    group: int = 0
    """Which list it is an item of."""
    offered: bool = False
    """Whether its list offers alternatives ("A or B", "positive or mixed")."""

    @property
    def committed(self) -> bool:
        return not (self.negated or self.compared or self.aside)


@dataclass
class Verdict:
    """The candidates the sentence commits to (one, unless ``hedge`` says why not)."""

    keys: list[Hashable] = field(default_factory=list)
    hedge: str = ""
    mentioned: bool = False
    """Whether it names any candidate at all, even negated."""


def marked(toks: list[Token], mentions: list[Mention], numbers: bool = False) -> list[Mention]:
    """The mentions, neighbours of one candidate merged, each marked (see the module's rules)
    and numbered by its list. Mentions of ``numbers`` also list with "to" or a dash."""
    mentions.sort(key=lambda m: m.start)
    _merge_neighbours(toks, mentions)
    _mark_clauses(toks, mentions)
    lists = []
    for items in _lists(toks, mentions, numbers):
        # "Not A, B": a negation covers a list joined by commas alone only when it is
        # joined by a word too ("not A, B or C").
        if _negated_before(toks, mentions[items[0]].start) and not _worded(toks, mentions, items):
            lists += [items[:1], items[1:]] if len(items) > 1 else [items]
        else:
            lists.append(items)
    outside = next((m.start for m in mentions if toks[m.start].depth == 0), len(toks))
    for number, items in enumerate(lists):
        _mark(toks, mentions, items, outside)
        lead = [
            t.low for t in toks[max(0, mentions[items[0]].start - 2) : mentions[items[0]].start]
        ]
        mentions[items[0]].result = bool(RESULTS.intersection(lead))
        first, last = mentions[items[0]], mentions[items[-1]]
        after = mentions[items[-1] + 1].start if items[-1] + 1 < len(mentions) else len(toks)
        joins = [
            t.low
            for a, b in itertools.pairwise(items)
            for t in toks[mentions[a].end : mentions[b].start]
        ]
        offered = "or" in joins or "/" in joins or _offers(toks, first.start, last.end, after)
        for k in items:
            mentions[k].group, mentions[k].offered = number, offered
    return mentions


def verdict(
    toks: list[Token], mentions: list[Mention], last: bool = False, numbers: bool = False
) -> Verdict:
    """The answer the mentions give (see the module's rules): the first committed list of
    a main clause, or (``last``) the last. Another number in the answer's clause is working,
    not offered beside it ("9 eggs at $2 make 18")."""
    if not mentions:
        return Verdict()
    mentions = marked(toks, mentions, numbers)
    lists: dict[int, list[Mention]] = {}
    for m in mentions:
        lists.setdefault(m.group, []).append(m)
    committed = [items for items in lists.values() if items[0].committed]
    if not committed:
        return Verdict(mentioned=True)
    # guard: mentions-clause-explaining-answer
    mains = [items for items in committed if not items[0].subordinate] or committed
    concluding = [items for items in mains if items[0].concluding]
    affirmed = [items for items in mains if items[-1].affirmed]
    results = [items for items in mains if items[0].result]
    ending = [items for items in mains if _ends_alone(toks, items[0], items[-1])]
    if affirmed:
        main = affirmed[0]
    elif concluding:
        main = concluding[-1]
    elif last and numbers:
        main = (results or mains)[-1]
    elif last:  # reasoning naming candidates: its result, its bare last clause, else its first
        main = (results or ending or mains[:1])[-1]
    else:
        main = mains[0]
    first = main[0]
    keys = list(dict.fromkeys(m.key for m in main))
    # guard: mentions-two-or-more-committed
    if len(keys) > 1:
        return Verdict(keys, "two or more", True)
    # guard: mentions-amount-left-open-hedge
    if first.open_ended:
        return Verdict(keys, "leaves it open", True)
    # guard: mentions-answer-offered-with-another
    if first.offered:
        return Verdict(keys, "offers another", True)
    for items in committed:
        other = items[0]
        if items is main or other.key == first.key:
            continue
        same_clause = not numbers and other.clause == first.clause
        # guard: mentions-another-answer-offered
        if other.alternative or first.alternative or same_clause:
            return Verdict([first.key, other.key], "offers another", True)
    return Verdict(keys, "", True)


#: How far a list of alternatives may reach from a mention ("Rotterdam, Gdansk, Porto or
#: Leeds").
_LIST_REACH = 12


def _ends_alone(toks: list[Token], first: Mention, last: Mention) -> bool:
    """Whether a list is a clause of its own ending the sentence ("...; B.", "...: A.")."""
    after = toks[last.end :]
    before = toks[first.start - 1] if first.start else None
    return all(t.kind == "mark" for t in after) and (before is None or before.raw in _CLAUSE_MARKS)


def _offers(toks: list[Token], start: int, end: int, limit: int) -> bool:
    """Whether "or" or a slash joins the list from token ``start`` to ``end`` to other
    words ("positive or mixed", "Rotterdam, Gdansk, Porto or Leeds", "Leeds or the
    Rotterdam depot"; "or so" approximates)."""
    for k in range(end, min(limit, end + _LIST_REACH)):
        token = toks[k]
        if token.low == "or" or (token.raw == "/" and k == end):
            return k + 1 < limit and toks[k + 1].kind == "word" and toks[k + 1].low != "so"
        if token.kind == "num" or (token.kind == "mark" and token.raw != ","):
            break
        if token.low in NEGATORS or token.low in SUBORDINATE:
            break
    before = [t for t in toks[max(0, start - 3) : start] if t.low not in ("the", "a", "an")]
    return bool(before) and before[-1].low in ("or", "/") and len(before) > 1


def _merge_neighbours(toks: list[Token], mentions: list[Mention]) -> None:
    """A mention beside another of the same candidate, with only marks between ("C
    (Jupiter)", "B) Lyon"), is one mention."""
    kept: list[Mention] = []
    for mention in mentions:
        if kept and kept[-1].key == mention.key and _marks_only(toks, kept[-1].end, mention.start):
            kept[-1].end = mention.end
        else:
            kept.append(mention)
    mentions[:] = kept


def _marks_only(toks: list[Token], start: int, end: int) -> bool:
    """Only brackets, a colon or a dash between (not a comma: "A and C, C is right")."""
    return all(toks[k].raw in _NEIGHBOUR_MARKS for k in range(start, end))


_NEIGHBOUR_MARKS = frozenset("()[]:-\u2013\u2014.")


def _lists(toks: list[Token], mentions: list[Mention], numbers: bool) -> list[list[int]]:
    """The mentions grouped in lists: only commas, "and", "or", "nor", "/", "&" (and "to"
    or a dash between numbers) between them."""
    lists: list[list[int]] = []
    worded = False  # whether a word joins the current list: a comma after that ends it
    for k, mention in enumerate(mentions):
        if lists:
            last = mentions[lists[-1][-1]]
            between = toks[last.end : mention.start]
            if worded and all(t.raw == "," for t in between):  # "Between A and B, A."
                lists.append([k])
                worded = False
                continue
            brackets = all(t.raw in "()" for t in between)  # an aside, not a list
            joined = all(_joins(t, numbers) for t in between) and not brackets
            # guard: mentions-amount-two-units-not
            if between and (joined or _units(between, numbers)):
                lists[-1].append(k)
                worded = worded or any(t.kind == "word" for t in between)
                continue
        lists.append([k])
        worded = False
    return lists


def _units(between: list[Token], numbers: bool) -> bool:
    """Numbers of one amount in two units ("3 hours and 20 minutes"): a unit word or two,
    then "and" or a comma, between them."""
    words = [t for t in between if t.kind == "word"]
    return (
        numbers
        and 1 <= len(words) <= 3
        and between[-1].low in ("and", ",")
        and all(t.kind == "word" or t.raw == "," for t in between)
        and not {t.low for t in words[:-1]} & (LIST_JOINS | NEGATORS)
    )


def _joins(token: Token, numeric: bool) -> bool:
    if token.kind == "mark":  # brackets close a mention's own ("Earth (B) or Venus (D)")
        return (
            token.raw in ",/&"
            or (not numeric and token.raw in "()")
            or (numeric and token.raw in "-\u2013\u2014")
        )
    return token.low in LIST_JOINS or (numeric and token.low == "to")


def _mark_clauses(toks: list[Token], mentions: list[Mention]) -> None:
    """Each mention's clause, counted from the sentence's start, and whether the clause is
    subordinate (opened by "because", "which"...)."""
    clause, subordinate, concluding = 0, False, False
    at = 0
    for mention in mentions:
        for token in toks[at : mention.start]:
            opens = token.low in SUBORDINATE or token.low in CONCLUDING or token.low == "but"
            if token.raw in _CLAUSE_MARKS or opens:
                clause += 1
                # "but" turns to what counts: "My first thought was B, but it's C".
                subordinate = token.low in SUBORDINATE
                concluding = token.low in CONCLUDING or token.low == "but"
        mention.clause, mention.subordinate = clause, subordinate
        mention.concluding = concluding
        at = mention.end


def _phrase_negated(toks: list[Token], mentions: list[Mention], items: list[int]) -> bool:
    """Whether the mention before is negated and this one ends its phrase ("not 1 in 4")."""
    if not items[0]:
        return False
    before = mentions[items[0] - 1]
    between = toks[before.end : mentions[items[0]].start]
    return before.negated and len(between) == 1 and between[0].low in ("in", "of", "out", "per")


def _worded(toks: list[Token], mentions: list[Mention], items: list[int]) -> bool:
    """Whether a word ("or", "and", "nor") joins the list ``items``."""
    span = toks[mentions[items[0]].end : mentions[items[-1]].start]
    return any(t.kind == "word" for t in span)


def _negated_before(toks: list[Token], start: int, floor: int = 0) -> bool:
    words = [t.low for t in _before(toks, start, floor) if t.kind == "word"]
    return any(negates(words[: k + 1]) for k in range(len(words)))


def _mark(toks: list[Token], mentions: list[Mention], items: list[int], outside: int) -> None:
    """Marks the list ``items`` negated, compared, an aside, offered or left open
    (``outside``: where the first mention outside brackets starts)."""
    first, last = mentions[items[0]], mentions[items[-1]]
    after = mentions[items[-1] + 1].start if items[-1] + 1 < len(mentions) else len(toks)
    floor = mentions[items[0] - 1].end if items[0] else 0
    words = [t.low for t in _before(toks, first.start, floor) if t.kind == "word"]
    # guard: mentions-negation-covers-phrase
    negated = _negated_before(toks, first.start, floor) or _phrase_negated(toks, mentions, items)
    # guard: mentions-negation-after-mention
    negated = negated or _negated_after(toks[last.end : after])
    last.affirmed = not negated and _affirmed_after(toks[last.end : after])
    # guard: mentions-compared-mention-not-answer
    compared = any(w in COMPARED_AFTER for w in words) or words[-2:] == ["out", "of"]
    alternative = any(w in ALTERNATIVE for w in words) or _possible_after(toks[last.end : after])
    open_ended = _open_before(words) or _open_after(toks, last.end)
    offered_aside = "or" in words or "maybe" in words or "possibly" in words
    # guard: mentions-aside-brackets-not-answer
    aside = toks[first.start].depth > 0 and outside < first.start and not offered_aside
    alternative = alternative or (toks[first.start].depth > 0 and offered_aside)
    for k in items:
        m = mentions[k]
        # guard: mentions-negation-covers-list
        m.negated = m.negated or negated
        m.compared, m.aside = compared, aside
        m.alternative, m.open_ended = alternative, open_ended


def _before(toks: list[Token], start: int, floor: int = 0) -> list[Token]:
    """The words of its clause within reach before token ``start``, none before ``floor``
    (where the mention before it ends)."""
    found: list[Token] = []
    words = 0
    for at in range(start - 1, floor - 1, -1):
        token = toks[at]
        if token.raw in _CLAUSE_MARKS or token.low in ("but", "so", "then"):
            break
        found.append(token)
        words += token.kind == "word"
        if words >= _REACH_BEFORE:
            break
    return found[::-1]


def _negated_after(toks: list[Token]) -> bool:
    """ "A is wrong", "17 is not right", "A isn't it", "A is tempting but wrong" (``toks``:
    those after the mention, up to the next)."""
    words: list[str] = []
    for token in toks:
        if token.raw in _CLAUSE_MARKS or token.kind == "num":
            break
        if token.kind != "word":
            continue
        if token.low in ("and", "or", "so", "then") or len(words) >= _REACH_AFTER:
            break
        words.append(token.low)
    if any(w in NEGATED_AFTER for w in words):
        return True
    if any(words[k : k + 2] in (["is", "out"], ["are", "out"]) for k in range(len(words))):
        return True
    return any(w in NEGATORS and next_ in NEGATION_OF for w, next_ in itertools.pairwise(words))


def _possible_after(toks: list[Token]) -> bool:
    """ "D is possible", "C might also work", "C could be right" (within its clause)."""
    words: list[str] = []
    for token in toks[:6]:
        if token.raw in _CLAUSE_MARKS or token.low in SUBORDINATE:
            break
        if token.kind == "word":
            words.append(token.low)
    return bool(POSSIBLE_AFTER.intersection(words[:4]))


def _affirmed_after(toks: list[Token]) -> bool:
    """ "B is correct", "B is the right answer", "B fits best"."""
    words = [t.low for t in toks[:6] if t.kind == "word"]
    if any(t.raw in _CLAUSE_MARKS for t in toks[:2]):
        return False
    return bool(AFFIRMED_AFTER.intersection(words[:4])) and not NEGATORS.intersection(words[:4])


def _open_before(words: Sequence[str]) -> bool:
    return any(
        tuple(words[k:]) in OPEN_ENDED or tuple(words[k : k + 2]) in OPEN_ENDED
        for k in range(len(words))
    )


def _open_after(toks: list[Token], end: int) -> bool:
    if end < len(toks) and toks[end].raw == "+":
        return True
    after = toks[end : end + 2]
    words = [t.low for t in after if t.kind == "word"]
    # "18 or more", "18 at most"; not "59 more than Bilbao", a difference.
    return len(words) == 2 and tuple(words) in OPEN_ENDED and words[0] in ("or", "at")
