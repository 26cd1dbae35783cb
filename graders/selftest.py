"""Cases the typed exact grader must get right; ``loopbench grade --self-test`` runs them.

The first ten are the chapter's (seed 003): the substring trap it was written to
catch, thousands separators, number words, extra numbers and entity matching. The
rest pin down each rule of ``graders.exact``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from graders.exact import Grade, grade


@dataclass(frozen=True)
class Case:
    answer: str
    numbers: tuple[float, ...]
    correct: bool
    entities: tuple[str, ...] = field(default=())
    why: str = ""

    def run(self) -> Grade:
        return grade(self.answer, self.numbers, self.entities)


CASES: tuple[Case, ...] = (
    # The chapter's ten.
    Case("84", (84,), True, why="the plain answer"),
    Case("184", (84,), False, why="a substring match would accept this"),
    Case("13", (3,), False, why="3 is inside 13 but is not 13"),
    Case("It is not 84; the answer is 74.", (84,), False, why="an extra number is wrong"),
    Case("2,954 m", (2954,), True, why="thousands separator"),
    Case("three", (3,), True, why="a number word"),
    Case("3 years (2020 minus 2017)", (3,), False, why="working left in the answer"),
    Case(
        "The Rotterdam depot; it has 79 more trucks than the Leeds depot",
        (79,),
        True,
        ("Rotterdam",),
        "entity and number",
    ),
    Case(
        "Rotterdam (2011), with 79 more", (79,), False, ("Rotterdam",), "the strict grader's miss"
    ),
    Case("It is Gdansk, with 79 more", (79,), False, ("Rotterdam",), "the wrong entity"),
    # Numbers.
    Case("84.", (84,), True, why="a point not followed by a digit ends the number"),
    Case(".5 of a day", (0.5,), True, why="a leading point"),
    Case("5.1 km", (5.1,), True, why="a decimal"),
    Case("-3 degrees", (-3,), True, why="a minus directly before digits"),
    Case("from 2017-2020", (2017, 2020), True, why="a hyphen after a digit is not a minus"),
    Case("A-3", (3,), True, why="a hyphen after a letter is not a minus"),
    Case("twenty-one", (21,), True, why="a hyphenated compound"),
    Case("Twenty One", (20, 1), True, why="without the hyphen they are two numbers"),
    Case("none of someone's", (), True, why="number words only as whole words"),
    Case("1,234,567", (1234567,), True, why="several thousands groups"),
    Case("12,34", (12, 34), True, why="a comma not followed by three digits separates"),
    Case("3800 km", (3800.0000000001,), True, why="within the 1e-9 tolerance"),
    Case("79 and 79", (79,), False, why="numbers are a multiset: 79 twice is not 79 once"),
    Case("ninety-nine or 99", (99, 99), True, why="words and digits count alike"),
    # Entities.
    Case("Rotterdam.", (), True, ("rotterdam",), "sentence punctuation is dropped"),
    Case("Zürich is it", (), True, ("Zurich",), "accents are dropped"),
    Case("the Rotterdamse haven", (), False, ("Rotterdam",), "whole phrases only"),
    Case("SAO-PAULO!", (), True, ("São Paulo",), "case and punctuation collapse"),
    Case("", (), False, why="an empty answer is never correct"),
)


def run_self_test() -> list[tuple[Case, Grade, bool]]:
    """Each case with the grade it got and whether that was the expected verdict."""
    return [(case, g, g.correct == case.correct) for case in CASES for g in [case.run()]]
