"""Cases the exact grader must get right; ``loopbench grade --self-test`` runs them.

The first ten are the chapter's (seed 003): the substring trap it was written to
catch, thousands separators, number words, extra numbers and entity matching. The
rest pin down each rule of ``loopbench.graders.exact``.
"""

from __future__ import annotations

from collections.abc import Sequence

from loopbench.graders.base import SelfCase


def _case(
    answer: str,
    numbers: Sequence[float],
    correct: bool,
    entities: Sequence[str] = (),
    why: str = "",
) -> SelfCase:
    named = {"entities": list(entities)} if entities else {}
    return SelfCase({"numbers": list(numbers), **named}, answer, correct, why)


_DEPOTS = {"numbers": [79], "entities": ["Rotterdam"], "distractors": ["Gdansk", "Porto"]}

EXACT_CASES: tuple[SelfCase, ...] = (
    # The chapter's ten.
    _case("84", (84,), True, why="the plain answer"),
    _case("184", (84,), False, why="a substring match would accept this"),
    _case("13", (3,), False, why="3 is inside 13 but is not 13"),
    _case("It is not 84; the answer is 74.", (84,), False, why="an extra number is wrong"),
    _case("2,954 m", (2954,), True, why="thousands separator"),
    _case("three", (3,), True, why="a number word"),
    _case("3 years (2020 minus 2017)", (3,), False, why="working left in the answer"),
    _case(
        "The Rotterdam depot; it has 79 more trucks than the Leeds depot",
        (79,),
        True,
        ("Rotterdam",),
        "entity and number",
    ),
    _case(
        "Rotterdam (2011), with 79 more", (79,), False, ("Rotterdam",), "the strict grader's miss"
    ),
    _case("It is Gdansk, with 79 more", (79,), False, ("Rotterdam",), "the wrong entity"),
    # Numbers.
    _case("84.", (84,), True, why="a point not followed by a digit ends the number"),
    _case(".5 of a day", (0.5,), True, why="a leading point"),
    _case("5.1 km", (5.1,), True, why="a decimal"),
    _case("-3 degrees", (-3,), True, why="a minus directly before digits"),
    _case("from 2017-2020", (2017, 2020), True, why="a hyphen after a digit is not a minus"),
    _case("A-3", (3,), True, why="a hyphen after a letter is not a minus"),
    _case("twenty-one", (21,), True, why="a hyphenated compound"),
    _case("Twenty One", (20, 1), True, why="without the hyphen they are two numbers"),
    _case("none of someone's", (), True, ("someone",), "number words only as whole words"),
    _case("1,234,567", (1234567,), True, why="several thousands groups"),
    _case("12,34", (12, 34), True, why="a comma not followed by three digits separates"),
    _case("3800 km", (3800.0000000001,), True, why="within the 1e-9 tolerance"),
    _case("79 and 79", (79,), False, why="numbers are a multiset: 79 twice is not 79 once"),
    _case("ninety-nine or 99", (99, 99), True, why="words and digits count alike"),
    # Entities.
    _case("Rotterdam.", (), True, ("rotterdam",), "sentence punctuation is dropped"),
    _case("Zürich is it", (), True, ("Zurich",), "accents are dropped"),
    _case("the Rotterdamse haven", (), False, ("Rotterdam",), "whole phrases only"),
    _case("SAO-PAULO!", (), True, ("São Paulo",), "case and punctuation collapse"),
    _case("", (84,), False, why="an empty answer is never correct"),
    # Hedges (the default rule) and seed 003's rule.
    SelfCase(_DEPOTS, "Answer: Rotterdam, 79 more", True, "the final answer"),
    SelfCase(_DEPOTS, "Rotterdam, Gdansk, Porto or Leeds: 79", False, "a hedge"),
    SelfCase(_DEPOTS, "Rotterdam or Leeds, 79", False, "an entity offered with another"),
    SelfCase(_DEPOTS, "Rotterdam, not Gdansk: 79", True, "a negated distractor"),
    SelfCase(_DEPOTS, "Neither Gdansk nor Rotterdam: 79", False, "a negated entity"),
    SelfCase(_DEPOTS, "Rotterdam (not Gdansk or Porto), 79", True, "a negation covers a list"),
    SelfCase(_DEPOTS, "Rotterdam is not the answer; 79", False, "an entity negated after"),
    SelfCase(_DEPOTS, "Gdansk is wrong; Rotterdam, 79", True, "a distractor negated after"),
    SelfCase(_DEPOTS, "Rotterdam or Gdansk, 79", True, "seed 003's rule", {"rule": "seed"}),
    SelfCase(
        {"entities": ["Rotterdam"]},
        "Rotterdam, Gdansk, Porto or Leeds",
        False,
        "a list of alternatives, distractors or not",
    ),
    SelfCase(
        {"entities": ["Rotterdam"]},
        "Rotterdam, Leeds, or Split",
        False,
        "a list of alternatives with a comma before its 'or'",
    ),
    SelfCase(
        _DEPOTS,
        "Rotterdam, with 79 more trucks than Leeds or Split",
        True,
        "an 'or' in a clause of its own offers no alternative to the answer",
    ),
)
