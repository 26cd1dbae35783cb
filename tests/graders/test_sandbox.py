"""The sandbox (issue 10): each status and what its report says; then hostile code at every
isolation level this machine has, each ending as a recorded failure, this process unharmed."""

import asyncio
import gc
import json
import os
import socket
import stat
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

import graders.isolation
import harness.runner
from graders.isolation import LEVELS, SandboxError, interpreter, probe, warning
from graders.processes import SANDBOX_UIDS
from graders.sandbox import Limits, Sandbox, Suite
from graders.suite_result import Failure, SuiteResult

FAST = Limits(timeout_s=2.0, memory_mb=256)
#: How much later than its wall clock a run may return on a loaded machine (the status says
#: what ended it; this only catches a run that is not ended at all).
SLACK_S = 10.0
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


# The events come back through a descriptor the candidate's process holds, so a candidate can
# forge them; the parent checks that a pass adds up.


def forge(line: str) -> str:
    """Candidate code that writes ``line`` to every descriptor it may hold, then exits."""
    return (
        f"import os\nfor fd in range(3, 64):\n    try:\n        os.write(fd, {line!r}.encode())\n"
        "    except OSError:\n        pass\nos._exit(0)\n"
    )


FORGED_END = forge('{"event": "end", "status": "passed", "detail": ""}\n')
PATCHED_RUN_TESTS = "import __main__\n__main__.run_tests = lambda *args: 'passed'\n"


@pytest.mark.parametrize("forgery", [FORGED_END, PATCHED_RUN_TESTS], ids=["end-line", "run_tests"])
def test_a_forged_pass_does_not_add_up(sandbox, forgery):
    result = run(sandbox, forgery + "def f():\n    return 'no'\n")
    assert (result.status, result.passed, result.failed) == ("crashed", 0, 0)
    assert "do not add up" in result.detail


def test_every_field_read_back_is_capped(sandbox):
    event = {"event": "fail", "test": "t" * 5000, "actual": "x" * 100_000}
    lines = json.dumps(event) + '\n{"event": "start"}\n'  # and a start naming no test
    result = run(sandbox, forge(lines) + "def f():\n    return 'ok'\n")
    assert result.first_failure is not None
    assert len(result.first_failure.test) <= 1000
    assert len(result.first_failure.actual) <= 1000


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


def test_runs_cancelled_at_any_point_are_killed_and_do_not_hang(isolated):
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
    assert_no_runner_outlives_it()


def test_a_run_cancelled_again_as_it_ends_still_kills_and_reaps(isolated):
    """A second cancellation that lands while the run is killing its processes does not cut
    that short: nothing is left running, nothing unreaped (a ResourceWarning here)."""
    code = "import time\ndef f():\n    time.sleep(5)\n    return 'ok'"

    async def cancelled_twice() -> None:
        task = asyncio.ensure_future(isolated.run(code, Suite("heldout", ONE_TEST, "f")))
        await asyncio.sleep(0.5)
        task.cancel()
        await asyncio.sleep(0)  # it takes the first, and starts to kill
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancelled_twice())
    gc.collect()
    assert_no_runner_outlives_it()


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
    assert "defence in depth and can be bypassed" in forced.warning
    assert run(forced, "def f():\n    return 'ok'").status == "passed"


@pytest.mark.parametrize("level", ["unshare", "none"])
def test_weak_levels_warn_what_the_same_user_can_reach(monkeypatch, level):
    monkeypatch.setattr(graders.isolation, "is_root", lambda: False)
    said = warning(level)
    assert "defence in depth and can be bypassed" in said
    assert "the harness's own files and environment" in said
    assert "on this machine's disk" in said


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
    """Checked the moment the run returns: the sandbox waits until its processes are gone."""
    assert live_runners() == []


def test_infinite_loop_times_out(isolated):
    began = time.perf_counter()
    result = run(isolated, "def f():\n    while True:\n        pass")
    assert result.status == "timeout"
    assert time.perf_counter() - began < FAST.timeout_s + SLACK_S
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
    assert time.perf_counter() - began < FAST.timeout_s  # ended by the limit, not the clock
    assert_no_runner_outlives_it()


# The audit hook is defence in depth: code in its process can reach the hook's closure and
# empty what it refuses. The tests below get past it this way to try what stands behind it.
UNHOOK = """
import gc

for hook in [o for o in gc.get_objects() if getattr(o, "__name__", "") == "hook"]:
    for cell in hook.__closure__ or ():
        if isinstance(cell.cell_contents, (frozenset, tuple, dict)):
            cell.cell_contents = type(cell.cell_contents)()
        elif isinstance(cell.cell_contents, int):
            cell.cell_contents = 10**9
"""

# _posixsubprocess.fork_exec raises no audit event: its preexec_fn forks on and on, so only
# the process limit, the dropped uid and the kill at the end stand in the way. It refuses to
# start without the first two, and every copy stops itself after 10 s, so a broken sandbox
# fails this test without harming the machine.
HOOKLESS_BOMB = (
    UNHOOK
    + """
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
)


def test_fork_bomb_past_the_audit_hook_is_contained(isolated):
    began = time.perf_counter()
    result = run(isolated, HOOKLESS_BOMB)
    assert result.status == "timeout"
    assert time.perf_counter() - began < FAST.timeout_s + SLACK_S
    assert_no_runner_outlives_it()


# A child that outlives a run that ended well: the runner exits, the child sleeps on.
LINGERER = (
    UNHOOK
    + """
import _posixsubprocess, os, time

def linger():
    time.sleep(20)
    os._exit(0)

def f():
    r, w = os.pipe()
    _posixsubprocess.fork_exec(
        [b"x"], [b"/nonexistent"], True, (), None, None, -1, -1, -1, -1, -1, -1,
        r, w, True, False, -1, -1, None, -1, -1, linger, False)
    time.sleep(0.2)
    return 'ok'
"""
)


@pytest.mark.parametrize("leaves_the_group", [False, True], ids=["in-group", "own-session"])
def test_a_child_left_behind_dies_with_the_run(isolated, leaves_the_group):
    if leaves_the_group and isolated.isolation != "bwrap" and os.geteuid() != 0:
        pytest.skip("as the same user, a process that leaves the group can outlive the run")
    code = LINGERER.replace("time.sleep(20)", "os.setsid()\n    time.sleep(20)")
    assert run(isolated, code if leaves_the_group else LINGERER).status == "passed"
    assert_no_runner_outlives_it()


def test_runs_unprivileged_when_started_as_root(isolated):
    if os.geteuid() != 0:
        pytest.skip("the uid is dropped only when the harness runs as root")
    code = "import os\ndef f():\n    return (os.getuid(), os.getgid(), os.getgroups())"
    suite = "def test_nobody(candidate):\n    assert candidate() == 0\n"
    uid, gid, groups = eval(run(isolated, code, suite).first_failure.actual)
    assert (uid, gid, groups) == (uid, uid, [])
    assert uid in SANDBOX_UIDS


def test_each_run_in_flight_has_a_uid_of_its_own(isolated):
    """The process limit counts per uid: a fork bomb in one run cannot starve its neighbour."""
    if os.geteuid() != 0:
        pytest.skip("the uid is dropped only when the harness runs as root")
    pool = Sandbox(FAST, workers=3, isolation=isolated.isolation)
    code = "import os, time\ndef f():\n    time.sleep(0.5)\n    return os.getuid()"

    async def three() -> list[SuiteResult]:
        suite = Suite("heldout", ONE_TEST, "f")
        return await asyncio.gather(*(pool.run(code, suite) for _ in range(3)))

    uids = {int(result.first_failure.actual) for result in asyncio.run(three())}
    assert len(uids) == 3
    assert uids <= set(SANDBOX_UIDS)


@pytest.mark.parametrize("module", ["_posixsubprocess", "_posixshmem", "_sqlite3", "_ctypes"])
def test_imports_that_reach_past_the_hook_are_refused(isolated, module):
    result = run(isolated, f"def f():\n    import {module}\n    return 'ok'")
    assert result.status == "failed"
    assert f"import {module} is not allowed" in result.first_failure.actual


def test_a_descriptor_relative_open_cannot_reach_a_secret(isolated, secret_file):
    """The hook sees the path of ``os.open(path, dir_fd=...)`` but not the descriptor: a
    relative path there could be anywhere, so it is refused."""
    code = "import os\ndef f():\n    os.mkdir('s')\n"
    code += f"    os.symlink({str(secret_file.parent)!r}, 's/e')\n"
    code += "    fd = os.open(os.path.abspath('s'), os.O_RDONLY)\n"
    code += "    return os.read(os.open('e/id_rsa', os.O_RDONLY, dir_fd=fd), 100)"
    result = run(isolated, code)
    assert result.status == "failed"
    assert "s3cr3t" not in json.dumps(result.to_json())


@pytest.mark.parametrize(
    "call",
    [
        "open('sub/../x', 'w')",
        "os.mkdir('d', dir_fd=os.open(os.getcwd(), os.O_RDONLY))",
        "os.remove('/etc/hostname')",
        "os.rename('x', '../x')",
    ],
    ids=["dotdot", "dir_fd", "remove-outside", "rename-outside"],
)
def test_paths_the_hook_cannot_vouch_for_are_refused(isolated, call):
    code = f"import os\nos.mkdir('sub')\nopen('x', 'w').close()\ndef f():\n    {call}"
    result = run(isolated, code)
    assert result.status == "failed"
    assert "sandbox:" in result.first_failure.actual, result.first_failure


def test_the_number_of_new_files_is_capped(isolated):
    code = "def f():\n    for i in range(100):\n        open(f'f{i}', 'w').close()\n"
    result = run(isolated, code)
    assert result.status == "failed"
    assert "new files" in result.first_failure.actual


def test_a_file_over_its_share_of_the_disk_is_refused(isolated):
    """disk_mb / 16 per file (RLIMIT_FSIZE): 4 MB of the default 64. Python ignores SIGXFSZ,
    so the write raises."""
    code = "def f():\n    open('big', 'wb').write(bytes(5 * 2**20))\n    return 'ok'"
    result = run(isolated, code)
    assert result.status == "failed"
    assert "File too large" in result.first_failure.actual


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
    assert result.detail == f"output limit ({FAST.output_bytes} bytes) exceeded"
    assert time.perf_counter() - began < FAST.timeout_s  # ended by the limit, not the clock


def test_output_written_past_sys_stdout_is_capped(isolated):
    code = "import os\ndef f():\n    os.write(1, b'x' * 200_000)\n    return 'ok'"
    result = run(isolated, code)
    assert result.status == "killed"
    assert "output limit" in result.detail
    assert "written past sys.stdout" in result.detail


def test_bwrap_bounds_the_work_directory():
    """Past the hook, files of the most one may hold (disk_mb / 16) until the disk is full:
    under bwrap the work directory is a tmpfs of disk_mb, not this machine's disk. (200 files
    at most, 100 MB, should that be broken.)"""
    if probe("bwrap"):
        pytest.skip(f"bwrap does not work here: {probe('bwrap')}")
    code = UNHOOK + "def f():\n    written = 0\n    try:\n        while written < 200:\n"
    code += "            open(f'f{written}', 'wb').write(bytes(2**19))\n            written += 1\n"
    code += "    except OSError as exc:\n        return (written, exc.strerror)"
    sandbox = Sandbox(Limits(timeout_s=10, disk_mb=8), isolation="bwrap")
    written, error = eval(run(sandbox, code).first_failure.actual)
    assert written <= 16  # 8 MB
    assert error == "No space left on device"


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
