"""Game of 24 (``--tasks game24``): every multiset of four numbers from 1 to 13 that can
make 24 with + - * / and brackets, each number used once, solved exactly in fractions.

Solutions are counted as distinct up to the commutativity and associativity of + and *:
an expression's normal form flattens each run of + and - into one sum (the terms added,
the terms subtracted, each sorted) and each run of * and / into one product (the factors
multiplied, the factors divided, each sorted). So ``(10 - 4) * (13 - 9)`` and
``(13 - 9) * (10 - 4)`` are one solution, as are ``4 - 9 + 13`` and ``13 - (9 - 4)``;
``8 * 3 * 1`` and ``8 * 3 / 1`` are two. A puzzle's number of distinct solutions is its
difficulty, and the slice ``hard-100`` is the 100 with the fewest (``hardness``): ties
go first to those with fewer solutions staying in whole numbers (a fraction on the way is
the kind people miss), then by the sorted numbers (docs/tasksets.md says how this differs
from the ToT paper's puzzles).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from itertools import combinations, combinations_with_replacement

from loopbench.graders.game24 import TARGET, Game24Expected, Game24Task
from loopbench.tasks.taskset import BUILTIN_DIR, TaskSet

HARD_SLICE = "hard-100"
HARD_SIZE = 100
LOWEST, HIGHEST, COUNT = 1, 13, 4

#: A normal form: ("n", number), or ("+", added, subtracted) / ("*", multiplied, divided),
#: each a sorted tuple of normal forms.
Key = tuple[object, ...]


@dataclass(frozen=True)
class Form:
    """An expression: its value, its normal form and its text (``level``: 0 for a sum or
    difference at the top, 1 for a product or quotient, 2 for a number); ``whole``: every
    value on the way is a whole number."""

    value: Fraction
    key: Key
    text: str
    level: int
    whole: bool = True


def _leaf(number: int) -> Form:
    return Form(Fraction(number), ("n", number), str(number), 2)


def _parts(form: Form, kind: str) -> tuple[tuple[Key, ...], tuple[Key, ...]]:
    """``form`` as the operands of a sum (kind "+") or product ("*"): its own when it is one."""
    key = form.key
    if key[0] == kind:
        return key[1], key[2]  # type: ignore[return-value]
    return (key,), ()


def _join(left: Form, op: str, right: Form, value: Fraction) -> Form:
    kind = "+" if op in "+-" else "*"
    (a_in, a_out), (b_in, b_out) = _parts(left, kind), _parts(right, kind)
    inward, outward = (a_in + b_in, a_out + b_out) if op in "+*" else (a_in + b_out, a_out + b_in)
    key: Key = (kind, tuple(sorted(inward)), tuple(sorted(outward)))
    level = 0 if kind == "+" else 1
    # The right operand of - needs brackets round a sum, of / round any operation.
    right_needs = right.level < level or (right.level == level and op in "-/")
    shown_left = f"({left.text})" if left.level < level else left.text
    shown_right = f"({right.text})" if right_needs else right.text
    whole = left.whole and right.whole and value.denominator == 1
    return Form(value, key, f"{shown_left} {op} {shown_right}", level, whole)


def _combined(a: Form, b: Form) -> Iterator[Form]:
    """Every form one operation makes of ``a`` and ``b``, in either order."""
    yield _join(a, "+", b, a.value + b.value)
    yield _join(a, "*", b, a.value * b.value)
    yield _join(a, "-", b, a.value - b.value)
    yield _join(b, "-", a, b.value - a.value)
    if b.value:
        yield _join(a, "/", b, a.value / b.value)
    if a.value:
        yield _join(b, "/", a, b.value / a.value)


def _splits(numbers: tuple[int, ...]) -> Iterator[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Each way to part ``numbers`` into two non-empty groups (each sorted), once."""
    seen = set()
    indexes = range(len(numbers))
    for size in range(1, len(numbers) // 2 + 1):
        for chosen in combinations(indexes, size):
            left = tuple(numbers[i] for i in chosen)
            right = tuple(numbers[i] for i in indexes if i not in chosen)
            if (left, right) not in seen and (right, left) not in seen:
                seen.add((left, right))
                yield left, right


@cache
def _forms(numbers: tuple[int, ...]) -> dict[Fraction, dict[Key, Form]]:
    """Every distinct expression of the sorted ``numbers``, by value."""
    if len(numbers) == 1:
        leaf = _leaf(numbers[0])
        return {leaf.value: {leaf.key: leaf}}
    found: dict[Fraction, dict[Key, Form]] = {}
    for left, right in _splits(numbers):
        for a in _all(left):
            for b in _all(right):
                for form in _combined(a, b):
                    found.setdefault(form.value, {}).setdefault(form.key, form)
    return found


def _all(numbers: tuple[int, ...]) -> Iterator[Form]:
    for by_key in _forms(numbers).values():
        yield from by_key.values()


#: What the other operand must be for ``a OP b`` (or ``b OP a``) to make the target:
#: the operand's value given ``a``'s, or None when no value can.
_NEEDED: tuple[Callable[[Fraction], Fraction | None], ...] = (
    lambda a: TARGET - a,  # a + b
    lambda a: a - TARGET,  # a - b
    lambda a: a + TARGET,  # b - a
    lambda a: TARGET / a if a else None,  # a * b
    lambda a: a / TARGET if a else None,  # a / b (b must not be 0)
    lambda a: TARGET * a if a else None,  # b / a
)


def _partners(value: Fraction) -> set[Fraction]:
    """The values an operand combined with ``value`` by one operation must have to make 24."""
    return {needed for need in _NEEDED if (needed := need(value)) is not None}


def solve(numbers: tuple[int, ...]) -> list[str]:
    """The distinct solutions (one text each, in the order of their normal forms) making
    24 of ``numbers``, each used once; none when there is none."""
    return [form.text for form in solutions(numbers)]


def solutions(numbers: tuple[int, ...]) -> list[Form]:
    """``solve``'s solutions as forms."""
    ordered = tuple(sorted(numbers))
    if len(ordered) < 2:
        return [_leaf(ordered[0])] if ordered and ordered[0] == TARGET else []
    found: dict[Key, Form] = {}
    for left, right in _splits(ordered):
        # Look the smaller side's partners up by value rather than combining every pair.
        wanted = _forms(right)
        for a in _all(left):
            for needed in _partners(a.value):
                for b in wanted.get(needed, {}).values():
                    for form in _combined(a, b):
                        if form.value == TARGET:
                            found.setdefault(form.key, form)
    return [found[key] for key in sorted(found)]


def puzzles() -> list[tuple[int, ...]]:
    """Every multiset of four numbers from 1 to 13, sorted, in order."""
    return list(combinations_with_replacement(range(LOWEST, HIGHEST + 1), COUNT))


def question(numbers: tuple[int, ...]) -> str:
    shown = " ".join(map(str, numbers))
    return (
        f"Use the numbers {shown} and basic arithmetic operations (+ - * /) to obtain 24. "
        "Each number must be used exactly once. Give the expression on a line starting "
        "'Answer:', e.g. 'Answer: (1 + 2) * (3 + 5) = 24'."
    )


def hardness(numbers: tuple[int, ...], found: list[Form]) -> tuple[int, int, tuple[int, ...]]:
    """How ``hard-100`` ranks a puzzle, hardest first: its solutions, then those of them
    staying in whole numbers (a fraction on the way is the kind people miss), then its
    numbers."""
    return len(found), sum(form.whole for form in found), numbers


def game24_tasks() -> list[Game24Task]:
    """The solvable puzzles in order of their numbers; the 100 that ``hardness`` ranks
    first carry the slice ``hard-100``."""
    solved = [(n, found) for n in puzzles() if (found := solutions(n))]
    hardest = {n for n, _ in sorted(solved, key=lambda p: hardness(*p))[:HARD_SIZE]}
    return [
        Game24Task(
            id="-".join(map(str, numbers)),
            question=question(numbers),
            expected=Game24Expected(numbers=list(numbers)),
            solutions=[form.text for form in found],
            slice=HARD_SLICE if numbers in hardest else None,
        )
        for numbers, found in solved
    ]


DESCRIPTION = (
    "Game of 24: every multiset of four numbers from 1 to 13 that can make 24 with + - * / "
    f"and brackets (the slice {HARD_SLICE} holds the {HARD_SIZE} with the fewest solutions)."
)


@cache
def game24_taskset() -> TaskSet:
    """The built-in task set ``game24``, solved once per process."""
    return TaskSet(
        name="game24",
        description=DESCRIPTION,
        tools=(),
        grader="game24",
        tasks=tuple(game24_tasks()),
        encyclopedia=None,
        path=BUILTIN_DIR,
    )
