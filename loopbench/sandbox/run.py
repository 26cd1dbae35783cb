"""The sandbox: model-written code run against a code suite, isolated, limited and timed, its
tests run outside it.

A run starts two processes, both with the base interpreter (``-I -S -B``: never the venv,
whose site-packages hold loopbench), each from its own fresh copy of the sandbox's programs:

- the candidate's **worker** (``loopbench/sandbox/candidate_worker.py``), at the run's
  isolation level (``loopbench.sandbox.isolation``), in a box of cgroups that bounds the
  memory and processes of all it starts together (``loopbench.sandbox.box``), as a uid of the
  run's own when this process is root (``loopbench.sandbox.processes``); it loads the code and
  answers calls;
- the **test runner** (``loopbench/sandbox/suite_runner.py``), which holds the suite (never a
  file the candidate could read) and the only descriptor the events go to (``results.jsonl``), and
  calls the candidate's functions across a pair of pipes with plain data
  (``loopbench/sandbox/plain_data.py``), comparing what comes back itself. A suite the model wrote
  (``self_tests``) is not trusted: its runner is sandboxed and confined like the worker.

Limits at every level: resource limits per process (CPU, address space, processes, file
size, descriptors); the box's memory and processes, enforced by the kernel where cgroups can
be made here, else watched from outside; an audit hook in the worker (defence in depth: code
in its process can get round it); an environment of PATH, HOME, TMPDIR and LANG only (never
the parent's keys); output capped, in the worker's ``sys.stdout`` and where it is read, from
pipes (``loopbench.sandbox.output``: past the cap the run is ended); a wall clock for the whole run
(under bwrap, from when its namespaces are made); and, however a run ends, every process it
started killed before it returns, and what it left removed (``loopbench.sandbox.leftovers``). Its
result is read back from what the test runner wrote (``loopbench.sandbox.suite_result``).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loopbench.sandbox import box as boxes
from loopbench.sandbox.isolation import (
    MB,
    Isolation,
    asked_by,
    child_env,
    choose,
    command,
    programs_folder,
    warning,
)
from loopbench.sandbox.isolation import working_directory as workdir_of
from loopbench.sandbox.leftovers import remove_tree, sweep
from loopbench.sandbox.limits import Limits
from loopbench.sandbox.output import Output
from loopbench.sandbox.processes import (
    Claim,
    end_run,
    end_trusted,
    in_thread,
    namespace_init,
    own_uid,
    readable,
    to_the_end,
)
from loopbench.sandbox.suite_code import compiled
from loopbench.sandbox.suite_result import OUTPUT_SLACK, Ending, SuiteResult, read_result

WORKER, RUNNER = "candidate_worker", "suite_runner"
TRUSTED_SUITES = ("feedback", "heldout")  # written by the task set; "self_tests" by the model


@dataclass(frozen=True)
class Suite:
    name: str
    """What the suite is for: "feedback", "heldout" or "self_tests" (written by the model,
    so run sandboxed like the code)."""
    source: str
    entry_point: str
    preamble: str = ""
    """Run before the candidate's code, in its namespace (the prompt's imports)."""

    @property
    def trusted(self) -> bool:
        return self.name in TRUSTED_SUITES


@dataclass
class Started:
    """A process of a run: watched through a pidfd, fed its job on stdin by a thread."""

    proc: subprocess.Popen[bytes]
    exited: int
    feeding: asyncio.Task[None]
    sandboxed: bool
    info: int | None = None  # the read end of bubblewrap's --info-fd
    init: int | None = None  # a pidfd for the init of its pid namespace (bwrap)


@dataclass(frozen=True)
class Job:
    """What a process of the run is told on stdin, and the descriptors it inherits (and that
    this process closes once it has started: the box's)."""

    data: dict[str, Any]
    keep: list[int]
    close: list[int]


class Sandbox:
    """Runs code against suites, ``workers`` at a time, each run in a fresh directory."""

    def __init__(
        self,
        limits: Limits | None = None,
        workers: int | None = None,
        isolation: Isolation | None = None,
    ) -> None:
        self.limits = limits or Limits()
        self.workers = workers or os.cpu_count() or 1
        self.isolation: Isolation = choose(isolation)
        boxed = boxes.hierarchies() is not None
        self.warning = warning(self.isolation, boxed, asked_by(isolation))
        self._slots: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore] | None = None

    def run_sync(self, code: str, suite: Suite) -> SuiteResult:
        return asyncio.run(self.run(code, suite))

    async def run(self, code: str, suite: Suite) -> SuiteResult:
        loop = asyncio.get_running_loop()
        if self._slots is None or self._slots[0] is not loop:  # a semaphore has one loop
            self._slots = (loop, asyncio.Semaphore(self.workers))
        # guard: grading-pool-bounded
        async with self._slots[1]:
            began = time.perf_counter()
            tmp = Path(tempfile.mkdtemp(prefix="loopbench-"))
            try:
                with own_uid() as claim:
                    return await self._run(tmp, code, suite, began, claim)
            finally:  # at the level none, the work directory holds whatever the candidate made
                # guard: run-own-folder-removed
                await to_the_end(asyncio.to_thread(remove_tree, tmp))

    async def _run(
        self, tmp: Path, code: str, suite: Suite, began: float, claim: Claim
    ) -> SuiteResult:
        uid, limits = claim.uid, self.limits
        for folder in ("work", "root"):
            (tmp / folder).mkdir()
        if uid is not None:  # the work directory is the unprivileged uid's; the rest is not
            os.chown(tmp / "work", uid, uid)
            tmp.chmod(0o711)
        started: list[Started] = []
        output = Output(limits.output_bytes + OUTPUT_SLACK)
        box = boxes.Box.make(limits.memory_mb * MB, limits.processes)
        try:
            results = os.open(tmp / "results.jsonl", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            calls_r, calls_w = os.pipe()  # the runner's calls to the worker
            replies_r, replies_w = os.pipe()  # the worker's replies
            # guard: worker-never-holds-results
            worker_fds = [calls_r, replies_w]  # never the results: only the runner's
            runner_fds = [results, calls_w, replies_r]
            try:
                job = self._worker_job(code, suite, uid, box, worker_fds)
                streams = output.pipes(counted=True)
                started.append(self._start(tmp, WORKER, job, streams, sandboxed=True))
                job = self._runner_job(suite, uid, box, runner_fds)
                # guard: suite-model-wrote-sandboxed
                sandboxed = not suite.trusted
                streams = output.pipes(counted=sandboxed, tail=True)  # its tests' output too
                started.append(self._start(tmp, RUNNER, job, streams, sandboxed))
            finally:
                _close(results, calls_r, calls_w, replies_r, replies_w)
            timed_out, over = await self._wait(started, claim, box, output)
        finally:
            try:
                # guard: cancelled-run-still-kills-reaps
                await to_the_end(self._end(started, claim, box))
            finally:
                output.close()
        # guard: box-kernel-killed-ends-run
        if box is not None and box.killed_for_memory:
            over = f"memory limit ({limits.memory_mb} MB) exceeded by the run's processes"
        worker, runner = started
        ending = Ending(
            timed_out,
            worker.proc.returncode,
            runner.proc.returncode,
            self.isolation != "none",
            over,
            not suite.trusted,
            output.printed,
            output.runner_tail,
        )
        return await asyncio.to_thread(read_result, tmp, limits, ending, began, suite.source)

    def _start(
        self,
        tmp: Path,
        program: str,
        job: Job,
        streams: tuple[int, int],
        sandboxed: bool,
    ) -> Started:
        """Starts one process of the run (at its isolation level when ``sandboxed``), its job
        fed on stdin, its stdout and stderr written to ``streams`` (pipes, closed here)."""
        out, err = streams
        programs = programs_folder()
        bwrap = sandboxed and self.isolation == "bwrap"
        info_read, info_write = os.pipe() if bwrap else (None, None)
        if sandboxed:
            disk = self.limits.disk_mb * MB
            argv = command(
                self.isolation, programs, f"loopbench.sandbox.{program}", tmp, disk, info_write
            )
            # guard: no-key-reaches-candidate
            cwd, env = tmp, child_env(workdir_of(self.isolation, tmp))
            if self.isolation == "none":
                cwd = tmp / "work"
        else:
            argv, cwd, env = (
                command("none", programs, f"loopbench.sandbox.{program}", tmp, 0),
                tmp,
                {},
            )
        keep = job.keep + ([] if info_write is None else [info_write])
        stdin_read, stdin_write = os.pipe()
        try:  # not asyncio's subprocesses: cancelled while starting one, they can hang
            proc = subprocess.Popen(
                argv,
                stdin=stdin_read,
                stdout=out,
                stderr=err,
                cwd=cwd,
                env=env,
                start_new_session=True,
                pass_fds=keep,
            )
        except BaseException:
            _close(stdin_write, info_read)
            raise
        finally:
            _close(stdin_read, info_write, out, err, *job.close)
        exited = os.pidfd_open(proc.pid)  # started, not yet reaped: its pid stays
        data = json.dumps(job.data, separators=(",", ":")).encode()  # ASCII
        feeding = in_thread(_write_all, stdin_write, data)
        return Started(proc, exited, feeding, sandboxed, info_read)

    async def _wait(
        self, started: list[Started], claim: Claim, box: boxes.Box | None, output: Output
    ) -> tuple[bool, str]:
        """Feeds the jobs and waits for both processes to exit, or the candidate's output to
        pass its cap: (the wall clock ran out, what the watch found over a limit, when there
        is no box)."""
        worker, runner = started
        for process in started:
            if process.info is not None:
                info, process.info = process.info, None  # closed once read
                process.init = await namespace_init(info, process.proc.pid)
        limits = self.limits
        waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(_both_exit(runner, worker))]
        # guard: run-waits-output-cap-too
        waits.append(output.over)
        watching = None
        if box is None:
            over = boxes.watch(limits.memory_mb * MB, limits.processes, claim.uid, worker.proc.pid)
            watching = asyncio.ensure_future(over)
            waits.append(watching)
        try:
            async with asyncio.timeout(limits.timeout_s):
                for process in started:
                    await asyncio.shield(process.feeding)
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            return False, watching.result() if watching is not None and watching.done() else ""
        except TimeoutError:
            return True, ""
        finally:
            for waiting in waits:  # each holds a reader on a pidfd, closed soon after
                waiting.cancel()
            await asyncio.gather(*waits, return_exceptions=True)

    async def _end(self, started: list[Started], claim: Claim, box: boxes.Box | None) -> None:
        """Kills whatever the run started and returns once it is gone (and reaped): the test
        runner first, so that it writes nothing of the worker's end that this causes."""
        try:
            for process in reversed(started):
                try:
                    if not process.sandboxed:
                        await end_trusted(process.proc, process.exited)
                    else:
                        zombies = await end_run(
                            process.proc, process.exited, process.init, claim.uid
                        )
                        claim.zombies = claim.zombies or zombies
                    await process.feeding  # its reader is gone: it has ended, or ends at once
                finally:  # end_run closed the init's pidfd
                    os.close(process.exited)
                    _close(process.info)
                    process.init = process.info = None
        finally:
            if box is not None:
                await asyncio.to_thread(box.end)
            if self.isolation == "none" and claim.uid is not None:
                await asyncio.to_thread(sweep, claim.uid)

    def _worker_job(
        self, code: str, suite: Suite, uid: int | None, box: boxes.Box | None, fds: list[int]
    ) -> Job:
        box_fds = [] if box is None else box.join_fds()
        calls, replies = fds[:2]
        data = {
            "code": code,
            "preamble": suite.preamble,
            "entry_point": suite.entry_point,
            "limits": self.limits.to_job(),
            "uid": uid,
            "gid": uid,
            "box_fds": box_fds,
            "calls_fd": calls,
            "replies_fd": replies,
        }
        return Job(data, [*fds, *box_fds], box_fds)

    def _runner_job(
        self, suite: Suite, uid: int | None, box: boxes.Box | None, fds: list[int]
    ) -> Job:
        limits = self.limits.to_job()
        confine, box_fds = None, []
        # guard: suite-model-wrote-confined
        if not suite.trusted:
            box_fds = [] if box is None else box.join_fds()
            confine = {"limits": limits, "uid": uid, "gid": uid, "box_fds": box_fds}
        results, calls, replies = fds
        data = {
            "suite": compiled(suite.source).to_job(),
            "limits": limits,
            "results_fd": results,
            "calls_fd": calls,
            "replies_fd": replies,
            "confine": confine,
        }
        return Job(data, [*fds, *box_fds], box_fds)


async def _both_exit(first: Started, second: Started) -> None:
    await readable(first.exited)
    await readable(second.exited)


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


def _close(*fds: int | None) -> None:
    for fd in fds:
        if fd is not None:
            os.close(fd)
