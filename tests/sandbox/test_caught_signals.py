"""The sandbox's signals are exceptions of the family tree (OutputLimit, Ended: HarnessFault,
so an ``except Exception`` reaches them): code of the candidate's or of a suite's that
catches one, with ``except Exception``, ``except BaseException`` or a bare ``except``, gets
the verdict it would get without the catch."""

import pytest

from tests.sandbox.sandboxing import FAST, ONE_TEST, run

LIMIT = f"output limit ({FAST.output_bytes} bytes) exceeded"
CATCHES = ["except Exception", "except BaseException", "except"]


def caught(statement: str, catch: str, indent: str = "    ") -> str:
    """``statement`` in a try whose ``catch`` passes."""
    return f"{indent}try:\n{indent}    {statement}\n{indent}{catch}:\n{indent}    pass\n"


def verdict(result):
    failure = result.first_failure
    return (
        result.status,
        result.detail,
        result.passed,
        result.failed,
        result.output_cut,
        failure and (failure.test, failure.actual),
    )


@pytest.mark.parametrize("catch", CATCHES)
def test_a_candidate_that_catches_its_output_limit_is_killed_as_without(sandbox, catch):
    """The worker ends at the first write past the limit, from inside that write: nothing is
    raised for the candidate to catch, once or in a loop that prints on."""
    plain = run(sandbox, "def f():\n    print('x' * 100_000)\n    return 'ok'")
    assert verdict(plain)[:2] == ("killed", LIMIT)
    once = "def f():\n" + caught("print('x' * 100_000)", catch) + "    return 'ok'\n"
    assert verdict(run(sandbox, once)) == verdict(plain)
    forever = "def f():\n    while True:\n" + caught("print('x' * 10_000)", catch, " " * 8)
    assert verdict(run(sandbox, forever)) == verdict(plain)


def test_a_thread_of_the_candidates_that_prints_past_the_limit_ends_the_run(sandbox):
    """The limit once ended only the thread that reached it, and the call went on to pass."""
    code = (
        "import threading\ndef f():\n"
        "    thread = threading.Thread(target=lambda: print('x' * 100_000))\n"
        "    thread.start()\n    thread.join()\n    return 'ok'\n"
    )
    result = run(sandbox, code)
    assert (result.status, result.detail, result.output_cut) == ("killed", LIMIT, True)


@pytest.mark.parametrize("catch", CATCHES)
def test_a_candidate_that_catches_its_output_limit_as_it_loads_is_killed(sandbox, catch):
    code = caught("print('x' * 100_000)", catch, "") + "def f():\n    return 'ok'\n"
    result = run(sandbox, code)
    assert (result.status, result.detail, result.output_cut) == ("killed", LIMIT, True)
    plain = run(sandbox, "print('x' * 100_000)\ndef f():\n    return 'ok'\n")
    assert verdict(result) == verdict(plain)


@pytest.mark.parametrize("catch", CATCHES)
@pytest.mark.parametrize(
    ("code", "status", "detail"),
    [
        pytest.param(
            "import os\ndef f():\n    os._exit(0)",
            "crashed",
            "the candidate's process exited with code 0 during test_a",
            id="exits",
        ),
        pytest.param("def f():\n    print('x' * 100_000)", "killed", LIMIT, id="output-limit"),
    ],
)
def test_a_suite_that_catches_the_workers_end_ends_as_without(sandbox, catch, code, status, detail):
    """The suite catches Ended and returns, or calls the candidate again, or retries until
    it answers: the run ends in the test where the worker ended, as it does when no test
    catches anything (not at the time limit)."""
    plain = run(sandbox, code, "def test_a(candidate):\n    candidate()\n\n\n" + ONE_TEST)
    assert verdict(plain)[:4] == (status, detail, 0, 0)  # test_a left running: cut short
    once = caught("candidate()", catch)
    retry = "    while True:\n" + caught("candidate()\n            break", catch, " " * 8)
    for body in (once, once * 2, retry):
        suite = "def test_a(candidate):\n" + body + "\n\n" + ONE_TEST
        assert verdict(run(sandbox, code, suite)) == verdict(plain), body


@pytest.mark.parametrize("catch", CATCHES)
def test_a_suite_the_model_wrote_that_catches_its_output_limit_fails_as_without(sandbox, catch):
    """Its runner is confined: a test that prints past the limit fails, whether it catches
    the OutputLimit or not, and the tests after it still run."""
    rest = "\n\n" + ONE_TEST
    plain_suite = "def test_a(candidate):\n    print('y' * 100_000)\n" + rest
    plain = run(sandbox, "def f():\n    return 'ok'\n", plain_suite, name="self_tests")
    assert verdict(plain)[:4] == ("failed", "", 1, 1)
    assert plain.first_failure.actual == "raised OutputLimit"
    suite = "def test_a(candidate):\n" + caught("print('y' * 100_000)", catch) + rest
    result = run(sandbox, "def f():\n    return 'ok'\n", suite, name="self_tests")
    assert verdict(result) == verdict(plain)
