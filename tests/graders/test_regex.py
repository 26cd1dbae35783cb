import json
import os
import resource
import subprocess
import sys

import pytest

from tests.graders.answers import ROOT, graded, graded_apart, refused

DATE = r"\d{4}-\d{2}-\d{2}"


@pytest.mark.parametrize(
    ("expected", "answer", "correct"),
    [
        (DATE, "2024-03-01", True),
        (DATE, "  2024-03-01 \n", True),
        (DATE, "Working it out...\nAnswer: 2024-03-01", True),
        (DATE, "It was 2024-03-01.", True),
        (DATE, "The wall fell on 2024-03-01.", True),
        (DATE, "It was not 2024-03-02 but 2024-03-01.", True),
        (DATE, "It was 2024-03-01, or maybe 2024-03-02.", False),
        (DATE, "Answer: 2024-03-01\nWait, that is wrong.", False),
        (DATE, "2024-03-01 or 2024-03-02", False),
        (DATE, "not 2024-03-01", False),
        ("yes|no", "yes", True),
        ("yes|no", "yes or no", False),
        ({"pattern": "yes", "ignore_case": True}, "Yes", True),
        ("yes", "Yes", False),
    ],
)
def test_the_answer_the_final_answer_commits_to_must_match_whole(expected, answer, correct):
    assert graded("regex", expected, answer)["correct"] is correct


@pytest.mark.parametrize("pattern", ["(", "[a-", "*x"])
def test_a_pattern_that_does_not_compile_is_refused(pattern):
    assert "not a regular expression" in refused("regex", pattern)


def test_a_catastrophic_pattern_is_graded_wrong_within_the_limit_saying_so():
    result, seconds = graded_apart("regex", "(x|x)+", "x" * 40 + "!")
    assert result["correct"] is False
    assert result["reason"] == "regex '(x|x)+' took longer than 0.5 s on this answer; graded wrong"
    assert seconds < 60


def test_the_issues_pattern_on_a_40_character_reply_finishes():
    result, seconds = graded_apart("regex", "(a+)+$", "a" * 40 + "!")
    assert result["correct"] is False and "does not match" in result["reason"]
    assert seconds < 60


@pytest.mark.parametrize(
    ("pattern", "answer", "correct"),
    [
        (r"(?<=\$)\d+", "$12", False),  # a lookbehind at the start: no full match
        (r"(\w+) \1", "bye bye", True),  # a backreference
        (r"(?i)paris", "PARIS", True),
        (r"(?P<y>\d{4})-(?P=y)", "2024-2024", True),
        (r"\d+(?!px)", "12", True),
    ],
)
def test_patterns_mean_what_they_mean_in_python_re(pattern, answer, correct):
    assert graded("regex", pattern, answer)["correct"] is correct


@pytest.mark.parametrize("pattern", [r"\p{L}+", r"(?V1)[a-z]", r"[[:alpha:]]+", r"[a--b]"])
def test_a_pattern_only_the_regex_module_reads_is_refused(pattern):
    assert "not a regular expression" in refused("regex", pattern)


@pytest.mark.parametrize(
    "pattern", ["a{100000000}", "(?:x{65535}){65535}", "a{4294967294}", "(?=b{300000})"]
)
def test_a_pattern_whose_counted_repeats_compile_to_gigabytes_is_refused(pattern):
    # In a process of its own held to 2 GiB: compiled, these would take the machine's memory.
    def bounded() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    args = ["grade", "--grader", "regex", "--expected", json.dumps(pattern), "--answer", "x"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "loopbench.harness.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        preexec_fn=bounded,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert "copies of what they repeat" in done.stderr


@pytest.mark.parametrize("pattern", [r"\d{4}-\d{2}-\d{2}", "(a|b){1000}", "x{0,5}(y{3}|z{200})+"])
def test_counted_repeats_of_ordinary_size_are_read(pattern):
    assert graded("regex", pattern, "no")["correct"] is False
