"""HumanEval as a task set: the data loads, every suite compiles, the canonical solutions
pass both suites, the list of wrong docstring examples is exact, and hand-checked problems
of each docstring form give exactly the examples a person reads in them.

Canonical solutions are trusted code, so they run in this process with a tiny runner."""

import ast

import pytest
from click.testing import CliRunner

from loopbench.harness.cli.main import main
from loopbench.tasks import humaneval
from loopbench.tasks.humaneval import (
    CALLABLE_ONLY,
    Example,
    docstring_examples,
    feedback_suite,
    find_problem,
    heldout_suite,
    load_problems,
    preamble,
    question,
    reference,
    summary,
    task_id,
)
from loopbench.tasks.taskset import TaskSetError

PROBLEMS = load_problems()


def run_suite(code, suite, entry_point):
    """Each test's name and the exception it raised (None when it passed)."""
    space = {}
    exec(compile(code, "<candidate>", "exec"), space)
    tests = {}
    exec(compile(suite, "<suite>", "exec"), tests)
    names = [n for n in tests if n.startswith("test_")] or ["check"]
    results = {}
    for name in names:
        try:
            tests[name](space[entry_point])
            results[name] = None
        except AssertionError as exc:
            results[name] = exc
    return results


def canonical(problem):
    return preamble(problem) + "\n" + reference(problem)


def test_the_164_problems_load_with_unique_ids():
    assert len(PROBLEMS) == 164
    ours = [task_id(p) for p in PROBLEMS]
    assert len(set(ours)) == len(set(p.task_id for p in PROBLEMS)) == 164
    assert ours[12] == "HumanEval_12" and PROBLEMS[12].task_id == "HumanEval/12"
    assert find_problem("HumanEval_12") is find_problem("HumanEval/12") is PROBLEMS[12]


def test_an_unknown_id_says_what_ids_look_like():
    with pytest.raises(TaskSetError, match="ids run HumanEval_0 to HumanEval_163"):
        find_problem("HumanEval_164")


def test_without_the_package_the_error_gives_the_install_command(monkeypatch):
    def missing(name):
        raise ModuleNotFoundError(f"No module named {name!r}")

    monkeypatch.setattr(humaneval.resources, "files", missing)
    humaneval._problems.cache_clear()
    try:
        with pytest.raises(TaskSetError, match=r"pip install 'loopbench\[humaneval\]'"):
            load_problems()
        result = CliRunner().invoke(main, ["run", "--tasks", "humaneval", "--arm", "direct"])
        assert result.exit_code == 2 and "loopbench[humaneval]" in result.output
    finally:
        monkeypatch.undo()
        humaneval._problems.cache_clear()


@pytest.mark.parametrize("problem", PROBLEMS, ids=task_id)
def test_the_suites_compile_and_the_canonical_solution_passes_both(problem):
    feedback, heldout = feedback_suite(problem), heldout_suite(problem)
    assert any(getattr(n, "name", "").startswith("test_") for n in ast.parse(feedback).body)
    defined = [n.name for n in ast.parse(heldout).body if isinstance(n, ast.FunctionDef)]
    assert "check" in defined and not any(n.startswith("test_") for n in defined)
    code = canonical(problem)
    assert run_suite(code, feedback, problem.entry_point) == dict.fromkeys(
        [f"test_example_{n}" for n in range(1, len(docstring_examples(problem)) + 1)]
        or ["test_entry_point_is_callable"]
    )
    assert run_suite(code, heldout, problem.entry_point) == {"check": None}


def test_the_list_of_wrong_examples_is_exactly_those_the_canonical_solutions_fail(monkeypatch):
    monkeypatch.setattr(humaneval, "WRONG_EXAMPLES", {})
    failing = {}
    for problem in PROBLEMS:
        examples = docstring_examples(problem)
        results = run_suite(canonical(problem), feedback_suite(problem), problem.entry_point)
        for example, outcome in zip(examples, results.values(), strict=False):
            if outcome is not None:
                failing.setdefault(problem.task_id, set()).add(example.call)
    monkeypatch.undo()
    assert failing == {t: set(calls) for t, calls in humaneval.WRONG_EXAMPLES.items()}
    assert all(reason for calls in humaneval.WRONG_EXAMPLES.values() for reason in calls.values())


def pairs(task):
    return [(e.call, e.expected) for e in docstring_examples(find_problem(task))]


def forms(task):
    return {e.form for e in docstring_examples(find_problem(task))}


# (problem, the form, every example it gives): one or two problems of each form.
HAND_CHECKED = [
    (  # no output under a doctest call means None
        "HumanEval/12",
        "doctest",
        [
            ("longest([])", "None"),
            ("longest(['a', 'b', 'c'])", "'a'"),
            ("longest(['a', 'bb', 'ccc'])", "'ccc'"),
        ],
    ),
    (  # the call inside round(), a comment after it
        "HumanEval/32",
        "doctest",
        [("round(find_zero([1, 2]), 2)", "-0.5"), ("round(find_zero([-6, 11, -6, 1]), 2)", "1.0")],
    ),
    (  # expected output over two lines
        "HumanEval/113",
        "doctest",
        [
            (
                "odd_count(['1234567'])",
                "['the number of odd elements 4n the str4ng 4 of the 4nput.']",
            ),
            (
                "odd_count(['3', '11111111'])",
                "['the number of odd elements 1n the str1ng 1 of the 1nput.', "
                "'the number of odd elements 8n the str8ng 8 of the 8nput.']",
            ),
        ],
    ),
    (  # an escape written in the docstring stays an escape
        "HumanEval/51",
        "doctest",
        [
            ("remove_vowels('')", "''"),
            ("remove_vowels('abcdef\\nghijklm')", "'bcdf\\nghjklm'"),
            ("remove_vowels('abcdef')", "'bcdf'"),
            ("remove_vowels('aaaaa')", "''"),
            ("remove_vowels('aaBAA')", "'B'"),
            ("remove_vowels('zbcd')", "'zbcd'"),
        ],
    ),
    (
        "HumanEval/108",
        "doctest ==",
        [
            ("count_nums([])", "0"),
            ("count_nums([-1, 11, -11])", "1"),
            ("count_nums([1, 1, 2])", "3"),
        ],
    ),
    (  # "==>0" with no space
        "HumanEval/121",
        "==>",
        [
            ("solution([5, 8, 7, 1])", "12"),
            ("solution([3, 3, 3, 3, 3])", "9"),
            ("solution([30, 13, 24, 321])", "0"),
        ],
    ),
    (  # "=> true": true and false read as True and False
        "HumanEval/76",
        "=>",
        [
            ("is_simple_power(1, 4)", "True"),
            ("is_simple_power(2, 2)", "True"),
            ("is_simple_power(8, 2)", "True"),
            ("is_simple_power(3, 2)", "False"),
            ("is_simple_power(3, 1)", "False"),
            ("is_simple_power(5, 3)", "False"),
        ],
    ),
    (  # a worked answer keeps its last value
        "HumanEval/67",
        "->",
        [
            ("fruit_distribution('5 apples and 6 oranges', 19)", "8"),
            ("fruit_distribution('0 apples and 1 oranges', 3)", "2"),
            ("fruit_distribution('2 apples and 3 oranges', 100)", "95"),
            ("fruit_distribution('100 apples and 1 oranges', 120)", "19"),
        ],
    ),
    (  # comment lines between the examples
        "HumanEval/72",
        "➞",
        [
            ("will_it_fly([1, 2], 5)", "False"),
            ("will_it_fly([3, 2, 3], 1)", "False"),
            ("will_it_fly([3, 2, 3], 9)", "True"),
            ("will_it_fly([3], 5)", "True"),
        ],
    ),
    (  # a call over five lines
        "HumanEval/87",
        "==",
        [
            (
                "get_row([[1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 1, 6], [1, 2, 3, 4, 5, 1]], 1)",
                "[(0, 0), (1, 4), (1, 0), (2, 5), (2, 0)]",
            ),
            ("get_row([], 1)", "[]"),
            ("get_row([[], [1], [1, 2, 3]], 3)", "[(2, 2)]"),
        ],
    ),
    (
        "HumanEval/151",
        "==",
        [
            ("double_the_difference([1, 3, 2, 0])", "10"),
            ("double_the_difference([-1, -2, 0])", "0"),
            ("double_the_difference([9, -2])", "81"),
            ("double_the_difference([0])", "0"),
        ],
    ),
    (
        "HumanEval/161",
        "=",
        [("solve('1234')", "'4321'"), ("solve('ab')", "'AB'"), ("solve('#a@C')", "'#A@c'")],
    ),
    (  # the sentence's full stop is not a decimal point
        "HumanEval/97",
        "should return",
        [
            ("multiply(148, 412)", "16"),
            ("multiply(19, 28)", "72"),
            ("multiply(2020, 1851)", "0"),
            ("multiply(14, -15)", "20"),
        ],
    ),
    (  # two doctests, then prose running over a line break
        "HumanEval/99",
        "should return",
        [
            ("closest_integer('10')", "10"),
            ("closest_integer('15.3')", "15"),
            ("closest_integer('14.5')", "15"),
            ("closest_integer('-14.5')", "-15"),
        ],
    ),
    (
        "HumanEval/86",
        "returns",
        [
            ("anti_shuffle('Hi')", "'Hi'"),
            ("anti_shuffle('hello')", "'ehllo'"),
            ("anti_shuffle('Hello World!!!')", "'Hello !!!Wdlor'"),
        ],
    ),
    (
        "HumanEval/79",
        "# returns",
        [("decimal_to_binary(15)", "'db1111db'"), ("decimal_to_binary(32)", "'db100000db'")],
    ),
    (  # prose after the value
        "HumanEval/141",
        "# =>",
        [("file_name_check('example.txt')", "'Yes'"), ("file_name_check('1example.dll')", "'No'")],
    ),
    (  # prose between the input and "the output"
        "HumanEval/84",
        "For ... the output should be",
        [("solve(1000)", "'1'"), ("solve(150)", "'110'"), ("solve(147)", "'1100'")],
    ),
    (  # two named inputs, "the result should be"
        "HumanEval/112",
        "For ... the output should be",
        [
            ("reverse_delete('abcde', 'ae')", "('bcd', False)"),
            ("reverse_delete('abcdef', 'b')", "('acdef', False)"),
            ("reverse_delete('abcdedcba', 'ab')", "('cdedc', True)"),
        ],
    ),
    (
        "HumanEval/120",
        "Input: ... Output:",
        [
            ("maximum([-3, -4, 5], 3)", "[-4, -3, 5]"),
            ("maximum([4, -4, 4], 2)", "[4, 4]"),
            ("maximum([-3, 2, 1, 2, -1, -2, 1], 1)", "[2]"),
        ],
    ),
    (  # an unnamed input
        "HumanEval/68",
        "Input: ... Output:",
        [
            ("pluck([4, 2, 3])", "[2, 1]"),
            ("pluck([1, 2, 3])", "[2, 1]"),
            ("pluck([])", "[]"),
            ("pluck([5, 0, 3, 0, 4, 2])", "[0, 1]"),
        ],
    ),
]


@pytest.mark.parametrize(("task", "form", "expected"), HAND_CHECKED, ids=lambda v: str(v)[:20])
def test_hand_checked_examples_come_out_exactly(task, form, expected):
    assert pairs(task) == expected
    assert form in forms(task)


def test_examples_from_two_forms_keep_docstring_order_and_drop_repeats():
    # fib4's definition lines ("fib4(2) -> 2") and doctests; fib4(n) -> ... is not usable.
    assert [e.call for e in docstring_examples(find_problem("HumanEval/46"))] == [
        f"fib4({n})" for n in (0, 1, 2, 3, 5, 6, 7)
    ]
    assert forms("HumanEval/46") == {"->", "doctest"}


UNUSABLE = [
    ("HumanEval/80", "is_happy(a) => False: a bare name, not a string"),
    ("HumanEval/81", "the examples call grade_equation, not numerical_letter_grade"),
    ("HumanEval/115", "Input names bucket_capacity; the parameter is capacity"),
    ("HumanEval/149", "the examples call list_sort, not sorted_list_sum"),
    ("HumanEval/41", "no example at all"),
]


@pytest.mark.parametrize(("task", "why"), UNUSABLE)
def test_a_problem_with_no_usable_example_only_checks_the_entry_point(task, why):
    suite = feedback_suite(find_problem(task))
    assert suite.endswith(CALLABLE_ONLY), why
    assert suite.count("def test_") == 1


def test_wrong_and_malformed_examples_are_dropped():
    # bf("Earth", "Mercury") ==> ("Venus") is a string, not a tuple: dropped as wrong.
    assert [c for c, _ in pairs("HumanEval/148")] == [
        "bf('Jupiter', 'Neptune')",
        "bf('Mercury', 'Uranus')",
    ]
    # find_max([...]) == ""aaaaaaa" does not parse: left out.
    assert len(pairs("HumanEval/158")) == 2


def test_floats_compare_within_a_tolerance_and_report_the_value():
    problem = find_problem("HumanEval/20")
    suite = feedback_suite(problem)
    assert "== (_Approx(2.0), _Approx(2.2))" in suite
    near = "def find_closest_elements(numbers):\n    return (2.0, 2.2 + 1e-9)\n"
    far = "def find_closest_elements(numbers):\n    return (2.0, 2.3)\n"
    assert run_suite(near, suite, problem.entry_point)["test_example_1"] is None
    space = {}
    exec(suite, space)
    assert repr(space["_Approx"](2.2)) == "2.2"
    assert space["_Approx"](2.2) != 2.3 and space["_Approx"](2.2) != "2.2"
    assert run_suite(far, suite, problem.entry_point)["test_example_1"] is not None
    assert "_Approx" not in feedback_suite(find_problem("HumanEval/0"))


def test_the_generated_test_reads_as_the_docstring_example():
    suite = feedback_suite(find_problem("HumanEval/12"))
    assert "def test_example_1(candidate):\n    assert candidate([]) == None\n" in suite


def test_question_preamble_and_reference():
    problem = find_problem("HumanEval/12")
    asked = question(problem)
    assert problem.prompt.strip() in asked and asked.count("```python") == 2
    assert asked.endswith("in one ```python code block.")
    assert preamble(problem) == "from typing import List, Optional\n"
    assert preamble(find_problem("HumanEval/13")) == ""
    assert "def poly(" in preamble(find_problem("HumanEval/32"))
    assert "def find_zero" not in preamble(find_problem("HumanEval/32"))
    assert reference(problem).startswith(problem.prompt)


def test_a_heldout_test_that_names_the_entry_point_calls_the_candidate():
    # HumanEval's harness runs check() where sort_third is the candidate's own function.
    suite = heldout_suite(find_problem("HumanEval/33"))
    assert "sort_third" not in suite.split('"""')[2]
    assert "encode_cyclic(" in heldout_suite(find_problem("HumanEval/38")).split("def check")[0]


def test_summary_counts_are_consistent_and_as_documented():
    counts = summary()
    assert counts["problems"] == 164
    assert counts["problems_with_examples"] + len(counts["problems_without_examples"]) == 164
    assert counts["examples"] == sum(counts["examples_by_form"].values())
    assert counts["examples"] == sum(len(docstring_examples(p)) for p in PROBLEMS)
    assert counts["dropped_as_wrong"] == 7
    assert counts["dropped_as_wrong_ids"] == [
        "HumanEval/47",
        "HumanEval/116",
        "HumanEval/130",
        "HumanEval/148",
    ]
    assert (counts["problems_with_examples"], counts["examples"]) == (153, 440)
    assert isinstance(docstring_examples(PROBLEMS[0])[0], Example)
