"""The exact grader's strict rule: seed 003's typed check on the final answer, which a hedge
cannot pass.

The final answer (graders/final_answer.py) must state exactly the expected numbers and
name every expected entity, as seed 003's rule says (graders/exact.py), and besides:

- it names none of the task's ``distractors`` ("hedged: names 'Gdansk', 'Porto'"): the
  other candidates a hedge would list ("Rotterdam, Gdansk, Porto or Leeds");
- it offers no expected entity as one of alternatives ("Rotterdam or Antwerp",
  "either Antwerp or Rotterdam"), whatever the alternative is;
- it names every expected entity other than negated.

A name is negated as graders/naming.py reads negations, as the choice and label graders do:
after "not", "no", "never", "neither", "nor", "except", "isn't" and the like, "rather
than", "instead of" (a few words between allowed: "isn't the Antwerp depot"), or before
"is wrong", "is not the answer"; a negation covers a list ("not Antwerp or Gdansk").
"Rotterdam, not Antwerp" names Rotterdam and not Antwerp: correct. "Neither Antwerp nor
Rotterdam" and "Rotterdam is wrong" name Rotterdam only negated: wrong.
"""

from __future__ import annotations

import re

from graders.answer_keys import Expected
from graders.exact import Grade, grade, normalise
from graders.final_answer import final_answer
from graders.naming import named, negates


def strict_grade(answer: str | None, expected: Expected) -> Grade:
    """The strict rule's verdict on ``answer`` (see the module's rules)."""
    final = final_answer(answer) if answer else ""
    if not final:
        return Grade(False, "no answer")
    distractors = len(expected.distractors)
    said, unsaid = named(final, [[name] for name in [*expected.distractors, *expected.entities]])
    if hedge := [d for i, d in enumerate(expected.distractors) if i in said]:
        return Grade(False, f"hedged: names {', '.join(map(repr, hedge))}")
    if offered := [e for e in expected.entities if offers(final, e)]:
        return Grade(False, f"hedged: offers {', '.join(map(repr, offered))} or another")
    negated = [
        e for i, e in enumerate(expected.entities, distractors) if i in unsaid and i not in said
    ]
    if negated:
        return Grade(False, f"names {', '.join(map(repr, negated))} only negated")
    return grade(final, expected.numbers, expected.entities, expected.tolerance)


#: Where a clause ends: a semicolon, a stop not inside a number, a question or exclamation
#: mark, a line end.
_CLAUSE_END = re.compile(r"[;!?\n]|\.(?!\d)")
#: What joins the items of a list of alternatives: a comma, a slash, "or".
_LIST_JOIN = re.compile(r"(,|/|\bor\b)", re.IGNORECASE)
#: An item of a list is a short phrase ("the Rotterdam depot"); a longer part is a clause of
#: its own ("with 79 more trucks than Leeds"), which no list runs through.
_ITEM_WORDS = 4


def offers(final: str, entity: str) -> bool:
    """Whether ``entity`` is named as one of alternatives: an item of a list of short
    phrases joined by commas, slashes and at least one "or" ("Rotterdam or Antwerp",
    "Rotterdam, Gdansk, Porto or Leeds", "Rotterdam/Antwerp"). A negation starts a list of
    its own, which offers nothing ("Rotterdam (not Antwerp or Gdansk)")."""
    wanted = f" {normalise(entity)} "
    for clause in _CLAUSE_END.split(final):
        pieces = _LIST_JOIN.split(clause)
        items, joins = pieces[0::2], [j.lower() for j in pieces[1::2]]
        # The current list, kept as what the rule asks of it (a list copied at each item
        # would make a long one quadratic): its last item, whether a join before that item
        # is "or" or "/", whether an item names the entity.
        last: int | None = None
        offered = named = False
        for i, item in enumerate(items):
            words = item.split()
            if words and len(words) <= _ITEM_WORDS and not _negated(normalise(item).split()):
                if words[0].lower() == "and":  # "..., and X" adds, not offers
                    last, offered, named = None, False, False
            elif words:
                last, offered, named = None, False, False
                continue
            if last is not None:
                offered = offered or joins[last] in ("or", "/")
            last, named = i, named or wanted in f" {normalise(item)} "
            if words and offered and named:
                return True
    return False


def _negated(said: list[str]) -> bool:
    """Whether a negation ends at any of ``said``'s words (``negates`` looks at two)."""
    return any(negates(said[max(0, k - 1) : k + 1]) for k in range(len(said)))
