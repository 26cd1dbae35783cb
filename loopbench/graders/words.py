"""The one table of words every reading of an answer uses: what negates, what offers an
alternative, what ends a clause, what corrects an answer given before. The graders read
the same words alike because they read them from here."""

from __future__ import annotations

import re


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: A word that negates what follows it within its clause ("not A", "neither A nor B",
#: "isn't 17"); contractions are read without their apostrophe ("isnt").
NEGATORS = _words(
    """not no never neither nor isnt arent wasnt werent dont doesnt didnt cant cannot
    couldnt wont wouldnt shouldnt hasnt havent hadnt aint without except excluding eliminate
    eliminated eliminating exclude excludes excluded drop dropping discard discarding reject
    rejecting"""
)
#: Two words that negate what follows ("B rather than A", "rule out A").
NEGATING_PAIRS = frozenset(
    [("rather", "than"), ("instead", "of"), ("rule", "out"), ("ruled", "out"), ("cross", "out")]
)
#: A word that, after a mention, negates it ("A is wrong", "17 is incorrect").
NEGATED_AFTER = _words("wrong incorrect false eliminated excluded ruled impossible untrue")
#: After a negation following a mention, the words that make it deny the mention ("18 is
#: not right", "A isn't it", "A and C don't fit").
NEGATION_OF = _words(
    """right correct true it the a an valid possible accurate fit fits work works apply match
    belong qualify hold"""
)
#: A word that, after a mention, says it is the answer ("B is correct", "B is the answer").
AFFIRMED_AFTER = _words("correct right answer true")
#: A word after which a mention is compared with the answer, not given as it ("bigger than
#: Earth", "between A and B", "compared to 17").
COMPARED_AFTER = _words("than between versus vs compared unlike despite")
#: A word marking a mention as one of several possibilities ("maybe C", "or 19").
ALTERNATIVE = _words(
    """or maybe perhaps possibly possible plausible either alternatively otherwise might
    could partly partially mostly somewhat also"""
)
#: A word that, after a mention, offers it as a possibility ("D is possible", "C might
#: also work").
POSSIBLE_AFTER = _words("possible plausible might could may maybe perhaps")
#: Words that leave an amount open ("18 or more", "at least 18"): no one answer.
OPEN_ENDED = frozenset(
    [("or", "more"), ("or", "less"), ("or", "fewer"), ("at", "least"), ("at", "most"),
     ("more", "than"), ("less", "than"), ("fewer", "than"), ("up", "to"), ("over",),
     ("under",), ("above",), ("below",), ("upwards", "of")]
)  # fmt: skip
#: Words joining the items of one list ("A, B or D"; "A and B"; "neither A nor B").
LIST_JOINS = _words("or and nor")
#: Words opening a clause of its own: what follows explains the answer, it does not give
#: another one ("C, because Earth is smaller"; "B, which is Lyon").
SUBORDINATE = _words("because since as which who whereas while although though if when")
#: Words giving a result just before it, in a sentence of working ("they cost $50", "it
#: comes to 18", "making $18").
RESULTS = _words(
    """is are was were equals equal makes make making made gives giving leaves leaving
    totals total costs cost comes to earns earned pays paid needs gets"""
)
#: Words opening a sentence that concludes ("So, 18"; "Therefore B").
CONCLUDING = _words("so therefore thus hence overall finally consequently altogether")

#: A self-correction after an answer: what follows it is the answer now, if it states one.
CORRECTION = re.compile(
    r"\b(?:actually|wait|hmm+|oops|correction|correcting|scratch\s+that|on\s+second\s+thought"
    r"|on\s+reflection|let\s+me\s+(?:correct|fix|redo|recheck|re-?check|reconsider|recount"
    r"|recalculate|re-?calculate)|i\s+(?:made|have\s+made)\s+an?\s+(?:error|mistake)"
    r"|i\s+was\s+wrong|sorry|no\s+wait|hold\s+on|i\s+take\s+(?:that|it)\s+back"
    r"|i\s+(?:retract|withdraw|miscalculated|miscounted|misread)"
    r"|(?:that|this)(?:['\u2019]s|\s+is|\s+was)\s+(?:wrong|incorrect|not\s+right)"
    r"|(?:that|this)\s+can['\u2019]?t\s+be\s+right)\b"
    r"|(?:(?<=[.!?]\s)|(?<=\n))no,"  # "Answer: A. Wait, it's B. No, A was right."
    r"|(?:(?<=[.!?]\s)|(?<=\n)|^)(?:edit|update|edited|updated)\s*:|\u2192",
    re.IGNORECASE,
)
#: Words offering another answer after one was given ("Answer: spam. Or maybe ham.").
OFFERS_AFTER = re.compile(
    r"(?:[.!]\s+|\n\s*)(?:or\s+(?:maybe|possibly|perhaps)?|maybe|possibly|perhaps)\b",
    re.IGNORECASE,
)
#: Words saying the answer before was wrong: a correction with no answer after it leaves
#: none ("Answer: 18. Wait, that's wrong.").
RETRACTS = re.compile(
    r"\b(?:wrong|incorrect|mistake|error|correction|correcting|scratch|miscalculated"
    r"|miscounted|misread|double-counted|take\s+(?:that|it)\s+back|not\s+sure|unsure|retract\w*|withdr\w*|miscalculat\w*)\b"
    r"|(?:\bnot|n['\u2019]t)\s+(?:be\s+|seem\s+|look\s+|sound\s+|quite\s+)?(?:right|correct|it)\b"
    r"|\bno\s*[.!]",
    re.IGNORECASE,
)


def negates(words: list[str]) -> bool:
    """Whether ``words`` (lower case, apostrophes dropped) end in a negation."""
    return bool(words) and (words[-1] in NEGATORS or tuple(words[-2:]) in NEGATING_PAIRS)


#: Words that name nothing: an answer holding another of these names the same thing.
FUNCTION_WORDS = _words(
    """a an the of in on at to by for from with and or it its is was were are be been this
    that these those he she they his her their who which what answer final"""
)

#: Words that state no answer: a correction made only of these ("Hmm, let me double-check.",
#: "Wait, that's it.") gives none.
FILLER = _words(
    """a actually am an be but can cant check correct double good hmm i is it its let me ok
    okay recheck right so sure that thats the this verify wait was well confirmed checked
    again think just yep wrong incorrect mistake error made oops sorry scratch retract
    withdraw not isnt cant cannot im ive id unsure"""
)
#: A sentence offering an answer as possible ("C could also be right", "C is plausible too").
POSSIBLE = re.compile(
    r"^(?!.*\b(?:not|but|n't|wrong)\b).*(?:\b(?:could|might|may)\s+(?:also\s+)?(?:be\s+)?"
    r"(?:right|correct|valid|true|work|the\s+answer)\b|\b(?:is|are|seems)\s+(?:also\s+)?"
    r"(?:plausible|possible)\b|\b(?:plausible|possible)\s+(?:too|as\s+well)\b)",
    re.IGNORECASE,
)
