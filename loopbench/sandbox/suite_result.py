"""What a sandboxed run left, read back as its result: the test runner's events, capped, and
their text made printable (``loopbench.sandbox.printable``: what the candidate raised or printed may
hold escape sequences); what ended the candidate's worker when the runner says it is gone
(its exit code or signal, or the box's memory limit); a timeout; the output limit, and
whether the output was cut; and a pass accepted only when every test of the suite passed in
order (counted here too, ``suite_tests``: the runner of a suite the model wrote is sandboxed,
and not trusted)."""

from __future__ import annotations

import ast
import json
import signal
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, cast, get_args

from loopbench.sandbox.candidate_worker import EXIT_MEMORY, EXIT_OUTPUT
from loopbench.sandbox.limits import Limits
from loopbench.sandbox.printable import printable

Status = Literal[
    "passed",  # every test passed, and there was at least one
    "failed",  # one or more tests failed
    "timeout",  # the wall clock ran out
    "crashed",  # the candidate raised at import or lacks the entry point; or the runner died
    "syntax_error",  # the candidate does not compile
    "killed",  # a signal or limit ended the run without a result: memory, CPU, output
]

RESULTS_BYTES = 4 * 1024 * 1024  # the most of the events file read back
FIELD_CHARS = 1000  # the most of any one event field read back
OUTPUT_SLACK = 4096  # what the interpreter itself may write past the output cap (a last error)


@dataclass(frozen=True)
class Ending:
    """How a run's processes ended, as the sandbox saw it."""

    timed_out: bool
    worker_code: int | None
    """The worker's exit status as Popen gives it (at bwrap, a signal N is 128 + N)."""
    runner_code: int | None
    wrapped: bool
    """The worker ran under bwrap or unshare, whose exit codes past 128 are signals."""
    over: str
    """What the box found over its limits ("" when nothing was): the kernel killed a process
    of it for memory, or the watch saw the processes together over a limit."""
    runner_sandboxed: bool
    """The test runner was sandboxed (a suite the model wrote): its output counts too."""
    printed: int = 0
    """Bytes the candidate's processes wrote to stdout and stderr, as far as they were read."""
    runner_tail: bytes = b""
    """The end of the test runner's stderr."""


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
    output_bytes: int = 0
    """What the candidate wrote to stdout and stderr, in bytes, as far as it was read: once
    past the output limit (and a little slack) the run is ended and no more is read."""
    output_cut: bool = False
    """The candidate's output went past the output limit: the rest of it was cut (never
    written, or never read) and the run ended ``killed``."""

    def to_json(self) -> dict[str, Any]:
        """The result as JSON (``output_bytes`` and ``output_cut`` since they were measured:
        a reader of older traces finds them absent)."""
        failure = self.first_failure
        return {
            "status": self.status,
            "passed": self.passed,
            "failed": self.failed,
            "first_failure": None if failure is None else failure.to_json(),
            "seconds": self.seconds,
            "detail": self.detail,
            "output_bytes": self.output_bytes,
            "output_cut": self.output_cut,
        }


def _events(path: Path) -> list[dict[str, str]]:
    """The runner's events, read with a cap, each field cut to FIELD_CHARS and made
    printable; a torn or foreign line is skipped."""
    with open(path, "rb") as f:
        lines = f.read(RESULTS_BYTES).decode("utf-8", "replace").splitlines()
    events = []
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and isinstance(event.get("event"), str):
            # guard: fields-read-back-capped
            events.append({k[:FIELD_CHARS]: str(v)[:FIELD_CHARS] for k, v in event.items()})
    # guard: events-read-back-made-printable
    return [{k: printable(v)[:FIELD_CHARS] for k, v in event.items()} for event in events]


def _last_line(tail: bytes) -> str:
    lines = tail.decode("utf-8", "replace").strip().splitlines()
    # guard: runner-last-words-made-printable
    return printable(lines[-1])[:FIELD_CHARS] if lines else ""


def suite_tests(source: str) -> list[str] | None:
    """The tests the runner finds in a suite, in order: its top-level ``def test_*``, or else
    ``check``; None when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    names = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
    # guard: humaneval-check-test
    return [n for n in names if n.startswith("test_")] or [n for n in names if n == "check"]


SIGNALS: dict[int, str] = {
    signal.SIGXCPU: "the CPU time limit",
    signal.SIGXFSZ: "the file size limit",
    signal.SIGKILL: "the CPU time or memory limit",
    signal.SIGSEGV: "a crash, e.g. the stack overflowing",
}


def _signal(code: int | None, wrapped: bool) -> str:
    """ "killed by SIGNAME (why)" when an exit status is a signal's, else ""."""
    code = code or 0
    number = -code if code < 0 else code - 128 if wrapped and code > 128 else 0
    if not number:
        return ""
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    why = SIGNALS.get(number)
    return f"killed by {name}" + (f" ({why})" if why else "")


def _worker_gone(ending: Ending, limits: Limits, where: str) -> tuple[Status, str]:
    """(status, detail) when the runner found the worker gone: what its exit says."""
    code = ending.worker_code
    if code == EXIT_MEMORY:
        return "killed", f"memory limit ({limits.memory_mb} MB) exceeded"
    if code == EXIT_OUTPUT:
        return "killed", f"output limit ({limits.output_bytes} bytes) exceeded"
    killed = _signal(code, ending.wrapped)
    if killed:
        return "killed", killed
    return "crashed", f"the candidate's process exited with code {code}{where}"


def _no_end(limits: Limits, ending: Ending) -> tuple[Status, str]:
    """(status, detail) when the runner wrote no end line."""
    if ending.timed_out:
        return "timeout", f"timed out after {limits.timeout_s:g} s"
    killed = _signal(ending.runner_code, ending.runner_sandboxed and ending.wrapped)
    if killed:
        return "killed", killed
    last = _last_line(ending.runner_tail)
    code = ending.runner_code
    detail = f"the test runner exited with code {code} without a result" + (
        f": {last}" if last else ""
    )
    return "crashed", detail


def read_result(tmp: Path, limits: Limits, ending: Ending, began: float, suite: str) -> SuiteResult:
    events = _events(tmp / "results.jsonl")
    end = next((e for e in events if e["event"] == "end"), None)
    if end is not None and end.get("status") == "gone" and not ending.timed_out:
        where = end.get("detail", "")  # "during test_x", "as it loaded"
        status, detail = _worker_gone(ending, limits, f" {where}" if where else "")
    elif end is not None and end.get("status") in get_args(Status):
        status, detail = cast(Status, end["status"]), end.get("detail", "")
    else:
        status, detail = _no_end(limits, ending)
    printed = ending.printed
    # guard: output-stopped-at-sys-stdout
    cut = printed > limits.output_bytes + OUTPUT_SLACK or ending.worker_code == EXIT_OUTPUT
    # guard: output-past-sys-stdout-counted
    if status not in ("timeout", "syntax_error") and printed > limits.output_bytes + OUTPUT_SLACK:
        status = "killed"
        detail = (
            f"output limit ({limits.output_bytes} bytes) exceeded, written past sys.stdout: "
            "the run was ended and the rest of its output cut"
        )
    # guard: what-box-found-over-limits
    if ending.over and status != "syntax_error":
        status, detail = "killed", ending.over
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
        # guard: cut-short-run-names-test
        failures.append(Failure(running[-1], "", "", cut_short))
        if status == "timeout":
            detail += f" in {running[-1]}"
    expected = suite_tests(suite)
    # guard: forged-pass-does-not-add
    if status == "passed" and (passes != expected or failures):
        status = "crashed"
        detail = (
            f"the results do not add up: the run said passed, with {len(passes)} of "
            f"{len(expected or [])} tests passed and {len(failures)} failed"
        )
    seconds = time.perf_counter() - began
    first = failures[0] if failures else None
    failed = len(failures) - bool(running)
    return SuiteResult(status, len(passes), failed, first, seconds, detail, printed, cut)
