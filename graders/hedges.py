"""The exact grader's strict rule: seed 003's typed check on the final answer, which a hedge
cannot pass.

The final answer (graders/final_answer.py) must state exactly the expected numbers and
name every expected entity, as seed 003's rule says (graders/exact.py), and besides:

- it names none of the task's ``distractors`` ("hedged: names 'Gdansk', 'Porto'"): the
  other candidates a hedge would list ("Rotterdam, Gdansk, Porto or Leeds");
- it offers no expected entity as one of alternatives ("Rotterdam or Antwerp",
  "either Antwerp or Rotterdam"), whatever the alternative is;
- it names every expected entity other than negated.

A name is negated when a negation comes directly before it, an article between them
allowed: "not", "no", "never", "nor", "neither", "except", a contraction ending in
"n't" ("isn't Antwerp"), "rather than", "instead of". "Rotterdam, not Antwerp" names
Rotterdam and not Antwerp: correct. "Neither Antwerp nor Rotterdam" names neither.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from graders.answer_keys import Expected
from graders.exact import Grade, grade, normalise
from graders.final_answer import final_answer

_NEGATIONS = frozenset({"not", "no", "never", "nor", "neither", "except"})
_NEGATING_PAIRS = frozenset({("rather", "than"), ("instead", "of")})
_ARTICLES = frozenset({"the", "a", "an"})


def strict_grade(answer: str | None, expected: Expected) -> Grade:
    """The strict rule's verdict on ``answer`` (see the module's rules)."""
    final = final_answer(answer) if answer else ""
    if not final:
        return Grade(False, "no answer")
    text = f" {normalise(final)} "
    if named := [d for d in expected.distractors if _occurrences(text, d, negated=False)]:
        return Grade(False, f"hedged: names {', '.join(map(repr, named))}")
    if offered := [e for e in expected.entities if _offered(final, e)]:
        return Grade(False, f"hedged: offers {', '.join(map(repr, offered))} or another")
    negated = [
        e
        for e in expected.entities
        if _occurrences(text, e, negated=True) and not _occurrences(text, e, negated=False)
    ]
    if negated:
        return Grade(False, f"names {', '.join(map(repr, negated))} only negated")
    return grade(final, expected.numbers, expected.entities, expected.tolerance)


def _starts(text: str, phrase: str) -> list[int]:
    """Where the whole phrase ``phrase`` (normalised) starts in ``text`` (spaced, normalised)."""
    wanted = normalise(phrase)
    return [m.start() + 1 for m in re.finditer(rf"(?= {re.escape(wanted)} )", text)]


def _before(text: str, start: int) -> list[str]:
    """The words before ``start``, an article directly before it left out."""
    words = text[:start].split()
    if words and words[-1] in _ARTICLES:
        words.pop()
    return words


def _is_negation(words: Sequence[str]) -> bool:
    if not words:
        return False
    last = words[-1]
    contraction = last == "t" and len(words) > 1 and words[-2].endswith("n")  # "isn t"
    return last in _NEGATIONS or contraction or tuple(words[-2:]) in _NEGATING_PAIRS


def _occurrences(text: str, phrase: str, *, negated: bool) -> bool:
    """Whether ``text`` names ``phrase`` negated (``negated``) or not negated."""
    return any(_is_negation(_before(text, s)) == negated for s in _starts(text, phrase))


#: Where a clause ends: a semicolon, a stop not inside a number, a question or exclamation
#: mark, a line end.
_CLAUSE_END = re.compile(r"[;!?\n]|\.(?!\d)")
#: What joins the items of a list of alternatives: a comma, a slash, "or".
_LIST_JOIN = re.compile(r"(,|/|\bor\b)", re.IGNORECASE)
#: An item of a list is a short phrase ("the Rotterdam depot"); a longer part is a clause of
#: its own ("with 79 more trucks than Leeds"), which no list runs through.
_ITEM_WORDS = 4


def _offered(final: str, entity: str) -> bool:
    """Whether ``entity`` is named as one of alternatives: an item of a list of short
    phrases joined by commas, slashes and at least one "or" ("Rotterdam or Antwerp",
    "Rotterdam, Gdansk, Porto or Leeds", "Rotterdam/Antwerp")."""
    wanted = f" {normalise(entity)} "
    for clause in _CLAUSE_END.split(final):
        pieces = _LIST_JOIN.split(clause)
        items, joins = pieces[0::2], [j.lower() for j in pieces[1::2]]
        run: list[int] = []  # the items of the current list, by index
        for i, item in enumerate(items):
            words = item.split()
            if len(words) > _ITEM_WORDS or not words:
                run = []
                continue
            run = [i] if words[0].lower() == "and" else [*run, i]  # "..., and X" adds, not offers
            if not any(joins[k] == "or" or joins[k] == "/" for k in run[:-1]):
                continue
            if any(wanted in f" {normalise(items[k])} " for k in run):
                return True
    return False
