"""The sandbox (issue 10): each status and what its report says; then hostile code at every
isolation level this machine has, each ending as a recorded failure, this process unharmed."""

import asyncio
import json
import os
import socket
import stat
import sys
import tempfile
import time
from pathlib import Path

import pytest

import harness.runner
from graders.sandbox import (
    LEVELS,
    Failure,
    Limits,
    Sandbox,
    SandboxError,
    Suite,
    SuiteResult,
    interpreter,
    probe,
)

FAST = Limits(timeout_s=2.0, memory_mb=256)
ONE_TEST = "def test_it(candidate):\n    assert candidate() == 'ok'\n"


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox(FAST)


@pytest.fixture(scope="module", params=LEVELS)
def isolated(request: pytest.FixtureRequest) -> Sandbox:
    why = probe(request.param)
    if why:
        pytest.skip(f"isolation {request.param!r} does not work on this machine: {why}")
    return Sandbox(FAST, isolation=request.param)


def run(sandbox: Sandbox, code: str, suite: str = ONE_TEST, **kw: str) -> SuiteResult:
    return sandbox.run_sync(code, Suite("heldout", suite, kw.pop("entry", "f"), **kw))


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


def test_timeout_names_the_test_that_was_running(sandbox):
    suite = "def test_a(candidate):\n    assert candidate(0) == 0\n"
    suite += "def test_b(candidate):\n    assert candidate(1) == 1\n"
    began = time.perf_counter()
    result = run(sandbox, "def f(n):\n    while n:\n        pass\n    return n", suite)
    assert time.perf_counter() - began < FAST.timeout_s + 1.5
    assert (result.status, result.passed, result.failed) == ("timeout", 1, 0)
    assert result.first_failure == Failure("test_b", "", "", "timed out")
    assert "test_b" in result.detail


def test_cpu_limit_kills(sandbox):
    tight = Sandbox(Limits(timeout_s=6, cpu_s=1), isolation=sandbox.isolation)
    began = time.perf_counter()
    result = run(tight, "def f():\n    while True:\n        pass")
    assert time.perf_counter() - began < 4
    assert result.status == "killed"
    assert "SIGXCPU" in result.detail
    assert result.first_failure.test == "test_it"


def test_to_json_has_exactly_the_contract_fields(sandbox):
    result = run(sandbox, "def f():\n    return 'no'")
    data = result.to_json()
    assert set(data) == {"status", "passed", "failed", "first_failure", "seconds", "detail"}
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


# Choosing the isolation level.


def test_unknown_level_is_refused_with_the_choices(monkeypatch):
    monkeypatch.setenv("LOOPBENCH_SANDBOX", "docker")
    with pytest.raises(SandboxError, match="bwrap, unshare, none"):
        Sandbox()


def test_forced_level_and_its_warning(monkeypatch):
    monkeypatch.setenv("LOOPBENCH_SANDBOX", "none")
    forced = Sandbox(FAST)
    assert forced.isolation == "none"
    assert "install bubblewrap" in forced.warning
    assert run(forced, "def f():\n    return 'ok'").status == "passed"


def test_bwrap_has_no_warning():
    if probe("bwrap"):
        pytest.skip(f"bwrap does not work here: {probe('bwrap')}")
    assert Sandbox(FAST).isolation == "bwrap"
    assert Sandbox(FAST, isolation="bwrap").warning == ""


# Hostile code, at every isolation level available.


def live_runners() -> list[int]:
    """Processes still running the suite runner (forked copies included), zombies aside."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if b"suite_runner.py" in cmdline and state != "Z":
            pids.append(int(entry.name))
    return pids


def assert_no_runner_outlives_it() -> None:
    deadline = time.monotonic() + 5
    while live_runners() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert live_runners() == []


def test_infinite_loop_times_out(isolated):
    began = time.perf_counter()
    result = run(isolated, "def f():\n    while True:\n        pass")
    assert result.status == "timeout"
    assert time.perf_counter() - began < FAST.timeout_s + 1.5
    assert_no_runner_outlives_it()


def test_huge_allocation_is_killed(isolated):
    """300 MB: over the 256 MB limit, well within this machine (so only the limit stops it)."""
    result = run(isolated, "def f():\n    block = bytearray(300 * 2**20)\n    return 'ok'")
    assert result.status == "killed"
    assert "memory" in result.detail


def test_fork_bomb_is_refused(isolated):
    began = time.perf_counter()
    result = run(isolated, "import os\ndef f():\n    while True:\n        os.fork()")
    assert result.status == "failed"
    assert "os.fork is not allowed" in result.first_failure.actual
    assert time.perf_counter() - began < 1.5
    assert_no_runner_outlives_it()


# _posixsubprocess.fork_exec raises no audit event: its preexec_fn forks on and on, so only
# the process limit, the dropped uid and the group kill stand in the way. It refuses to
# start without the first two, and every copy stops itself after 10 s, so a broken sandbox
# fails this test without harming the machine.
HOOKLESS_BOMB = """
import _posixsubprocess, os, resource, time

def bomb():
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            r, w = os.pipe()
            _posixsubprocess.fork_exec(
                [b"x"], [b"/nonexistent"], True, (), None, None, -1, -1, -1, -1, -1, -1,
                r, w, True, False, -1, -1, None, -1, -1, bomb, False)
            os.close(r)
            os.close(w)
        except OSError:
            pass

def f():
    if os.getuid() == 0 or resource.getrlimit(resource.RLIMIT_NPROC)[0] > 1000:
        return "refused: no process limit"
    bomb()
"""


def test_fork_bomb_past_the_audit_hook_is_contained(isolated):
    began = time.perf_counter()
    result = run(isolated, HOOKLESS_BOMB)
    assert result.status == "timeout"
    assert time.perf_counter() - began < FAST.timeout_s + 1.5
    assert_no_runner_outlives_it()


def test_runs_unprivileged_when_started_as_root(isolated):
    if os.geteuid() != 0:
        pytest.skip("the uid is dropped only when the harness runs as root")
    code = "import os\ndef f():\n    return (os.getuid(), os.getgid(), os.getgroups())"
    suite = "def test_nobody(candidate):\n    assert candidate() == (65534, 65534, [])\n"
    assert run(isolated, code, suite).status == "passed"


def test_socket_cannot_reach_a_listener_on_this_machine(isolated):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        port = listener.getsockname()[1]
        code = "import socket\ndef f():\n"
        code += f"    socket.create_connection(('127.0.0.1', {port}), timeout=1)\n    return 'ok'"
        result = run(isolated, code)
        assert result.status == "failed"
        with pytest.raises(BlockingIOError):
            listener.accept()


@pytest.fixture
def secret_file():
    """A key file any local user could read: only the sandbox stands in the way."""
    folder = tempfile.mkdtemp(prefix="loopbench-secret-")
    os.chmod(folder, 0o755)
    path = Path(folder, "id_rsa")
    path.write_text("-----BEGIN FAKE KEY----- s3cr3t-m4t3r14l")
    path.chmod(stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP | stat.S_IROTH)
    yield path
    path.unlink()
    os.rmdir(folder)


def test_cannot_read_a_secret_outside_the_sandbox(isolated, secret_file):
    code = f"def f():\n    return open({str(secret_file)!r}).read()"
    result = run(isolated, code)
    assert result.status == "failed"
    assert "s3cr3t" not in json.dumps(result.to_json())


def test_cannot_read_the_harness_source(isolated):
    source = Path(harness.runner.__file__)
    first_line = source.read_text().splitlines()[0]
    result = run(isolated, f"def f():\n    return open({str(source)!r}).read()")
    assert result.status == "failed"
    assert first_line[5:40] not in json.dumps(result.to_json())


def test_parent_environment_never_reaches_the_candidate(isolated, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    code = "import os\ndef f():\n    print(os.environ)\n    try:\n"
    code += "        raw = open('/proc/self/environ').read()\n    except OSError as exc:\n"
    code += "        raw = str(exc)\n    return repr(dict(os.environ)) + raw"
    result = run(isolated, code)
    report = json.dumps(result.to_json())
    assert "PATH" in result.first_failure.actual  # the environment was shown...
    assert "sk-test-secret" not in report  # ...without the key
    assert "OPENAI_API_KEY" not in report


def test_output_flood_is_capped(isolated):
    began = time.perf_counter()
    result = run(isolated, "def f():\n    while True:\n        print('x' * 10000)")
    assert result.status == "killed"
    assert "output limit" in result.detail
    assert time.perf_counter() - began < 1.5


def test_bwrap_hides_this_machine_even_from_stat(secret_file):
    """os.stat raises no audit event: under bwrap the files are simply not there."""
    if probe("bwrap"):
        pytest.skip(f"bwrap does not work here: {probe('bwrap')}")
    harness_dir = os.path.dirname(harness.runner.__file__)
    paths = [str(secret_file), harness_dir, "/etc/passwd"]
    code = f"import os\ndef f():\n    return [os.path.exists(p) for p in {paths!r}]"
    suite = "def test_hidden(candidate):\n    assert candidate() == [False, False, False]\n"
    assert run(Sandbox(FAST, isolation="bwrap"), code, suite).status == "passed"
    assert run(Sandbox(FAST, isolation="none"), code, suite).status == "failed"
