"""The box (issue 20): memory and processes bounded for all of a run's processes together, by
the kernel's cgroups where this machine allows them, else watched from outside; and /tmp and
/dev/shm private to the run at every level, leaving nothing behind."""

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from loopbench.sandbox import box as sandbox_box
from loopbench.sandbox.box import Box, hierarchies
from loopbench.sandbox.limits import Limits
from loopbench.sandbox.run import Sandbox
from tests.sandbox.hostile import SPAWN, UNHOOK
from tests.sandbox.sandboxing import as_root, run

needs_cgroups = pytest.mark.skipif(
    hierarchies() is None, reason="no cgroups can be made here (not root, or no controllers)"
)


def in_box(box: Box, code: str) -> subprocess.CompletedProcess[str]:
    """Runs ``code`` in a process that first joins ``box``, as the worker does."""
    fds = box.join_fds()
    join = f"import os\nfor fd in {fds!r}:\n    os.write(fd, b'0')\n    os.close(fd)\n"
    try:
        return subprocess.run(
            [sys.executable, "-I", "-c", join + code],
            pass_fds=fds,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        for fd in fds:
            os.close(fd)


@needs_cgroups
def test_the_box_bounds_the_memory_of_its_processes_together():
    """Three children of 40 MB each, in a box of 64 MB: the kernel kills inside the box."""
    box = Box.make(64 << 20, 32)
    assert box is not None
    try:
        code = (
            "import os, time\nkids = []\nfor _ in range(3):\n    pid = os.fork()\n"
            "    if pid == 0:\n        block = b'x' * (40 << 20)\n        time.sleep(2)\n"
            "        os._exit(0)\n    kids.append(pid)\n"
            "print([os.waitstatus_to_exitcode(os.waitpid(k, 0)[1]) for k in kids])"
        )
        done = in_box(box, code)
        assert -9 in eval(done.stdout), done
    finally:
        box.end()
    assert box.killed_for_memory
    assert not any(d.exists() for d in box.dirs)


@needs_cgroups
def test_the_box_bounds_its_processes():
    box = Box.make(256 << 20, 6)
    assert box is not None
    try:
        code = (
            "import os, time\nmade = 0\nwhile made < 50:\n    try:\n        pid = os.fork()\n"
            "    except OSError:\n        break\n    if pid == 0:\n        time.sleep(5)\n"
            "        os._exit(0)\n    made += 1\nprint(made)"
        )
        assert int(in_box(box, code).stdout) < 6
    finally:
        box.end()
    assert not box.killed_for_memory


@needs_cgroups
def test_ending_a_box_kills_everything_in_it_and_removes_it():
    """A process that left its parent's session still dies with the box."""
    box = Box.make(256 << 20, 16)
    assert box is not None
    code = (
        "import os, time\nif os.fork() == 0:\n    os.setsid()\n"
        "    for fd in (1, 2):\n        os.dup2(os.open(os.devnull, os.O_WRONLY), fd)\n"
        "    time.sleep(60)\n    os._exit(0)\nprint('started')"
    )
    assert in_box(box, code).stdout.strip() == "started"
    assert box.pids()  # the grandchild, in its own session
    box.end()
    assert not any(d.exists() for d in box.dirs)


MEMORY_HOGS = (
    UNHOOK
    + SPAWN
    + """
import time

def _hog():
    block = b"x" * (200 << 20)
    time.sleep(3 + len(block) * 0)
    os._exit(0)

for _ in range(4):
    _spawn(_hog)
time.sleep(2)

def f():
    return 'ok'
"""
)


@pytest.mark.parametrize("box", ["cgroups", "watched"])
def test_processes_past_the_hook_share_one_memory_limit(isolated, box, monkeypatch):
    """Four children of 200 MB, each under the 256 MB a process may have: 800 MB together,
    over the run's 256. The answer is right; the run is killed for its memory."""
    if box == "cgroups" and hierarchies() is None:
        pytest.skip("no cgroups can be made here (not root, or no controllers)")
    if box == "watched":
        monkeypatch.setattr(sandbox_box, "hierarchies", lambda: None)
    result = run(isolated, MEMORY_HOGS)
    assert result.status == "killed"
    assert result.detail == "memory limit (256 MB) exceeded by the run's processes"


#: A run of three processes: the first holds 64 MB and two children it forked.
THREE_PROCESSES = (
    "import os, time\nfor _ in range(2):\n    if os.fork() == 0:\n        time.sleep(60)\n"
    "        os._exit(0)\nblock = b'x' * (64 << 20)\nprint('ready', flush=True)\ntime.sleep(60)"
)


def watched(memory_mb: int, processes: int, started: int, seconds: float) -> str | None:
    """What the watch says within ``seconds`` of the run whose first process is ``started``
    (the level none, not root: that process and its descendants); None if nothing is over."""
    over = sandbox_box.watch(memory_mb << 20, processes, None, started)
    try:
        return asyncio.run(asyncio.wait_for(over, seconds))
    except TimeoutError:
        return None


def test_the_watch_ends_a_run_over_either_limit():
    """Without cgroups the watch counts the run's processes (the first one's descendants
    too) and sums their memory, read from /proc, and says which limit they are over."""
    run = subprocess.Popen(
        [sys.executable, "-c", THREE_PROCESSES], stdout=subprocess.PIPE, start_new_session=True
    )
    try:
        assert run.stdout is not None and run.stdout.readline() == b"ready\n"
        says = "exceeded by the run's processes"
        assert watched(64, 3, run.pid, 20) == f"memory limit (64 MB) {says}"
        assert watched(256, 2, run.pid, 20) == f"process limit (2) {says}"
        assert watched(256, 3, run.pid, 1) is None  # three, under 256 MB together
    finally:
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()
        run.stdout.close()


# /tmp and /dev/shm: the run's own.

WRITES_TMP = (
    UNHOOK
    + """
import time

def f():
    written = []
    for folder in ("/tmp", "/dev/shm", "/var/tmp"):
        try:
            with open(f"{folder}/TOKEN", "w") as file:
                file.write("left behind")
            written.append(open(f"{folder}/TOKEN").read() == "left behind")
        except OSError:
            written.append(False)
    time.sleep(0.5)
    return written
"""
)


def test_tmp_and_shm_are_private_and_left_empty(isolated):
    """Past the hook, files written to /tmp and /dev/shm: under bwrap and unshare they are in
    the run's own tmpfs (the host never sees them); at the level none they are this
    machine's, and as root whatever the run's uid left there is removed after it."""
    if isolated.isolation == "none" and not as_root():
        pytest.skip("at the level none, as the same user, /tmp is this machine's and is shared")
    token = f"loopbench-test-{uuid.uuid4().hex}"
    paths = [Path(folder, token) for folder in ("/tmp", "/dev/shm", "/var/tmp")]
    seen, done = threading.Event(), threading.Event()

    def watch() -> None:
        while not done.is_set():
            if any(path.exists() for path in paths):
                seen.set()
            time.sleep(0.005)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        suite = "def test_it(candidate):\n    assert candidate()[:2] == [True, True]\n"
        result = run(isolated, WRITES_TMP.replace("TOKEN", token), suite)
    finally:
        done.set()
        watcher.join()
    left = [path for path in paths if path.exists()]
    for path in left:
        path.unlink()
    assert result.status == "passed", result  # it could write to both...
    assert left == []  # ...and nothing is left
    if isolated.isolation != "none":
        assert not seen.is_set()  # ...nor ever was on this machine


def test_a_run_at_the_level_none_leaves_nothing_of_its_uid(monkeypatch):
    """The sweep at the level none removes what the run's uid made in folders every user may
    write to, at any depth, and nothing else."""
    if not as_root():
        pytest.skip("the sweep runs as root only, where each run has a uid of its own")
    sandbox = Sandbox(Limits(timeout_s=5), isolation="none")
    token = f"loopbench-test-{uuid.uuid4().hex}"
    mine = Path("/tmp", f"{token}-mine")
    mine.write_text("not the run's")
    code = UNHOOK + (
        "import os\n"
        f"os.makedirs('/tmp/{token}/a/b')\n"
        f"open('/tmp/{token}/a/b/c', 'w').close()\n"
        f"open('/dev/shm/{token}', 'w').close()\n"
        "def f():\n    return 'ok'\n"
    )
    try:
        assert run(sandbox, code).status == "passed"
        assert not Path("/tmp", token).exists()
        assert not Path("/dev/shm", token).exists()
        assert mine.read_text() == "not the run's"
    finally:
        mine.unlink()
