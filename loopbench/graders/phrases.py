"""The phrase a reply answers with, for the graders of a free answer (em, f1, regex): the
sentence it commits in (loopbench/graders/reading.py) as the phrase it gives.

Of that sentence, the last clause that states something (after a semicolon, or a
concluding "so", "but", "leaving"), without what it negates (each negation to its clause's
end, unless a gold answer holds it: "not guilty"; "rather than X", "instead of X"), without
a lead-in ("It was", "the capital is", "I think", "probably") or words of certainty
("definitely"), and without a remark in brackets: "It was not Edison but Nikola Tesla" is
"Nikola Tesla". A sentence whose every clause is negated states nothing, and the next is
read ("It is not the Panthers. It is the Broncos."). A hedge: alternatives joined by "or"
or a slash (not "or so"), another offered as possible ("Westphalia, possibly Utrecht"; "X
(or Y)"), or two names given together ("Denver Broncos and Carolina Panthers"), where no
gold answer is itself written so.
"""

from __future__ import annotations

import re

from loopbench.graders.reading import Said, hedge, nothing, read_reply, says_nothing

#: Where a sentence's answering clause starts: after a semicolon, or a concluding word.
_LAST_CLAUSE = re.compile(
    r";\s*|,\s*(?:so|therefore|thus|hence|but|leaving|which\s+leaves|that\s+leaves)\s+",
    re.IGNORECASE,
)
#: A negation and the rest of its clause ("not Denver Broncos", "isn't the Broncos",
#: "rather than Edison"), up to a "but" or a dash that gives the answer.
_NEGATED = re.compile(
    r"\b(?P<word>not|no|never|neither|nor|\w+n['\u2019]t|rather\s+than|instead\s+of)\b"
    r"(?:(?!\bbut\b|\s[-\u2013\u2014]\s|[\u2013\u2014])[^,;:.!?\n])*",
    re.IGNORECASE,
)
#: Words that open an answer without being part of it ("it was", "but", "I think").
_LEAD_IN = re.compile(
    r"^(?:(?:(?:it|that|this|they|he|she)\s*(?:is|was|were|are|['\u2019]s)|but|rather|instead"
    r"|the\s+answer\s+is|the\s+\w+(?:\s+\w+)?\s+(?:was|is|were|are)|i\s+mean[t]?|make\s+that"
    r"|i\s+(?:think|believe|guess)|probably|most\s+likely|likely)\b[\s,:]*)+",
    re.IGNORECASE,
)
#: Words of certainty around an answer ("Nikola Tesla, definitely").
_SURE = re.compile(
    r"^(?:definitely|certainly|surely|clearly|obviously)\b|\b(?:definitely|certainly|surely"
    r"|clearly|obviously|for\s+sure|without\s+(?:a\s+)?doubt)$",
    re.IGNORECASE,
)
#: A remark in brackets after the answer ("Normandy (about 30,000 km²)").
_ASIDE = re.compile(r"(?<=\S)\s*\((?P<inside>[^()]*)\)")
#: A bracket that offers or corrects rather than remarks ("(or Y)", "(wrong, it's Y)").
_OFFERING_ASIDE = re.compile(r"\b(?:or|maybe|possibly|perhaps|wrong|actually)\b", re.I)
#: What a phrase does not start or end with: stops, commas, dashes.
_EDGES = " .,;:!-\u2013\u2014"
#: What joins alternatives: "or" (not "or so", which approximates), a slash.
_ALTERNATIVE = re.compile(r"\bor\b(?!\s+so\b)|/", re.IGNORECASE)
#: Another answer offered as possible ("Westphalia, possibly Utrecht"; "X; maybe Y").
_OFFERS_ANOTHER = re.compile(
    r"(?:[,;]|\band)\s*(?:or\s+)?(?:maybe|possibly|perhaps)\b", re.IGNORECASE
)
#: Two names given together ("Denver Broncos and Carolina Panthers", "Lyon, Paris").
_TWO_NAMES = re.compile(
    r"[A-Z][\w'\u2019-]*(?:\s+[A-Z][\w'\u2019-]*)*\s*(?:,|\band\b|&)\s*[A-Z][\w'\u2019-]*"
)


def phrase(reply: str, golds: list[str]) -> Said[str]:
    """The phrase ``reply`` commits to (see the module's rules), or why none."""
    return read_reply(reply, lambda sentence, _: phrase_in(sentence, golds))


def phrase_in(sentence: str, golds: list[str]) -> Said[str]:
    """One committed sentence as the phrase it answers with; nothing when it states none."""
    for found in _ASIDE.finditer(sentence):
        if _OFFERING_ASIDE.search(found.group("inside")) and not _held(found.group(), golds):
            return hedge(f"offers another in brackets: {sentence[:80]!r}")
    clauses = [_ASIDE.sub("", c) for c in _LAST_CLAUSE.split(sentence)]
    # The last clause that states something once its negations are dropped ("Denver
    # Broncos; never Carolina" answers with its first; ", but I'm not sure" states nothing).
    stating = [c for c in clauses if not says_nothing(affirmed(c, golds))]
    if not stating:
        return nothing("states nothing it does not negate")
    # guard: em-f1-what-answer-negates
    said = _LEAD_IN.sub("", affirmed(stating[-1], golds).strip(_EDGES)).strip(_EDGES)
    said = _SURE.sub("", said).strip(_EDGES)
    if not said:
        return nothing("states nothing it does not negate")
    # guard: em-f1-alternatives-hedge
    if _offers(sentence, said, golds):
        return hedge(f"offers alternatives: {said[:80]!r}")
    return Said(said)


def affirmed(said: str, golds: list[str]) -> str:
    """``said`` without what it negates: each negation to its clause's end, unless a gold
    answer negates the same ("did not find him guilty" for "not guilty"; not "not
    innocent")."""

    def kept(found: re.Match[str]) -> str:
        negation = _words(found.group())
        word = _words(found.group("word"))
        # Kept when a gold answer negates what it negates: "did not find him guilty" for
        # "not guilty", not "not innocent".
        held = any(word <= _words(gold) and (negation - word) & _words(gold) for gold in golds)
        return found.group() if held else ""

    return _NEGATED.sub(kept, said)


def _offers(sentence: str, said: str, golds: list[str]) -> bool:
    """Whether the answer offers alternatives or two names where no gold answer is itself
    written so. SQuAD's score counts such a hedge by its tokens; the verdict does not."""
    if any(_ALTERNATIVE.search(gold) or _TWO_NAMES.search(gold) for gold in golds):
        return False
    parts = [part for part in _ALTERNATIVE.split(said) if part.strip()]
    return len(parts) > 1 or bool(_OFFERS_ANOTHER.search(sentence) or _TWO_NAMES.search(said))


def _held(text: str, golds: list[str]) -> bool:
    return any(_words(gold) and _words(gold) <= _words(text) for gold in golds)


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))
