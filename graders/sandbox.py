"""The sandbox: model-written code run against a code suite, isolated, limited and timed.

Each run gets a fresh temporary directory: ``work/``, the candidate's working directory
(``suite_runner.py`` is copied there), and beside it, out of the candidate's reach,
``results.jsonl`` (the runner's descriptor for events), ``stdout`` and ``stderr``. The job
(code, suite, limits) goes in on stdin, so the held-out tests are never a file the
candidate could read. The runner is run by the base interpreter with ``-I -S -B``: never
the venv, whose site-packages hold loopbench.

Isolation, chosen once per process by running a trivial command at each level
(``LOOPBENCH_SANDBOX=bwrap|unshare|none`` forces one):

- ``bwrap``: bubblewrap. Fresh namespaces (no network, own pids); a filesystem of /usr,
  /bin, /lib and the interpreter read-only, the work directory at /sandbox, a fresh /proc,
  /dev and /tmp; nothing else of this machine (home, keys, the repository).
- ``unshare``: ``unshare --net``: no network, but this machine's files are visible.
- ``none``: the measures below only.

At every level: resource limits (CPU, memory, processes, file size, descriptors); as root,
the runner drops to uid 65534 (root is exempt from the process limit); an audit hook
refusing sockets, new processes and paths outside the work directory (defence in depth);
an environment of PATH, HOME, TMPDIR and LANG only (never the parent's keys); output
capped; and a wall-clock timeout that kills the whole process group.

What it does not do: the tests run in the candidate's process, so code bent on it could
forge its own events; the sandbox keeps model code from this machine, not from its grade.
All runs share uid 65534, so processes a killed run leaves dying for a moment still count
against the next run's process limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
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

SANDBOX_UID = 65534  # nobody: whom a runner started as root becomes
FILE_BYTES = 16 * 1024 * 1024  # RLIMIT_FSIZE: any one file the run writes
RESULTS_BYTES = 4 * 1024 * 1024  # the most of the events file read back
STDERR_TAIL = 4000  # the most of the runner's stderr read back for a crash's detail
WORKDIR = "/sandbox"  # the work directory's path inside bwrap
RUNNER = Path(__file__).with_name("suite_runner.py")


class SandboxError(Exception):
    """The sandbox cannot run here as asked (a forced isolation level that does not work)."""


@dataclass(frozen=True)
class Limits:
    timeout_s: float = 10.0
    """Wall clock for the whole run, interpreter start included."""
    cpu_s: float | None = None
    """CPU time (RLIMIT_CPU); None means timeout_s."""
    memory_mb: int = 512
    """Address space (RLIMIT_AS)."""
    processes: int = 64
    """Processes and threads of the sandbox's uid (RLIMIT_NPROC)."""
    output_bytes: int = 64_000
    """What the candidate may print, stdout and stderr together."""

    def cpu_seconds(self) -> int:
        return max(1, math.ceil(self.timeout_s if self.cpu_s is None else self.cpu_s))


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


def _bwrap(work: Path) -> list[str]:
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
    argv += ["--bind", str(work), WORKDIR, "--chdir", WORKDIR]
    return [*argv, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--"]


def command(isolation: Isolation, work: Path) -> list[str]:
    """The command that runs the runner in ``work`` at this isolation level."""
    python = [interpreter(), "-I", "-S", "-B"]
    if isolation == "bwrap":
        return [*_bwrap(work), *python, "suite_runner.py"]
    if isolation == "unshare":
        user = [] if _root() else ["--user", "--map-root-user"]
        return ["unshare", *user, "--net", "--", *python, "suite_runner.py"]
    return [*python, "suite_runner.py"]


@functools.cache
def probe(isolation: Isolation) -> str:
    """ "" when this level works here, else why not: runs a trivial command through it."""
    with tempfile.TemporaryDirectory(prefix="loopbench-probe-") as tmp:
        argv = [*command(isolation, Path(tmp))[:-1], "-c", "import os"]
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
    """What a level short of bwrap leaves open, for the CLI to print; "" for bwrap."""
    who = f"uid {SANDBOX_UID}" if _root() else "this user"
    if isolation == "unshare":
        return (
            "sandbox: unshare (bubblewrap missing or not working): model code has no network, "
            f"but can read every file {who} can read beyond what its audit hook refuses; "
            "install bubblewrap (apt-get install bubblewrap) for a private filesystem"
        )
    if isolation == "none":
        return (
            "sandbox: none (neither bubblewrap nor unshare works here): model code runs as "
            f"{who} under resource limits and an audit hook only, which code can get round; "
            "the network and every file it can read are open to it; install bubblewrap"
        )
    return ""


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
                return await self._run(Path(tmp.name), code, suite, began)
            finally:
                await asyncio.to_thread(tmp.cleanup)

    async def _run(self, tmp: Path, code: str, suite: Suite, began: float) -> SuiteResult:
        work = tmp / "work"
        work.mkdir()
        (work / "suite_runner.py").write_text(_runner_source(), "utf-8")
        uid = SANDBOX_UID if _root() else None
        if uid is not None:  # the work directory is the unprivileged uid's; the rest is not
            os.chown(work, uid, uid)
            tmp.chmod(0o711)
        with (
            _private(tmp / "results.jsonl") as results,
            _private(tmp / "stdout") as out,
            _private(tmp / "stderr") as err,
        ):
            job = self._job(code, suite, results.fileno(), uid)
            argv = command(self.isolation, work)
            home = WORKDIR if self.isolation == "bwrap" else str(work)
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=subprocess.PIPE,
                stdout=out,
                stderr=err,
                cwd=work,
                env=_env(home),
                start_new_session=True,
                pass_fds=(results.fileno(),),
            )
            timed_out = await self._wait(proc, job)
        bwrap = self.isolation == "bwrap"
        ended = (self.limits, timed_out, proc.returncode, bwrap, began)
        return await asyncio.to_thread(_result, tmp, *ended)

    async def _wait(self, proc: asyncio.subprocess.Process, job: bytes) -> bool:
        """Feeds the job and waits; True when the wall clock ran out. The process group is
        killed in any case, so nothing the run started outlives it."""
        try:
            async with asyncio.timeout(self.limits.timeout_s):
                await _feed(proc, job)
                await proc.wait()
            return False
        except TimeoutError:
            return True
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()

    def _job(self, code: str, suite: Suite, results_fd: int, uid: int | None) -> bytes:
        limits = {
            "cpu_s": self.limits.cpu_seconds(),
            "memory_mb": self.limits.memory_mb,
            "processes": self.limits.processes,
            "output_bytes": self.limits.output_bytes,
            "file_bytes": FILE_BYTES,
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


async def _feed(proc: asyncio.subprocess.Process, job: bytes) -> None:
    assert proc.stdin is not None
    try:
        proc.stdin.write(job)
        await proc.stdin.drain()
        proc.stdin.close()
    except (BrokenPipeError, ConnectionResetError):
        pass  # it died at once: its exit status says why


@functools.cache
def _runner_source() -> str:
    return RUNNER.read_text("utf-8")


def _private(path: Path) -> BinaryIO:
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb")


def _events(path: Path) -> list[dict[str, str]]:
    """The runner's events, read with a cap; a torn or foreign line is skipped."""
    with open(path, "rb") as f:
        lines = f.read(RESULTS_BYTES).decode("utf-8", "replace").splitlines()
    events = []
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and isinstance(event.get("event"), str):
            events.append({k: str(v) for k, v in event.items()})
    return events


def _tail(path: Path) -> str:
    with open(path, "rb") as f:
        f.seek(max(0, path.stat().st_size - STDERR_TAIL))
        lines = f.read().decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else ""


SIGNALS: dict[int, str] = {
    signal.SIGXCPU: "the CPU time limit",
    signal.SIGXFSZ: "the file size limit",
    signal.SIGKILL: "the CPU time or memory limit",
    signal.SIGSEGV: "a crash, e.g. the stack overflowing",
}


def _ending(
    tmp: Path, limits: Limits, timed_out: bool, returncode: int | None, bwrap: bool
) -> tuple[Status, str, str]:
    """(status, detail, what a test cut short gets as actual) when no end line was written."""
    if timed_out:
        return "timeout", f"timed out after {limits.timeout_s:g} s", "timed out"
    code = returncode or 0
    number = -code if code < 0 else code - 128 if bwrap and code > 128 else 0
    if number:
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        why = SIGNALS.get(number)
        detail = f"killed by {name}" + (f" ({why})" if why else "")
        return "killed", detail, detail
    last = _tail(tmp / "stderr")
    detail = f"the runner exited with code {code} without a result" + (f": {last}" if last else "")
    return "crashed", detail, detail


def _result(
    tmp: Path, limits: Limits, timed_out: bool, returncode: int | None, bwrap: bool, began: float
) -> SuiteResult:
    events = _events(tmp / "results.jsonl")
    end = next((e for e in events if e["event"] == "end"), None)
    if end is not None and end.get("status") in get_args(Status):
        status, detail = cast(Status, end["status"]), end.get("detail", "")
        cut_short = detail
    else:
        status, detail, cut_short = _ending(tmp, limits, timed_out, returncode, bwrap)
    passed = sum(e["event"] == "pass" for e in events)
    failures = [
        Failure(e.get("test", ""), e.get("input", ""), e.get("expected", ""), e.get("actual", ""))
        for e in events
        if e["event"] == "fail"
    ]
    finished = {e.get("test") for e in events if e["event"] in ("pass", "fail")}
    running = [e["test"] for e in events if e["event"] == "start" and e["test"] not in finished]
    if running:
        failures.append(Failure(running[-1], "", "", cut_short))
        if status == "timeout":
            detail += f" in {running[-1]}"
    seconds = time.perf_counter() - began
    first = failures[0] if failures else None
    return SuiteResult(status, passed, len(failures) - bool(running), first, seconds, detail)
