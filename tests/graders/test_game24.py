import asyncio
import builtins
from pathlib import Path

import pytest

from loopbench.graders.base import GraderOptionError, GraderSetup
from loopbench.graders.game24 import numbers_from_target
from loopbench.graders.registry import GRADERS

INFO = GRADERS.lookup("game24")


def task(numbers=(4, 9, 10, 13)):
    return INFO.task_model.model_validate(
        {"id": "t", "question": "?", "expected": {"numbers": list(numbers)}}
    )


def grader():
    return INFO.build(GraderSetup(Path(".")))


def grade(answer, numbers=(4, 9, 10, 13)):
    return asyncio.run(grader().grade(task(numbers), answer))


@pytest.mark.parametrize("case", INFO.cases, ids=lambda c: c.why)
def test_self_test_case(case):
    made = INFO.task_model.model_validate({"id": "t", "question": "?", "expected": case.expected})
    verdict = asyncio.run(
        INFO.build(GraderSetup(Path("."), options=case.options)).grade(made, case.answer)
    )
    assert verdict.correct is case.correct, verdict.reason


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ("(10 - 4) * (13 - 4)", "uses 4 twice"),
        ("(10 - 4) * 4", "does not use 9, 13"),
        ("(10 - 4) * (13 - 9) * 2", "uses 2, which is not one of 4 9 10 13"),
        ("4 + 9 + 10 + 13 = 24", "equals 36, not 24"),
        ("13 + 10 + 4 / 9 = 24", "equals 211/9 (about 23.4444), not 24"),
        ("(10 - 4) / (13 - 13) * 9", "divides by zero"),
        ("10 ^ 4 - 13 - 9", "not an expression: '^'"),
        ("__import__('os').system('true')", "not an expression: the name '__import__'"),
        ("(10 - 4) * (13 - 9) = 25", "claims 25"),
    ],
)
def test_a_wrong_answer_says_what_is_wrong(answer, says):
    verdict = grade(answer)
    assert not verdict.correct and says in verdict.reason


def test_floating_point_is_not_enough_and_fractions_are_exact():
    assert grade("8 / (3 - 8 / 3)", (3, 3, 8, 8)).correct
    verdict = grade("(1 + 2) * 7.9999999999999999", (1, 2, 8, 8))
    assert not verdict.correct and "7.9999999999999999" in verdict.reason


def test_nothing_is_evaluated_by_python(monkeypatch):
    def refuse(*_args, **_kwargs):
        raise AssertionError("Python evaluated the answer")

    monkeypatch.setattr(builtins, "eval", refuse)
    monkeypatch.setattr(builtins, "exec", refuse)
    for answer in ("(lambda: 24)()", "24 if 1 else 0", "'24'", "(10 - 4) * (13 - 9)"):
        grade(answer)


def test_the_answer_check_gives_the_graders_verdict():
    check = grader().answer_check(task())
    assert check("Answer: (10 - 4) * (13 - 9) = 24").correct
    assert check("Answer: 4 * 6") == grade("Answer: 4 * 6")


def test_right_answers_read_alike_and_wrong_ones_apart():
    read = grader().canonical
    right = read(task(), "Answer: (10 - 4) * (13 - 9)")
    assert right == read(task(), "Answer: (13 - 9) * (10 - 4) = 24")
    assert right != read(task(), "Answer: 4 + 9 + 10 + 13")
    assert read(task(), "Answer: no idea") == "no idea"


def test_options_are_refused_by_name():
    with pytest.raises(GraderOptionError, match="tolerance"):
        INFO.build(GraderSetup(Path("."), options={"tolerance": 0.1}))


def test_a_data_files_answer_becomes_the_numbers():
    assert numbers_from_target("4 9 10 13", {}) == {"numbers": [4, 9, 10, 13]}
    assert numbers_from_target([4, 9, 10, 13], {}) == {"numbers": [4, 9, 10, 13]}
    with pytest.raises(ValueError, match="whole numbers"):
        numbers_from_target("four nine", {})


@pytest.mark.parametrize("numbers", [(4, 9, 10), (1, 2, 3, 4, 5), (0, 4, 9, 10), (-4, 9, 10, 13)])
def test_a_puzzle_is_four_positive_whole_numbers(numbers):
    with pytest.raises(ValueError, match="numbers"):
        task(numbers)


@pytest.mark.parametrize(
    "answer", ["(" * 5000 + "24" + ")" * 5000, "-" * 20000 + "24", "(-" * 3000 + "24"]
)
def test_an_expression_nested_too_deeply_is_refused_not_a_crash(answer):
    assert grade(answer).reason == "not an expression: nested too deeply"
