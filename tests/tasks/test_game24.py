from fractions import Fraction
from functools import cache
from itertools import combinations_with_replacement

import pytest

from loopbench.graders.base import GraderSetup
from loopbench.graders.registry import GRADERS
from loopbench.tasks.game24 import HARD_SLICE, solve
from loopbench.tasks.loading import load_taskset


@cache
def makes_24(values):
    """An independent check, by value only: some order of operations makes 24."""
    if len(values) == 1:
        return values[0] == 24
    for i in range(len(values)):
        for j in range(len(values)):
            if i == j:
                continue
            a, b = values[i], values[j]
            rest = [v for k, v in enumerate(values) if k not in (i, j)]
            made = [a + b, a - b, a * b] + ([a / b] if b else [])
            if any(makes_24(tuple(sorted([*rest, m]))) for m in made):
                return True
    return False


@pytest.fixture(scope="module")
def game24():
    return load_taskset("game24")


def test_the_set_holds_exactly_the_solvable_multisets(game24):
    solvable = {
        "-".join(map(str, n))
        for n in combinations_with_replacement(range(1, 14), 4)
        if makes_24(tuple(Fraction(x) for x in n))
    }
    assert len(solvable) == 1362  # the known count, out of 1,820 multisets
    assert {t.id for t in game24.tasks} == solvable


def test_every_reference_solution_is_accepted_by_the_grader(game24):
    info = GRADERS.lookup(game24.grader)
    grader = info.build(GraderSetup(game24.path, tasks=game24.tasks))
    for task in game24.tasks:
        check = grader.answer_check(task)
        assert task.solutions and task.difficulty == len(task.solutions)
        for solution in task.solutions:
            verdict = check(f"Answer: {solution} = 24")
            assert verdict.correct, (task.id, solution, verdict.reason)


def test_solutions_are_distinct_up_to_order_and_grouping():
    found = solve((4, 9, 10, 13))
    assert "(10 - 4) * (13 - 9)" in found and "(13 - 9) * (10 - 4)" not in found
    assert len(found) == len(set(found))
    assert solve((1, 1, 1, 1)) == []
    assert solve((3, 3, 8, 8)) == ["8 / (3 - 8 / 3)"]


def test_hard_100_is_the_hundred_with_fewest_solutions(game24):
    hard = [t for t in game24.tasks if t.slice == HARD_SLICE]
    rest = [t for t in game24.tasks if t.slice != HARD_SLICE]
    assert len(hard) == 100
    assert max(t.difficulty for t in hard) <= min(t.difficulty for t in rest)
    assert "3-3-8-8" in {t.id for t in hard}  # a single solution, through a fraction


def test_a_task_asks_in_the_papers_words_and_expects_its_numbers(game24):
    task = next(t for t in game24.tasks if t.id == "4-9-10-13")
    assert task.expected.numbers == [4, 9, 10, 13]
    assert "4 9 10 13" in task.question and "Answer:" in task.question


def test_the_set_is_built_once_per_process(game24):
    assert load_taskset("game24") is game24
