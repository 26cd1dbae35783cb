"""Candidates that try to be graded passed without solving their task (issue 20): none is,
at any isolation level, this process survives, and nothing any of them started outlives its
run. The tests and every comparison run in the test runner, apart from the candidate, which
can reach only plain data on a pipe."""

import asyncio
import json
import os

import pytest

from graders.limits import Limits
from graders.sandbox import Sandbox, Suite
from tasks.humaneval import heldout_suite, load_problems, preamble
from tasks.loading import load_taskset
from tests.graders.hostile import (
    CASES,
    ROMAN_REFERENCE,
    UNHOOK,
    Hostile,
    always_equal,
    replaced_helpers,
)
from tests.graders.sandboxing import ONE_TEST, run

ROMAN = next(t for t in load_taskset("coding").tasks if t.id == "roman_numerals").suites
ROMAN_HELDOUT = Suite("heldout", ROMAN.heldout, ROMAN.entry_point)

#: What each hostile candidate ends as: its status, and words its report holds.
EXPECTED = {
    "replaced-helpers": ("failed", ""),
    "forged-events": ("crashed", "broke the protocol"),
    "always-equal": ("failed", "not plain data, so not compared"),
    "always-equal-str": ("failed", "not plain data, so not compared"),
    "patched-builtins": ("crashed", "broke the protocol"),
    "memory-past-the-hook": ("killed", "exceeded by the run's processes"),
    "reads-the-reference": ("crashed", "No such file or directory"),
    "reads-the-trusted-process": ("failed", ""),
    "huge-answer": ("failed", "over the 16777216 a message may hold"),
    "deep-answer": ("failed", "nested more than 100 deep"),
    "endless-recursion": ("failed", "raised RecursionError"),
    "exits-at-each-call": ("crashed", "exited with code 0 during test_standard_forms"),
}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_no_hostile_candidate_is_graded_passed(isolated, case: Hostile, started):
    if case.name == "reads-the-reference" and isolated.isolation == "none":
        pytest.skip("at the level none this machine's files are the candidate's to read")
    sandbox = Sandbox(Limits(), isolation=isolated.isolation)  # the default limits: 512 MB
    result = sandbox.run_sync(case.make(ROMAN.entry_point), ROMAN_HELDOUT)
    assert result.status != "passed", (case.why, result)
    if case.name in EXPECTED:
        status, says = EXPECTED[case.name]
        report = result.detail + (
            "" if result.first_failure is None else result.first_failure.actual
        )
        assert (result.status, says in report) == (status, True), result
    started.assert_all_ended()


def test_no_forgery_passes_a_single_humaneval_problem(sandbox):
    """HumanEval's own harness passes an object equal to everything on 155 of 164 problems,
    and the runner's helpers replaced pass 162 of them on a runner in the candidate's
    process (issue 20). Here: none."""
    problems = load_problems()

    async def grade_all():
        runs = [
            sandbox.run(
                make(p.entry_point), Suite("heldout", heldout_suite(p), p.entry_point, preamble(p))
            )
            for p in problems
            for make in (always_equal, replaced_helpers)
        ]
        return await asyncio.gather(*runs)

    results = asyncio.run(grade_all())
    assert [r.status for r in results if r.status == "passed"] == []
    refused = [r for r in results[::2] if "not plain data" in r.first_failure.actual]
    assert len(refused) > 150  # the rest iterate it (tuple(), 33 and 37) or test its identity


def test_a_test_that_catches_the_workers_end_still_fails(sandbox):
    """Once the candidate's process has ended, the run ends in that test, whatever the test
    does with the exception (a suite with a bare except cannot turn it into a pass)."""
    suite = (
        "def test_a(candidate):\n    try:\n        candidate()\n    except BaseException:\n"
        "        pass\n\n\ndef test_b(candidate):\n    try:\n        candidate()\n"
        "    except BaseException:\n        pass\n"
    )
    result = run(sandbox, "import os\ndef f():\n    os._exit(0)", suite)
    assert (result.status, result.passed) == ("crashed", 0)
    assert result.detail == "the candidate's process exited with code 0 during test_a"


def test_an_exception_named_like_a_built_in_is_not_that_built_in(sandbox):
    """A class of the candidate's own called ValueError does not satisfy raises(ValueError)."""
    suite = (
        "from loopbench_suite import raises\n\n\ndef test_it(candidate):\n"
        "    with raises(ValueError):\n        candidate()\n"
    )
    code = "class ValueError(Exception):\n    pass\n\ndef f():\n    raise ValueError('no')"
    result = run(sandbox, code, suite)
    assert result.status == "failed"
    assert result.first_failure.actual == "raised solution.ValueError: no"
    subclass = "class Bad(ValueError):\n    pass\n\ndef f():\n    raise Bad('yes')"
    assert run(sandbox, subclass, suite).status == "passed"


def test_an_object_is_compared_by_neither_equality_nor_truth(sandbox):
    """!=, ordering and truth are refused too, not only ==."""
    suite = (
        "def test_ne(candidate):\n    assert candidate() != 0\n\n\n"
        "def test_truth(candidate):\n    assert candidate()\n\n\n"
        "def test_order(candidate):\n    assert candidate() > -1\n\n\n"
        "def test_in_a_list(candidate):\n    assert [candidate()] == [1]\n"
    )
    code = "def f():\n    return object()"
    result = run(sandbox, code, suite)
    assert (result.status, result.passed, result.failed) == ("failed", 0, 4)
    assert "not plain data" in result.first_failure.actual


# A suite the model wrote (Reflexion's own tests) is not trusted: its runner is sandboxed like
# the code, and what it reports is checked to add up.


def forge(line: str) -> str:
    """A suite that writes ``line`` to every descriptor it holds, then exits."""
    return (
        f"import os\nfor fd in range(3, 64):\n    try:\n        os.write(fd, {line!r}.encode())\n"
        "    except OSError:\n        pass\nos._exit(0)\n\n\n" + ONE_TEST
    )


def test_a_forged_pass_does_not_add_up(sandbox):
    forged = forge('{"event": "end", "status": "passed", "detail": ""}\n')
    result = run(sandbox, "def f():\n    return 'no'\n", forged, name="self_tests")
    assert (result.status, result.passed, result.failed) == ("crashed", 0, 0)
    assert "do not add up" in result.detail


def test_every_field_read_back_is_capped(sandbox):
    event = {"event": "fail", "test": "t" * 5000, "actual": "x" * 100_000}
    lines = json.dumps(event) + '\n{"event": "start"}\n'  # and a start naming no test
    result = run(sandbox, "def f():\n    return 'ok'\n", forge(lines), name="self_tests")
    assert result.first_failure is not None
    assert len(result.first_failure.test) <= 1000
    assert len(result.first_failure.actual) <= 1000


def test_a_suite_the_model_wrote_runs_confined(sandbox):
    """Its runner gets the candidate's limits and audit hook, not this machine."""
    suite = "import socket\nsocket.socket()\n\n\n" + ONE_TEST
    result = run(sandbox, "def f():\n    return 'ok'\n", suite, name="self_tests")
    assert result.status == "crashed"
    assert "socket" in result.detail and "not allowed" in result.detail
    trusted = run(sandbox, "def f():\n    return 'ok'\n", suite)
    assert trusted.status == "passed"


def test_the_runner_is_not_in_the_candidates_reach(isolated):
    """The candidate looks for the test runner's process to write to or read: under bwrap and
    unshare it is in another pid namespace; as root it is another uid's."""
    code = UNHOOK + (
        "import os\ndef f():\n    found = []\n    for pid in os.listdir('/proc'):\n"
        "        try:\n            cmd = open(f'/proc/{pid}/cmdline', 'rb').read()\n"
        "        except OSError:\n            continue\n"
        "        if b'suite_runner' in cmd:\n            found.append(pid)\n"
        "            try:\n                os.listdir(f'/proc/{pid}/fd')\n"
        "                found.append('fds')\n            except OSError:\n                pass\n"
        "    return found\n"
    )
    result = run(isolated, code)
    seen = eval(result.first_failure.actual)
    if isolated.isolation != "none":
        assert seen == []
    elif os.geteuid() == 0:
        assert seen and "fds" not in seen  # visible, but another uid's


def test_a_suite_the_model_wrote_runs_sandboxed(isolated):
    """Past its audit hook, a suite the model wrote sees no more of this machine than the code
    does: under bwrap and unshare, not this repository (where the references are)."""
    if isolated.isolation == "none":
        pytest.skip("at the level none this machine's files are visible to both")
    suite = UNHOOK + f"open({str(ROMAN_REFERENCE)!r}).read()\n\n\n" + ONE_TEST
    result = run(isolated, "def f():\n    return 'ok'\n", suite, name="self_tests")
    assert result.status == "crashed"
    assert "No such file or directory" in result.detail
    assert run(isolated, "def f():\n    return 'ok'\n", suite).status == "passed"
