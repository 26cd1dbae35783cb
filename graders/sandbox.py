"""The sandbox: model-written code run against a code suite, isolated, limited and timed.

Each run gets a fresh temporary directory holding ``suite_runner.py``, ``work/`` (the
candidate's working directory at the weaker levels) and, out of the candidate's reach,
``results.jsonl`` (the runner's descriptor for events), ``stdout`` and ``stderr`` (each at
most disk_mb / FILES, and read back with a cap). The job (code, suite, limits) goes in on a
pipe, so the held-out tests are never a file the candidate could read. The runner is run by
the base interpreter with ``-I -S -B``: never the venv, whose site-packages hold loopbench.

How isolated a run is (bubblewrap, ``unshare --net`` or neither) is ``graders.isolation``;
its uid and the end of its processes, ``graders.processes``; its result, read back from what
it left, ``graders.suite_result``. At every level: resource
limits (CPU, memory, processes, file size, descriptors); as root, a uid of the run's own;
an audit hook refusing sockets, new processes, imports that reach past it, paths outside
the work directory or that it cannot vouch for, and more than FILES new files (defence in
depth: code in its process can get round it); an environment of PATH, HOME, TMPDIR and
LANG only (never the parent's keys); output capped, what bypasses ``sys.stdout`` counted
after the run; a wall-clock timeout (under bwrap, from when it has made its namespaces);
and, however a run ends, every process it started killed before it returns.

What it does not do: the tests run in the candidate's process, so code bent on it can forge
its events. The parent counts the suite's tests itself and accepts a pass only when every
one of them passed, in order, and none failed; but code in that process can still fake the
outcome of any single assertion. The sandbox keeps model code from this machine, not from
its grade.
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from graders.isolation import (
    MB,
    WORKDIR,
    Isolation,
    child_env,
    choose,
    command,
    warning,
)
from graders.processes import (
    Claim,
    end_run,
    in_thread,
    namespace_init,
    own_uid,
    readable,
    to_the_end,
)
from graders.suite_result import (
    SuiteResult,
    read_result,
)

FILES = 16  # new files and folders a run may make; each may hold disk_mb / FILES
RUNNER = Path(__file__).with_name("suite_runner.py")


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
                with own_uid() as claim:
                    return await self._run(Path(tmp.name), code, suite, began, claim)
            finally:
                await to_the_end(asyncio.to_thread(tmp.cleanup))

    async def _run(
        self, tmp: Path, code: str, suite: Suite, began: float, claim: Claim
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
                    env=child_env(WORKDIR if bwrap else str(work)),
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
        return await asyncio.to_thread(read_result, tmp, *ended)

    async def _wait(
        self, proc: subprocess.Popen[bytes], stdin: int, job: bytes, info: int | None, claim: Claim
    ) -> bool:
        """Feeds the job and waits; True when the wall clock ran out. Whatever the run
        started is killed in any case, and gone (and reaped) before this returns."""
        exited = os.pidfd_open(proc.pid)  # the process started, not yet reaped: its pid stays
        feeding = in_thread(_write_all, stdin, job)
        init = None  # a pidfd for the init of bubblewrap's pid namespace
        try:
            if info is not None:
                init = await namespace_init(info, proc.pid)
            async with asyncio.timeout(self.limits.timeout_s):
                await asyncio.shield(feeding)
                await readable(exited)
            return False
        except TimeoutError:
            return True
        finally:

            async def end() -> None:
                claim.zombies = await end_run(proc, exited, init, claim.uid)
                await feeding  # its readers are gone: it has ended, or ends at once

            try:
                await to_the_end(end())
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
