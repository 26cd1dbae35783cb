import json

import pytest
from click.testing import CliRunner

from loopbench.graders.exact import grade, normalise, numbers_in
from loopbench.harness.cli.main import main


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2,954 m", [2954]),
        ("It is not 84; the answer is 74.", [84, 74]),
        ("-3", [-3]),
        ("x-3", [3]),
        ("2017-2020", [2017, 2020]),
        (".5", [0.5]),
        ("84.", [84]),
        ("5.1", [5.1]),
        ("twenty-one", [21]),
        ("Forty-Two", [42]),
        ("thirty-ten", [30, 10]),
        ("none, someone, alone", []),
        ("seventeen and seven", [17, 7]),
        ("1,234.5", [1234.5]),
        ("12,34", [12, 34]),
        ("\u22124", [-4]),
    ],
)
def test_numbers_in(text, expected):
    assert numbers_in(text) == expected


def test_normalise_keeps_points_between_digits_only():
    assert normalise("Zürich, Rotterdam. 5.1 km...") == "zurich rotterdam 5.1 km"
    assert normalise("São-Paulo!!") == "sao paulo"


def test_reason_names_expected_and_found():
    verdict = grade("184", [84])
    assert not verdict.correct
    assert verdict.reason == "expected numbers [84], found [184]"


def test_reason_names_missing_entity():
    verdict = grade("Gdansk, 79", [79], ["Rotterdam"])
    assert "missing 'Rotterdam'" in verdict.reason


def test_task_tolerance_widens_the_match():
    assert not grade("3.14", [3.14159]).correct
    assert grade("3.14", [3.14159], tolerance=0.01).correct


def test_no_answer_is_not_correct():
    assert grade(None, [1]).reason == "no answer"


def test_grade_prints_the_verdict_and_exits_0_whichever_it_is():
    args = ["grade", "--expected", '{"numbers": [59], "entities": ["Hamburg"]}', "--format", "json"]
    right = CliRunner().invoke(main, [*args, "--answer", "Hamburg, with 59 more"])
    wrong = CliRunner().invoke(main, [*args, "--answer", "Lyon, with 59 more"])
    assert (right.exit_code, wrong.exit_code) == (0, 0)
    assert json.loads(right.output)["correct"] is True
    assert json.loads(wrong.output) == {
        "correct": False,
        "reason": "numbers [59] match; missing 'Hamburg'",
    }
