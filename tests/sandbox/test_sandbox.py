"""The sandbox (issues 10 and 20): each status and what its report says, the pool, the
cancellations, and the choice of isolation level. Hostile code is in test_isolation.py (at
every level) and test_hostile.py (forgeries)."""

import asyncio
import gc
import json
import os
import sys
import threading
import time

import pytest

from loopbench.sandbox import run as sandbox_run
from loopbench.sandbox.isolation import interpreter
from loopbench.sandbox.limits import Limits
from loopbench.sandbox.run import Sandbox, Suite
from loopbench.sandbox.suite_result import Failure, SuiteResult
from tests.sandbox.sandboxing import FAST, ONE_TEST, SLACK_S, run

ROMAN = """
from loopbench_suite import raises


def test_single(candidate):
    assert candidate("X") == 10


def test_subtractive(candidate):
    assert candidate("XCX") == 100


def test_positive(candidate):
    assert candidate("I") > 0


def test_rejects_empty(candidate):
    with raises(ValueError):
        candidate("")
"""
GOOD_ROMAN = """
def roman(s):
    if not s:
        raise ValueError("empty")
    values = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100}
    total = 0
    for a, b in zip(s, s[1:] + " "):
        v = values[a]
        total += -v if b != " " and values[b] > v else v
    return total
"""


# Statuses and reports.


def test_passed(sandbox):
    result = run(sandbox, GOOD_ROMAN, ROMAN, entry="roman")
    assert result == SuiteResult("passed", 4, 0, None, result.seconds, "")
    assert 0 < result.seconds < FAST.timeout_s


def test_equality_failure_reports_source_expected_and_actual(sandbox):
    code = GOOD_ROMAN.replace("total += -v if", "total += v if")  # no subtraction
    result = run(sandbox, code, ROMAN, entry="roman")
    assert (result.status, result.passed, result.failed) == ("failed", 3, 1)
    assert result.first_failure == Failure("test_subtractive", 'candidate("XCX")', "100", "120")
    assert result.detail == ""


def test_plain_assert_reports_the_expression_and_its_value(sandbox):
    suite = 'def test_positive(candidate):\n    assert candidate("I") > 0, "positive"\n'
    result = run(sandbox, "def roman(s):\n    return 0", suite, entry="roman")
    assert result.first_failure == Failure("test_positive", 'candidate("I") > 0', "true", "False")


RAISES = """
from loopbench_suite import raises


def test_rejects_empty(candidate):
    with raises(ValueError):
        candidate("")
"""


def test_raises_passes_on_the_named_type_only(sandbox):
    assert run(sandbox, GOOD_ROMAN, RAISES, entry="roman").status == "passed"
    returned = run(sandbox, "def roman(s):\n    return len(s) * 10", RAISES, entry="roman")
    assert returned.first_failure == Failure(
        "test_rejects_empty", 'candidate("")', "raises ValueError", "returned 0"
    )
    other = run(sandbox, "def roman(s):\n    return 1 // len(s)", RAISES, entry="roman")
    assert other.first_failure == Failure(
        "test_rejects_empty",
        'candidate("")',
        "raises ValueError",
        "raised ZeroDivisionError: integer division or modulo by zero",
    )


def test_candidate_exception_fails_the_test_and_the_rest_run(sandbox):
    suite = (
        "def test_a(candidate):\n    assert candidate(0) == 'zero'\n"
        "def test_b(candidate):\n    x = candidate(2)\n    assert x == 0.5\n"
    )
    result = run(sandbox, "def f(n):\n    return 1 / n", suite)
    assert (result.status, result.passed, result.failed) == ("failed", 1, 1)
    assert result.first_failure == Failure(
        "test_a", "candidate(0)", "'zero'", "raised ZeroDivisionError: division by zero"
    )


def test_check_is_the_single_test_when_there_is_no_test_function(sandbox):
    suite = "METADATA = {}\n\n\ndef check(candidate):\n    assert candidate(2) == 4\n"
    assert run(sandbox, "def f(x):\n    return x * x", suite).passed == 1
    result = run(sandbox, "def f(x):\n    return x + 3", suite)
    assert result.first_failure == Failure("check", "candidate(2)", "4", "5")
    both = run(sandbox, "def f(x):\n    return x * x", suite + ONE_TEST)
    assert (both.passed, both.failed, both.first_failure.test) == (0, 1, "test_it")


def test_syntax_error_names_the_line_of_the_code_not_the_preamble(sandbox):
    result = run(sandbox, "def f():\n    return (1\n", preamble="import math\nimport os\n")
    assert (result.status, result.passed, result.failed) == ("syntax_error", 0, 0)
    assert "line 2" in result.detail, result.detail


def test_preamble_runs_first_in_the_candidates_namespace(sandbox):
    preamble = "import math\n\n\ndef helper(x):\n    return x * 2\n"
    code = "from __future__ import annotations\n\ndef f() -> str:\n    return 'ok' * helper(1)\n"
    suite = "def test_it(candidate):\n    assert candidate() == 'okok'\n"
    assert run(sandbox, code, suite, preamble=preamble).status == "passed"


def test_class_entry_point(sandbox):
    code = "class Counter:\n    def __init__(self):\n        self.n = 0\n    def add(self):\n"
    code += "        self.n += 1\n        return self.n\n"
    suite = (
        "def test_counts(candidate):\n    c = candidate()\n    c.add()\n    assert c.add() == 2\n"
    )
    assert run(sandbox, code, suite, entry="Counter").status == "passed"


STATEFUL = """
class Shelf:
    def __init__(self, clock, limit=2):
        self.clock, self.limit, self.items = clock, limit, []

    def put(self, item):
        self.items.append((item, self.clock()))
        return len(self.items) <= self.limit

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i][0]

    def __contains__(self, item):
        return any(item == kept for kept, _ in self.items)

    def __iter__(self):
        return iter([kept for kept, _ in self.items])

    def stamps(self):
        return tuple(stamp for _, stamp in self.items)

    def merge(self, other):
        self.items += other.items
        return self
"""
STATEFUL_SUITE = """
from loopbench_suite import raises


def test_an_instance_keeps_its_state_between_calls(candidate):
    now = [1.5]
    shelf = candidate(lambda: now[0], limit=2)
    assert shelf.put("a") is True
    now[0] = 2.5
    assert shelf.put(("b", 1)) is True
    assert shelf.put(None) is False
    assert len(shelf) == 3
    assert shelf[1] == ("b", 1)
    assert "a" in shelf and "z" not in shelf
    assert list(shelf) == ["a", ("b", 1), None]
    assert shelf.stamps() == (1.5, 2.5, 2.5)
    assert shelf.limit == 2


def test_an_object_goes_back_as_itself(candidate):
    one, two = candidate(lambda: 0), candidate(lambda: 1)
    two.put("x")
    assert list(one.merge(two)) == ["x"]


def test_a_suite_function_that_raises_raises_in_the_candidate(candidate):
    def broken():
        raise KeyError("clock")

    with raises(KeyError):
        candidate(broken).put("a")
"""


def test_instances_methods_and_functions_the_suite_passes_cross_by_handle(sandbox):
    """An expiring cache is a class the suite builds with a clock of its own and calls
    methods on: the instance stays in the worker, the clock in the test runner, and each
    call crosses the pipe (the worker calling the clock back as it runs)."""
    result = run(sandbox, STATEFUL, STATEFUL_SUITE, entry="Shelf")
    assert (result.status, result.passed) == ("passed", 3), result


@pytest.mark.parametrize(
    ("code", "suite", "says"),
    [
        ("import math\nx = 1 / 0\ndef f():\n    return 'ok'", ONE_TEST, "ZeroDivisionError"),
        ("def g():\n    return 'ok'", ONE_TEST, "no 'f'"),
        ("def f():\n    return 'ok'", "def helper(candidate):\n    pass\n", "no test_"),
        ("def f():\n    return 'ok'", "x = [1][5]\n" + ONE_TEST, "IndexError"),
    ],
    ids=["raises-at-import", "no-entry-point", "no-tests", "suite-raises"],
)
def test_crashed(sandbox, code, suite, says):
    result = run(sandbox, code, suite)
    assert (result.status, result.passed, result.failed) == ("crashed", 0, 0)
    assert says in result.detail
    if says == "ZeroDivisionError":
        assert "line 2" in result.detail


@pytest.mark.parametrize(
    ("raise_", "actual"),
    [
        ("raise KeyboardInterrupt", "raised KeyboardInterrupt"),
        ("raise GeneratorExit", "raised GeneratorExit"),
        ("raise type('Odd', (BaseException,), {})()", "raised Odd"),
    ],
    ids=["KeyboardInterrupt", "GeneratorExit", "BaseException"],
)
def test_any_exception_the_candidate_raises_fails_the_test(sandbox, raise_, actual):
    two_tests = ONE_TEST + ONE_TEST.replace("test_it", "test_too")
    result = run(sandbox, f"def f():\n    {raise_}", two_tests)
    assert (result.status, result.passed, result.failed) == ("failed", 0, 2)
    assert result.first_failure.actual == actual
    at_import = run(sandbox, f"{raise_}\ndef f():\n    return 'ok'")
    assert at_import.status == "crashed"
    assert f"the candidate {actual}" in at_import.detail


def test_timeout_names_the_test_that_was_running(sandbox):
    suite = "def test_a(candidate):\n    assert candidate(0) == 0\n"
    suite += "def test_b(candidate):\n    assert candidate(1) == 1\n"
    began = time.perf_counter()
    result = run(sandbox, "def f(n):\n    while n:\n        pass\n    return n", suite)
    assert time.perf_counter() - began < FAST.timeout_s + SLACK_S
    assert (result.status, result.passed, result.failed) == ("timeout", 1, 0)
    assert result.first_failure == Failure("test_b", "", "", "timed out")
    assert "test_b" in result.detail


def test_cpu_limit_defaults_past_the_wall_clock():
    """A busy loop ends as a timeout, not at random as either: the CPU limit is the wall
    clock plus a second unless cpu_s is set."""
    assert Limits(timeout_s=2).cpu_seconds() == 3
    assert Limits(timeout_s=2.5).cpu_seconds() == 4
    assert Limits(timeout_s=6, cpu_s=1).cpu_seconds() == 1


def test_cpu_limit_kills(sandbox):
    tight = Sandbox(Limits(timeout_s=20, cpu_s=1), isolation=sandbox.isolation)
    began = time.perf_counter()
    result = run(tight, "def f():\n    while True:\n        pass")
    assert time.perf_counter() - began < 20  # CPU time, not the 20 s wall clock, ended it
    assert result.status == "killed"
    assert "SIGXCPU" in result.detail
    assert result.first_failure.test == "test_it"


def test_to_json_has_exactly_the_contract_fields(sandbox):
    result = run(sandbox, "def f():\n    return 'no'")
    data = result.to_json()
    fields = {"status", "passed", "failed", "first_failure", "seconds", "detail"}
    assert set(data) == fields | {"output_bytes", "output_cut"}
    assert set(data["first_failure"]) == {"test", "input", "expected", "actual"}
    assert json.loads(json.dumps(data)) == data
    assert run(sandbox, "def f():\n    return 'ok'").to_json()["first_failure"] is None


def test_runs_the_base_interpreter_without_the_venv(sandbox):
    assert os.path.realpath(interpreter()).startswith(os.path.realpath(sys.base_prefix))
    result = run(sandbox, "import pydantic\ndef f():\n    return 'ok'")
    assert result.status == "crashed"
    assert "No module named 'pydantic'" in result.detail


# The pool and the event loop.


SLEEPY = "import time\ndef f():\n    time.sleep(0.3)\n    return 'ok'"


def test_workers_bound_the_runs_in_flight(sandbox):
    one = Sandbox(FAST, workers=1, isolation=sandbox.isolation)

    async def three() -> list[SuiteResult]:
        suite = Suite("heldout", ONE_TEST, "f")
        return await asyncio.gather(*(one.run(SLEEPY, suite) for _ in range(3)))

    began = time.perf_counter()
    results = asyncio.run(three())
    assert [r.status for r in results] == ["passed"] * 3
    assert time.perf_counter() - began >= 0.9


def test_a_run_does_not_block_the_event_loop(sandbox):
    async def ticks_during_a_run() -> int:
        count = 0

        async def tick() -> None:
            nonlocal count
            while True:
                count += 1
                await asyncio.sleep(0.01)

        ticker = asyncio.create_task(tick())
        await sandbox.run(SLEEPY, Suite("heldout", ONE_TEST, "f"))
        ticker.cancel()
        return count

    assert asyncio.run(ticks_during_a_run()) >= 10


def test_runs_cancelled_at_any_point_are_killed_and_do_not_hang(isolated, started):
    """As when another task of a TaskGroup fails: the runs are cancelled wherever they are,
    starting their process included (where asyncio's own subprocesses can hang for good,
    CPython #125502). A hang fails this test rather than hanging it."""
    suite = Suite("heldout", ONE_TEST, "f")
    pool = Sandbox(FAST, workers=4, isolation=isolated.isolation)

    async def fail_after(delay: float) -> None:
        await asyncio.sleep(delay)
        raise RuntimeError("another task failed")

    async def cancelled_runs(delay: float) -> None:
        async with asyncio.TaskGroup() as group:
            for _ in range(8):
                group.create_task(pool.run(SLEEPY, suite))
            group.create_task(fail_after(delay))

    errors: list[BaseException] = []

    def attempts() -> None:
        for delay in (0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.35):
            try:
                asyncio.run(cancelled_runs(delay))
            except BaseException as exc:
                errors.append(exc)

    thread = threading.Thread(target=attempts, daemon=True)
    thread.start()
    thread.join(120)  # a hang is for good; a loaded machine may still take a while
    assert not thread.is_alive(), "a cancelled run hung"
    assert [type(e) for e in errors] == [ExceptionGroup] * 7
    assert all(isinstance(e, RuntimeError) for group in errors for e in group.exceptions)
    started.assert_all_ended()


def test_a_run_cancelled_again_as_it_ends_still_kills_and_reaps(isolated, started, monkeypatch):
    """A second cancellation that lands while the run is killing its processes does not cut
    that short: nothing is left running, nothing unreaped (a ResourceWarning here)."""
    code = "import time\ndef f():\n    time.sleep(5)\n    return 'ok'"
    killing = asyncio.Event()
    end_trusted = sandbox_run.end_trusted

    async def signalling(*args):  # the test runner is ended first
        killing.set()
        await asyncio.sleep(0)  # where the second cancellation lands
        await end_trusted(*args)

    monkeypatch.setattr(sandbox_run, "end_trusted", signalling)

    async def cancelled_twice() -> None:
        task = asyncio.ensure_future(isolated.run(code, Suite("heldout", ONE_TEST, "f")))
        await asyncio.sleep(0.5)
        task.cancel()
        await killing.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancelled_twice())
    gc.collect()
    started.assert_all_ended()
