"""The sandbox: model-written code run against a code suite, isolated, limited and timed.

Each run gets a fresh temporary directory holding ``suite_runner.py``, ``work/`` (the
candidate's working directory at the weaker levels) and, out of the candidate's reach,
``results.jsonl`` (the runner's descriptor for events), ``stdout`` and ``stderr`` (each at
most disk_mb / FILES, and read back with a cap). The job (code, suite, limits) goes in on a
pipe, so the held-out tests are never a file the candidate could read. The runner is run by
the base interpreter with ``-I -S -B``: never the venv, whose site-packages hold loopbench.

Isolation, chosen once per process by running a trivial command at each level
(``LOOPBENCH_SANDBOX=bwrap|unshare|none`` forces one):

- ``bwrap``: bubblewrap. Fresh namespaces (no network, own pids); a filesystem of /usr,
  /bin, /lib and the interpreter read-only, the runner read-only at /loopbench, a fresh
  /proc and /dev, and the working directory /sandbox, a tmpfs of ``disk_mb`` (bubblewrap
  0.8 on; older ones bind ``work/``); the root read-only; nothing else of this machine (home,
  keys, the repository).
- ``unshare``: ``unshare --net``: no network, but this machine's files are visible.
- ``none``: the measures below only.

At every level: resource limits (CPU, memory, processes, file size, descriptors); as root,
the runner drops to a uid of its own (SANDBOX_UIDS: one per run in flight, held by a lock
file, so neither the process limit, counted per uid, nor the kill below is shared with
another run); an audit hook refusing sockets, new processes, imports that reach past it,
paths outside the work directory or that it cannot vouch for, and more than FILES new files
(defence in depth: code in its process can get round it); an environment of PATH, HOME,
TMPDIR and LANG only (never the parent's keys); output capped, what bypasses ``sys.stdout``
counted after the run; and a wall-clock timeout (under bwrap, from when it has made its
namespaces).

When a run ends, however it ends (cancelled too), everything it started is killed, and it
returns only once that is gone: under bwrap, the init of its pid namespace (the kernel kills
the rest, and reports the init's exit only after); elsewhere, its process group and, as
root, its uid, until no process of either is left. (At the weaker levels as the same user, a
process that leaves the group can outlive the run.) Its process is started with
``subprocess.Popen`` and watched through a pidfd, not as an asyncio subprocess: those can
hang for good when cancelled as they start (CPython #125502).

What it does not do: the tests run in the candidate's process, so code bent on it can forge
its events. The parent counts the suite's tests itself and accepts a pass only when every
one of them passed, in order, and none failed; but code in that process can still fake the
outcome of any single assertion. The sandbox keeps model code from this machine, not from
its grade.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import fcntl
import functools
import grp
import json
import math
import os
import pwd
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal, cast, get_args

Status = Literal[
    "passed",  # every test passed, and there was at least one
    "failed",  # one or more tests failed
    "timeout",  # the wall clock ran out
    "crashed",  # the candidate raised at import or lacks the entry point; or the runner died
    "syntax_error",  # the candidate does not compile
    "killed",  # a signal or limit ended the run without a result: memory, CPU, output
]
Isolation = Literal["bwrap", "unshare", "none"]
LEVELS: tuple[Isolation, ...] = get_args(Isolation)

# As root, each run in flight becomes one of these: below nobody (65534), in a range Debian
# never allocates; systemd's dynamic users (61184-65519) may overlap, so any uid that names a
# user or group here is passed over.
SANDBOX_UIDS = range(65533, 65000, -1)
MB = 1024 * 1024
FILES = 16  # new files and folders a run may make; each may hold disk_mb / FILES
RESULTS_BYTES = 4 * 1024 * 1024  # the most of the events file read back
FIELD_CHARS = 1000  # the most of any one event field read back
STDERR_TAIL = 4000  # the most of the runner's stderr read back for a crash's detail
OUTPUT_SLACK = 4096  # what the interpreter itself may write past the output cap (a last error)
REAP_S = 10.0  # how long a run's processes may take to die once killed
WORKDIR = "/sandbox"  # the work directory's path inside bwrap
RUNNER = Path(__file__).with_name("suite_runner.py")
BWRAP_RUNNER = "/loopbench/suite_runner.py"  # the runner's path inside bwrap


class SandboxError(Exception):
    """The sandbox cannot run here as asked (a forced isolation level that does not work, no
    uid free), or a run's processes would not die."""


@dataclass(frozen=True)
class Limits:
    timeout_s: float = 10.0
    """Wall clock for the whole run, interpreter start included."""
    cpu_s: float | None = None
    """CPU time (RLIMIT_CPU); None means a second past timeout_s, so a busy loop times out."""
    memory_mb: int = 512
    """Address space (RLIMIT_AS)."""
    processes: int = 64
    """Processes and threads of the run's uid (RLIMIT_NPROC)."""
    output_bytes: int = 64_000
    """What the candidate may print, stdout and stderr together."""
    disk_mb: int = 64
    """What the run may write: the size of its tmpfs under bwrap; at every level at most
    FILES new files and folders, each of at most disk_mb / FILES (RLIMIT_FSIZE)."""

    def cpu_seconds(self) -> int:
        return max(1, math.ceil(self.timeout_s + 1 if self.cpu_s is None else self.cpu_s))

    def file_bytes(self) -> int:
        return max(1, self.disk_mb * MB // FILES)


@dataclass(frozen=True)
class Suite:
    name: str
    """What the suite is for: "feedback", "heldout" or "self_tests"."""
    source: str
    entry_point: str
    preamble: str = ""
    """Run before the candidate's code, in its namespace (the prompt's imports)."""


@dataclass(frozen=True)
class Failure:
    test: str
    """The test function's full name, e.g. ``test_get_does_not_restart_clock``."""
    input: str
    expected: str
    actual: str

    def to_json(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True)
class SuiteResult:
    status: Status
    passed: int
    """Tests that passed before the run ended."""
    failed: int
    """Tests that failed before the run ended (a test cut short is not counted)."""
    first_failure: Failure | None
    """The first test that failed, or else the one running when the run was cut short."""
    seconds: float
    detail: str = field(default="")
    """One line: the syntax error, the crash, the limit or signal; "" when passed/failed."""

    def to_json(self) -> dict[str, Any]:
        failure = self.first_failure
        return {
            "status": self.status,
            "passed": self.passed,
            "failed": self.failed,
            "first_failure": None if failure is None else failure.to_json(),
            "seconds": self.seconds,
            "detail": self.detail,
        }


def interpreter() -> str:
    """The base interpreter (a venv's python resolves to it), never the venv."""
    return os.path.realpath(getattr(sys, "_base_executable", sys.executable))


def _root() -> bool:
    return os.geteuid() == 0


def _env(home: str) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": home, "TMPDIR": home, "LANG": "C.UTF-8"}


@functools.cache
def _sized_tmpfs() -> bool:
    """Whether this bubblewrap can bound a tmpfs (``--size``, 0.8 on)."""
    try:
        done = subprocess.run(["bwrap", "--help"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "--size" in done.stdout


def _bwrap(runner: Path, work: Path, disk_bytes: int, info_fd: int | None) -> list[str]:
    if _root():  # no user namespace, so the runner can become a real unprivileged uid
        spaces = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
        spaces += ["--unshare-cgroup-try", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        spaces = ["--unshare-all"]
    argv = ["bwrap", *spaces, "--die-with-parent", "--new-session", "--clearenv"]
    for name, value in _env(WORKDIR).items():
        argv += ["--setenv", name, value]
    argv += ["--ro-bind", "/usr", "/usr", "--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    for top in ("/bin", "/lib", "/lib64"):
        if os.path.islink(top):  # merged /usr
            argv += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            argv += ["--ro-bind", top, top]
    prefix = os.path.realpath(sys.base_prefix)
    if not prefix.startswith("/usr/"):
        argv += ["--ro-bind", prefix, prefix]
    if _sized_tmpfs():
        argv += ["--perms", "1777", "--size", str(disk_bytes), "--tmpfs", WORKDIR]
    else:  # an older bubblewrap: this machine's disk, bounded by the audit hook only
        argv += ["--bind", str(work), WORKDIR]
    argv += ["--ro-bind", str(runner), BWRAP_RUNNER, "--chdir", WORKDIR]
    argv += ["--proc", "/proc", "--dev", "/dev", "--remount-ro", "/"]
    if info_fd is not None:  # where bubblewrap says its pid namespace's init's pid
        argv += ["--info-fd", str(info_fd)]
    return [*argv, "--"]


def command(
    isolation: Isolation, runner: Path, work: Path, disk_bytes: int, info_fd: int | None = None
) -> list[str]:
    """The command that runs ``runner`` in ``work`` at this isolation level."""
    python = [interpreter(), "-I", "-S", "-B"]
    if isolation == "bwrap":
        return [*_bwrap(runner, work, disk_bytes, info_fd), *python, BWRAP_RUNNER]
    if isolation == "unshare":
        user = [] if _root() else ["--user", "--map-root-user"]
        return ["unshare", *user, "--net", "--", *python, str(runner)]
    return [*python, str(runner)]


@functools.cache
def probe(isolation: Isolation) -> str:
    """ "" when this level works here, else why not: runs a trivial command through it."""
    with tempfile.TemporaryDirectory(prefix="loopbench-probe-") as tmp:
        runner = Path(tmp, "suite_runner.py")
        runner.touch()
        argv = [*command(isolation, runner, Path(tmp), MB)[:-1], "-c", "import os"]
        try:
            done = subprocess.run(
                argv, cwd=tmp, env=_env(tmp), capture_output=True, text=True, timeout=30
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return str(exc)
    return "" if done.returncode == 0 else done.stderr.strip() or f"exit code {done.returncode}"


def choose(isolation: Isolation | None = None) -> Isolation:
    """The level asked for (argument, else LOOPBENCH_SANDBOX), checked; else the best that
    works here."""
    asked = isolation or os.environ.get("LOOPBENCH_SANDBOX") or None
    if asked is None:
        best = next((level for level in LEVELS if not probe(level)), None)
        if best is None:
            raise SandboxError(f"no sandbox works here, not even 'none': {probe('none')}")
        return best
    if asked not in LEVELS:
        raise SandboxError(f"unknown sandbox {asked!r}; choose one of {', '.join(LEVELS)}")
    why = probe(asked)
    if why:
        raise SandboxError(
            f"sandbox {asked!r} does not work here ({why}); install bubblewrap "
            "(apt-get install bubblewrap) or unset LOOPBENCH_SANDBOX to use the best available"
        )
    return asked


def warning(isolation: Isolation) -> str:
    """What a level leaves open, for the CLI to print; "" for bwrap 0.8 on."""
    hook = (
        "its audit hook (files outside its directory, processes, sockets, a count of new "
        "files) is defence in depth and can be bypassed by the code it watches"
    )
    if isolation == "bwrap":
        if _sized_tmpfs():
            return ""
        return (
            "sandbox: bwrap without --size (bubblewrap older than 0.8): the work directory is "
            f"on this machine's disk, and {hook}; upgrade bubblewrap"
        )
    if _root():
        who = "a uid of its own"
    else:
        who = (
            "this same user, so the harness's own files and environment (its API keys) may be "
            "reachable, and a process that leaves its process group can outlive the run"
        )
    if isolation == "unshare":
        where = "unshare (bubblewrap missing or not working): it has no network"
    else:
        where = "none (neither bubblewrap nor unshare works here): it has the network"
    return (
        f"sandbox: {where} and sees this machine's files, as {who}; {hook}; its work "
        "directory is on this machine's disk; install bubblewrap (apt-get install bubblewrap)"
    )


class Sandbox:
    """Runs code against suites, ``workers`` at a time, each run in a fresh directory."""

    def __init__(
        self,
        limits: Limits = Limits(),
        workers: int | None = None,
        isolation: Isolation | None = None,
    ) -> None:
        self.limits = limits
        self.workers = workers or os.cpu_count() or 1
        self.isolation: Isolation = choose(isolation)
        self.warning = warning(self.isolation)
        self._slots: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None

    def run_sync(self, code: str, suite: Suite) -> SuiteResult:
        return asyncio.run(self.run(code, suite))

    async def run(self, code: str, suite: Suite) -> SuiteResult:
        loop = asyncio.get_running_loop()
        if self._slots is None or self._slots[0] is not loop:  # a semaphore has one loop
            self._slots = (loop, asyncio.Semaphore(self.workers))
        async with self._slots[1]:
            began = time.perf_counter()
            tmp = tempfile.TemporaryDirectory(prefix="loopbench-", ignore_cleanup_errors=True)
            try:
                with _own_uid() as claim:
                    return await self._run(Path(tmp.name), code, suite, began, claim)
            finally:
                await _to_the_end(asyncio.to_thread(tmp.cleanup))

    async def _run(
        self, tmp: Path, code: str, suite: Suite, began: float, claim: _Claim
    ) -> SuiteResult:
        uid = claim.uid
        work, runner = tmp / "work", tmp / "suite_runner.py"
        work.mkdir()
        runner.write_text(_runner_source(), "utf-8")
        if uid is not None:  # the work directory is the unprivileged uid's; the rest is not
            os.chown(work, uid, uid)
            tmp.chmod(0o711)
        bwrap = self.isolation == "bwrap"
        with (
            _private(tmp / "results.jsonl") as results,
            _private(tmp / "stdout") as out,
            _private(tmp / "stderr") as err,
        ):
            job = self._job(code, suite, results.fileno(), uid)
            stdin_read, stdin_write = os.pipe()
            # where bubblewrap writes the pid of its namespace's init
            info_read, info_write = os.pipe() if bwrap else (None, None)
            argv = command(self.isolation, runner, work, self.limits.disk_mb * MB, info_write)
            keep = [results.fileno()] + ([] if info_write is None else [info_write])
            try:  # not asyncio's subprocesses: cancelled while starting one, they can hang
                proc = subprocess.Popen(
                    argv,
                    stdin=stdin_read,
                    stdout=out,
                    stderr=err,
                    cwd=work,
                    env=_env(WORKDIR if bwrap else str(work)),
                    start_new_session=True,
                    pass_fds=keep,
                )
            except BaseException:
                _close(stdin_write, info_read)
                raise
            finally:
                _close(stdin_read, info_write)
            timed_out = await self._wait(proc, stdin_write, job, info_read, claim)
        ended = (self.limits, timed_out, proc.returncode, bwrap, began, suite.source)
        return await asyncio.to_thread(_result, tmp, *ended)

    async def _wait(
        self, proc: subprocess.Popen[bytes], stdin: int, job: bytes, info: int | None, claim: _Claim
    ) -> bool:
        """Feeds the job and waits; True when the wall clock ran out. Whatever the run
        started is killed in any case, and gone (and reaped) before this returns."""
        exited = os.pidfd_open(proc.pid)  # the process started, not yet reaped: its pid stays
        feeding = _in_thread(_write_all, stdin, job)
        init = None  # a pidfd for the init of bubblewrap's pid namespace
        try:
            if info is not None:
                init = await _namespace_init(info, proc.pid)
            async with asyncio.timeout(self.limits.timeout_s):
                await asyncio.shield(feeding)
                await _readable(exited)
            return False
        except TimeoutError:
            return True
        finally:

            async def end() -> None:
                claim.zombies = await _end(proc, exited, init, claim.uid)
                await feeding  # its readers are gone: it has ended, or ends at once

            try:
                await _to_the_end(end())
            finally:
                os.close(exited)

    def _job(self, code: str, suite: Suite, results_fd: int, uid: int | None) -> bytes:
        limits = {
            "cpu_s": self.limits.cpu_seconds(),
            "memory_mb": self.limits.memory_mb,
            "processes": self.limits.processes,
            "output_bytes": self.limits.output_bytes,
            "file_bytes": self.limits.file_bytes(),
            "files": FILES,
        }
        job = {
            "code": code,
            "preamble": suite.preamble,
            "suite": suite.source,
            "entry_point": suite.entry_point,
            "limits": limits,
            "uid": uid,
            "gid": uid,
            "results_fd": results_fd,
        }
        return json.dumps(job).encode("utf-8")


def _write_all(fd: int, data: bytes) -> None:
    """Writes ``data`` to a pipe, then closes it. A reader gone is no error: it died at
    once, and its exit status says why."""
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except BrokenPipeError:
        pass
    finally:
        os.close(fd)


@functools.cache
def _runner_source() -> str:
    return RUNNER.read_text("utf-8")


def _close(*fds: int | None) -> None:
    for fd in fds:
        if fd is not None:
            os.close(fd)


def _private(path: Path) -> BinaryIO:
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb")


# A run's uid, and the end of its processes.


@dataclass
class _Claim:
    uid: int | None
    """The run's own uid (as root), else None: the runner stays as this user."""
    zombies: bool = False
    """Whether the run left zombies of its uid: orphans that wait for this machine's init to
    reap them and count against the uid's process limit meanwhile."""


ZOMBIES = b"z"  # in a uid's lock file: a run left zombies of it


@contextlib.contextmanager
def _own_uid() -> Iterator[_Claim]:
    """As root, a uid of SANDBOX_UIDS no other run holds, in this process or another (a lock
    file each), held until the run's processes are gone; one an earlier run left zombies of
    is passed over while they last. Else a claim of no uid."""
    if not _root():
        yield _Claim(None)
        return
    for uid in SANDBOX_UIDS:
        if not _unnamed(uid):
            continue
        lock = Path(tempfile.gettempdir(), f"loopbench-uid-{uid}.lock")
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        if not _locked(fd) or (os.pread(fd, 1, 0) == ZOMBIES and _has_processes(uid)):
            os.close(fd)
            continue
        os.ftruncate(fd, 0)
        claim = _Claim(uid)
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


def _in_thread(func: Callable[..., None], *args: Any) -> asyncio.Task[None]:
    """``func(*args)`` in a thread, as a task: it runs to the end even if what awaits it is
    cancelled (``func`` closes what it was given), and can be awaited later."""
    return asyncio.ensure_future(asyncio.to_thread(func, *args))


async def _to_the_end(work: Coroutine[Any, Any, None]) -> None:
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


async def _namespace_init(info: int, monitor: int) -> int | None:
    """A pidfd for the init of bubblewrap's pid namespace, whose pid bubblewrap writes to its
    --info-fd as it starts; None when it never started. (The wall clock starts after.)"""
    into: list[bytes] = []
    reading = _in_thread(_read_all, info, into)
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


async def _end(
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
            await _gone(init)
        finally:
            os.close(init)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    await _gone(exited)
    zombies = False if init is not None else await asyncio.to_thread(_reap, proc.pid, uid)
    proc.wait()  # at once: it has exited
    return zombies


async def _readable(fd: int) -> None:
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
            await _readable(pidfd)
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


# The result, from what the run left.


def _events(path: Path) -> list[dict[str, str]]:
    """The runner's events, read with a cap, each field cut to FIELD_CHARS; a torn or
    foreign line is skipped."""
    with open(path, "rb") as f:
        lines = f.read(RESULTS_BYTES).decode("utf-8", "replace").splitlines()
    events = []
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and isinstance(event.get("event"), str):
            events.append({k[:FIELD_CHARS]: str(v)[:FIELD_CHARS] for k, v in event.items()})
    return events


def _tail(path: Path) -> str:
    with open(path, "rb") as f:
        f.seek(max(0, path.stat().st_size - STDERR_TAIL))
        lines = f.read(STDERR_TAIL).decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else ""


def _tests_of(source: str) -> list[str] | None:
    """The tests the runner finds in a suite, in order: its top-level ``def test_*``, or else
    ``check``; None when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    names = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
    return [n for n in names if n.startswith("test_")] or [n for n in names if n == "check"]


SIGNALS: dict[int, str] = {
    signal.SIGXCPU: "the CPU time limit",
    signal.SIGXFSZ: "the file size limit",
    signal.SIGKILL: "the CPU time or memory limit",
    signal.SIGSEGV: "a crash, e.g. the stack overflowing",
}


def _ending(
    tmp: Path, limits: Limits, timed_out: bool, returncode: int | None, bwrap: bool
) -> tuple[Status, str]:
    """(status, detail) when no end line was written."""
    if timed_out:
        return "timeout", f"timed out after {limits.timeout_s:g} s"
    code = returncode or 0
    number = -code if code < 0 else code - 128 if bwrap and code > 128 else 0
    if number:
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        why = SIGNALS.get(number)
        return "killed", f"killed by {name}" + (f" ({why})" if why else "")
    last = _tail(tmp / "stderr")
    detail = f"the runner exited with code {code} without a result" + (f": {last}" if last else "")
    return "crashed", detail


def _result(
    tmp: Path,
    limits: Limits,
    timed_out: bool,
    returncode: int | None,
    bwrap: bool,
    began: float,
    suite: str,
) -> SuiteResult:
    events = _events(tmp / "results.jsonl")
    end = next((e for e in events if e["event"] == "end"), None)
    if end is not None and end.get("status") in get_args(Status):
        status, detail = cast(Status, end["status"]), end.get("detail", "")
    else:
        status, detail = _ending(tmp, limits, timed_out, returncode, bwrap)
    printed = sum((tmp / name).stat().st_size for name in ("stdout", "stderr"))
    if status not in ("timeout", "syntax_error") and printed > limits.output_bytes + OUTPUT_SLACK:
        status = "killed"
        detail = f"output limit ({limits.output_bytes} bytes) exceeded, written past sys.stdout"
    cut_short = "timed out" if status == "timeout" else detail
    passes = [e.get("test", "") for e in events if e["event"] == "pass"]
    failures = [
        Failure(e.get("test", ""), e.get("input", ""), e.get("expected", ""), e.get("actual", ""))
        for e in events
        if e["event"] == "fail"
    ]
    finished = {e.get("test") for e in events if e["event"] in ("pass", "fail")}
    started = [e.get("test", "") for e in events if e["event"] == "start"]
    running = [test for test in started if test not in finished]
    if running:
        failures.append(Failure(running[-1], "", "", cut_short))
        if status == "timeout":
            detail += f" in {running[-1]}"
    expected = _tests_of(suite)
    if status == "passed" and (passes != expected or failures):
        status = "crashed"
        detail = (
            f"the results do not add up: the run said passed, with {len(passes)} of "
            f"{len(expected or [])} tests passed and {len(failures)} failed"
        )
    seconds = time.perf_counter() - began
    first = failures[0] if failures else None
    return SuiteResult(status, len(passes), len(failures) - bool(running), first, seconds, detail)
