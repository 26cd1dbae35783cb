"""Hostile code at every isolation level this machine has (issues 10 and 20): each ends as a
recorded failure, this process unharmed, and nothing it started outlives its run."""

import asyncio
import json
import os
import socket
import time
from pathlib import Path

import pytest

import loopbench.harness.runner
from loopbench.sandbox import box as sandbox_box
from loopbench.sandbox import isolation as sandbox_isolation
from loopbench.sandbox.isolation import SandboxError, probe, warning
from loopbench.sandbox.limits import Limits
from loopbench.sandbox.processes import SANDBOX_UIDS
from loopbench.sandbox.run import Sandbox, Suite
from loopbench.sandbox.suite_result import SuiteResult
from tests.sandbox.hostile import ROMAN_REFERENCE as REFERENCE
from tests.sandbox.hostile import UNHOOK
from tests.sandbox.sandboxing import FAST, ONE_TEST, SLACK_S, run

# Choosing the isolation level.


def test_unknown_level_is_refused_with_the_choices(monkeypatch):
    monkeypatch.setenv("LOOPBENCH_SANDBOX", "docker")
    with pytest.raises(SandboxError, match="bwrap, unshare, none"):
        Sandbox()


def test_forced_level_and_its_warning(monkeypatch):
    """A level asked for by hand is said to be, with the stronger ones that work here (issue
    28: "neither bubblewrap nor unshare works here" when both did)."""
    monkeypatch.setenv("LOOPBENCH_SANDBOX", "none")
    forced = Sandbox(FAST)
    assert forced.isolation == "none"
    assert "sandbox: none (asked for by LOOPBENCH_SANDBOX=none" in forced.warning
    assert "defence in depth and can be bypassed" in forced.warning
    working = [level for level in ("bwrap", "unshare") if not probe(level)]
    assert ("neither bubblewrap nor unshare works here" in forced.warning) == (not working)
    assert all(f"{level}" in forced.warning.split("):")[0] for level in working)
    assert ("install bubblewrap" in forced.warning) == ("bwrap" not in working)
    assert run(forced, "def f():\n    return 'ok'").status == "passed"


def test_the_level_none_chosen_as_the_best_says_nothing_stronger_works(monkeypatch):
    monkeypatch.setattr(sandbox_isolation, "probe", lambda level: "" if level == "none" else "no")
    monkeypatch.delenv("LOOPBENCH_SANDBOX", raising=False)
    said = Sandbox(FAST).warning
    assert "sandbox: none (neither bubblewrap nor unshare works here)" in said
    assert "install bubblewrap" in said
    asked = Sandbox(FAST, isolation="none").warning
    assert "none (asked for by isolation='none'; neither bubblewrap nor unshare works" in asked


def test_the_level_none_warns_what_the_same_user_can_reach(monkeypatch):
    monkeypatch.setattr(sandbox_isolation, "is_root", lambda: False)
    said = warning("none")
    assert "defence in depth and can be bypassed" in said
    assert "the harness's own files and environment" in said
    assert "on this machine's disk" in said
    assert warning("unshare") == ""


def test_a_machine_without_cgroups_is_said(monkeypatch):
    monkeypatch.setattr(sandbox_box, "hierarchies", lambda: None)
    said = Sandbox(FAST, isolation="none").warning
    assert "sandbox: no cgroups can be made here" in said
    assert "watched from outside" in said


def test_bwrap_has_no_warning():
    if probe("bwrap"):
        pytest.skip(f"bwrap does not work here: {probe('bwrap')}")
    assert Sandbox(FAST).isolation == "bwrap"
    assert warning("bwrap") == ""


# The audit hook is defence in depth: code in its process can reach the hook's closure and
# empty what it refuses (UNHOOK). Some tests below get past it this way to try what stands
# behind it: the kernel's limits, the namespaces, the box.


def test_infinite_loop_times_out(isolated, started):
    began = time.perf_counter()
    result = run(isolated, "def f():\n    while True:\n        pass")
    assert result.status == "timeout"
    assert time.perf_counter() - began < FAST.timeout_s + SLACK_S
    started.assert_all_ended()


def test_huge_allocation_is_killed(isolated):
    """300 MB: over the 256 MB limit, well within this machine (so only the limit stops it).
    The process's own limit (RLIMIT_AS) refuses it before the box's would have to kill."""
    result = run(isolated, "def f():\n    block = bytearray(300 * 2**20)\n    return 'ok'")
    assert result.status == "killed"
    assert result.detail == f"memory limit ({FAST.memory_mb} MB) exceeded"


def test_fork_bomb_is_refused(isolated, started):
    began = time.perf_counter()
    result = run(isolated, "import os\ndef f():\n    while True:\n        os.fork()")
    assert result.status == "failed"
    assert "os.fork is not allowed" in result.first_failure.actual
    assert time.perf_counter() - began < FAST.timeout_s  # ended by the limit, not the clock
    started.assert_all_ended()


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


@pytest.fixture(params=["box", "no-box"])
def boxed(request, monkeypatch):
    """Each run in a box of cgroups where this machine allows it, or with none (the watch):
    what is killed at the end is killed either way."""
    if request.param == "box" and sandbox_box.hierarchies() is None:
        pytest.skip("no cgroups can be made here (not root, or no memory and pids controllers)")
    if request.param == "no-box":
        monkeypatch.setattr(sandbox_box, "hierarchies", lambda: None)
    return request.param


def test_fork_bomb_past_the_audit_hook_is_contained(isolated, boxed, started):
    """Held at the process limit until the wall clock ends it; without a box, the watch may
    end it first, for its number of processes."""
    began = time.perf_counter()
    result = run(isolated, HOOKLESS_BOMB)
    watched = (boxed, result.status) == ("no-box", "killed")
    assert result.status == "timeout" or watched, result
    if watched:
        assert result.detail.endswith("exceeded by the run's processes")
    assert time.perf_counter() - began < FAST.timeout_s + SLACK_S
    started.assert_all_ended()


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
def test_a_child_left_behind_dies_with_the_run(isolated, boxed, leaves_the_group, started):
    if leaves_the_group and isolated.isolation != "bwrap" and os.geteuid() != 0:
        pytest.skip("as the same user, a process that leaves the group can outlive the run")
    code = LINGERER.replace("time.sleep(20)", "os.setsid()\n    time.sleep(20)")
    assert run(isolated, code if leaves_the_group else LINGERER).status == "passed"
    started.assert_all_ended()


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


def test_cannot_read_a_secret_outside_the_sandbox(isolated, secret_file):
    code = f"def f():\n    return open({str(secret_file)!r}).read()"
    result = run(isolated, code)
    assert result.status == "failed"
    assert "s3cr3t" not in json.dumps(result.to_json())


def test_cannot_read_the_harness_source(isolated):
    source = Path(loopbench.harness.runner.__file__)
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


@pytest.mark.parametrize("level", ["bwrap", "unshare"])
def test_the_work_directory_is_bounded(level):
    """Past the hook, files of the most one may hold (disk_mb / 16) until the disk is full:
    under bwrap and unshare the work directory is a tmpfs of disk_mb, not this machine's disk.
    (200 files at most, 100 MB, should that be broken.)"""
    if probe(level):
        pytest.skip(f"{level} does not work here: {probe(level)}")
    code = UNHOOK + "def f():\n    written = 0\n    try:\n        while written < 200:\n"
    code += "            open(f'f{written}', 'wb').write(bytes(2**19))\n            written += 1\n"
    code += "    except OSError as exc:\n        return (written, exc.strerror)"
    sandbox = Sandbox(Limits(timeout_s=10, disk_mb=8), isolation=level)
    written, error = eval(run(sandbox, code).first_failure.actual)
    assert written <= 16  # 8 MB
    assert error == "No space left on device"


@pytest.mark.parametrize("level", ["bwrap", "unshare"])
def test_this_machine_is_hidden_even_from_stat(level, secret_file):
    """os.stat raises no audit event: under bwrap and unshare the files are simply not there,
    the repository (its task suites and references) included."""
    if probe(level):
        pytest.skip(f"{level} does not work here: {probe(level)}")
    harness_dir = os.path.dirname(loopbench.harness.runner.__file__)
    paths = [str(secret_file), harness_dir, "/etc/passwd", str(REFERENCE)]
    code = f"import os\ndef f():\n    return [os.path.exists(p) for p in {paths!r}]"
    suite = "def test_hidden(candidate):\n    assert candidate() == [False] * 4\n"
    assert run(Sandbox(FAST, isolation=level), code, suite).status == "passed"
    assert run(Sandbox(FAST, isolation="none"), code, suite).status == "failed"
