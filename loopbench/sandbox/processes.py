"""A sandbox run's processes: the uid it runs as, and their end.

As root, each run in flight becomes a uid of its own (SANDBOX_UIDS, held by a lock file, so
neither the process limit, counted per uid, nor the kill is shared with another run). When a
run ends, however it ends (cancelled too), everything it started is killed, and it returns
only once that is gone: under bwrap, the init of its pid namespace (the kernel kills the
rest, and reports the init's exit only after); elsewhere, its process group and, as root,
its uid, until no process of either is left. (At the weaker levels as the same user, a
process that leaves the group can outlive the run.) Its process is watched through a pidfd,
not as an asyncio subprocess: those can hang for good when cancelled as they start (CPython
#125502).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import functools
import grp
import json
import os
import pwd
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loopbench.sandbox.isolation import SandboxError, is_root

# As root, each run in flight becomes one of these: below nobody (65534), in a range Debian
# never allocates; systemd's dynamic users (61184-65519) may overlap, so any uid that names a
# user or group here is passed over.
SANDBOX_UIDS = range(65533, 65000, -1)
REAP_S = 10.0  # how long a run's processes may take to die once killed


# A run's uid, and the end of its processes.


@dataclass
class Claim:
    uid: int | None
    """The run's own uid (as root), else None: the runner stays as this user."""
    zombies: bool = False
    """Whether the run left zombies of its uid: orphans that wait for this machine's init to
    reap them and count against the uid's process limit meanwhile."""


ZOMBIES = b"z"  # in a uid's lock file: a run left zombies of it


@contextlib.contextmanager
def own_uid() -> Iterator[Claim]:
    """As root, a uid of SANDBOX_UIDS no other run holds, in this process or another (a lock
    file each), held until the run's processes are gone; one an earlier run left zombies of
    is passed over while they last. Else a claim of no uid."""
    if not is_root():
        yield Claim(None)
        return
    for uid in SANDBOX_UIDS:
        if not _unnamed(uid):
            continue
        lock = Path(tempfile.gettempdir(), f"loopbench-uid-{uid}.lock")
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        # guard: uid-per-run-flight
        if not _locked(fd) or (os.pread(fd, 1, 0) == ZOMBIES and _has_processes(uid)):
            os.close(fd)
            continue
        os.ftruncate(fd, 0)
        claim = Claim(uid)
        try:
            yield claim
        finally:
            if claim.zombies:
                os.pwrite(fd, ZOMBIES, 0)
            os.close(fd)
        return
    raise SandboxError(f"all {len(SANDBOX_UIDS)} sandbox uids are in use; run fewer workers")


def _locked(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


@functools.cache
def _unnamed(uid: int) -> bool:
    """No user or group here has this number."""
    with contextlib.suppress(KeyError):
        pwd.getpwuid(uid)
        return False
    with contextlib.suppress(KeyError):
        grp.getgrgid(uid)
        return False
    return True


def in_thread(func: Callable[..., None], *args: Any) -> asyncio.Task[None]:
    """``func(*args)`` in a thread, as a task: it runs to the end even if what awaits it is
    cancelled (``func`` closes what it was given), and can be awaited later."""
    return asyncio.ensure_future(asyncio.to_thread(func, *args))


async def to_the_end(work: Coroutine[Any, Any, None]) -> None:
    """Awaits ``work`` to its end even when cancelled meanwhile, then lets the cancellation
    through: killing a run's processes is not to be cut short."""
    task = asyncio.ensure_future(work)
    cancelled = None
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError as exc:
            cancelled = exc
    task.result()
    if cancelled is not None:
        raise cancelled


def _read_all(fd: int, into: list[bytes]) -> None:
    """Reads a pipe until its writers close it, then closes it."""
    try:
        while chunk := os.read(fd, 65536):
            into.append(chunk)
    finally:
        os.close(fd)


async def namespace_init(info: int, monitor: int) -> int | None:
    """A pidfd for the init of bubblewrap's pid namespace, whose pid bubblewrap writes to its
    --info-fd as it starts; None when it never started. (The wall clock starts after.)"""
    into: list[bytes] = []
    reading = in_thread(_read_all, info, into)
    try:
        async with asyncio.timeout(REAP_S):
            await asyncio.shield(reading)
    except TimeoutError:
        raise SandboxError(f"bubblewrap did not start within {REAP_S:g} s") from None
    return _pidfd(b"".join(into), monitor)


def _pidfd(info: bytes, monitor: int) -> int | None:
    """A pidfd for the init of bubblewrap's pid namespace, from what it wrote to --info-fd;
    None when it never started or is gone already."""
    try:
        pid = int(json.loads(info)["child-pid"])
        pidfd = os.pidfd_open(pid)
    except (ValueError, KeyError, TypeError, ProcessLookupError):
        return None
    if _parent(pid) != monitor:  # the pidfd pins a process that reused a dead init's pid
        os.close(pidfd)
        return None
    return pidfd


def _parent(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
        return int(stat.rsplit(b")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


async def end_run(
    proc: subprocess.Popen[bytes], exited: int, init: int | None, uid: int | None
) -> bool:
    """Kills everything the run started, and returns once it is gone. Under bwrap: the init
    of its pid namespace, whose exit the kernel reports only after it has killed (and reaped)
    the rest. Elsewhere: its process group and, as root, its uid, until neither has a live
    process. The process started is reaped last, so its pid (its group's) is never another's
    while this runs. True when zombies of its uid are left."""
    if init is not None:
        try:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(init, signal.SIGKILL)
            # guard: bwrap-waits-for-namespace-init
            await _gone(init)
        finally:
            os.close(init)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    await _gone(exited)
    # guard: weak-levels-reap-group-uid
    zombies = False if init is not None else await asyncio.to_thread(_reap, proc.pid, uid)
    proc.wait()  # at once: it has exited
    return zombies


async def readable(fd: int) -> None:
    """Waits until ``fd`` is readable: for a pidfd, until its process has exited."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(fd, readable)
    try:
        await ready
    finally:
        loop.remove_reader(fd)


async def _gone(pidfd: int) -> None:
    """Waits for a killed process to exit; a SandboxError if it has not within REAP_S."""
    try:
        async with asyncio.timeout(REAP_S):
            await readable(pidfd)
    except TimeoutError:
        raise SandboxError(f"a sandbox run outlived SIGKILL by {REAP_S:g} s") from None


def _reap(group: int, uid: int | None) -> bool:
    """Kills the live processes of a run (its process group; its uid, as root) until none is
    left: SIGKILL takes a moment, and a process may fork once more as it dies. True when
    zombies of its uid are left, besides the group's leader (the process started, which is
    ours to reap)."""
    deadline = time.monotonic() + REAP_S
    while True:
        found = {pid: s for pid, s in _processes(uid is not None) if _belongs(s, group, uid)}
        live = [pid for pid, (mode, _, _) in found.items() if mode not in (b"Z", b"X")]
        if not live:
            dead = [owner for pid, (_, _, owner) in found.items() if pid != group]  # not ours yet
            return uid is not None and uid in dead
        if time.monotonic() > deadline:
            raise SandboxError(f"processes {live} of a sandbox run outlived SIGKILL")
        for pid in live:
            _kill(pid, group, uid)
        time.sleep(0.005)


State = tuple[bytes, int, int]  # a process's state letter, process group and real uid


def _processes(owners: bool) -> Iterator[tuple[int, State]]:
    """Every process here, with its State (its uid read only when ``owners``, else -1)."""
    for name in os.listdir("/proc"):
        if name.isdigit() and (state := _state(int(name), owners)):
            yield int(name), state


def _state(pid: int, owner: bool) -> State | None:
    """The process's State (its uid read only when ``owner``, else -1); None when gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
        uid = -1
        if owner:
            status = Path(f"/proc/{pid}/status").read_bytes()
            uid = int(status.split(b"\nUid:", 1)[1].split()[0])
        return fields[0], int(fields[2]), uid
    except (OSError, IndexError, ValueError):
        return None


def _belongs(state: State, group: int, uid: int | None) -> bool:
    return state[1] == group or state[2] == uid


def _has_processes(uid: int) -> bool:
    return any(owner == uid for _, (_, _, owner) in _processes(True))


def _kill(pid: int, group: int, uid: int | None) -> None:
    """SIGKILL through a pidfd, checked once the pidfd pins the process, so that a process
    that took a dead one's pid meanwhile is spared."""
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        return
    try:
        state = _state(pid, uid is not None)
        if state is not None and _belongs(state, group, uid):
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    except ProcessLookupError:
        pass
    finally:
        os.close(pidfd)


async def end_trusted(proc: subprocess.Popen[bytes], exited: int) -> None:
    """Ends the test runner of a trusted suite: one process that starts none."""
    with contextlib.suppress(ProcessLookupError):
        signal.pidfd_send_signal(exited, signal.SIGKILL)
    await _gone(exited)
    proc.wait()  # at once: it has exited
