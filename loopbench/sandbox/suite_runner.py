"""Runs one code suite against one candidate: the test runner, outside the candidate (the
standard library and ``loopbench.harness.errors`` only).

``loopbench/sandbox/run.py`` starts two processes for a run, with the base interpreter
(``python -I -S -B``, never loopbench) and its ``main()``: the candidate's worker
(``loopbench/sandbox/candidate_worker.py``) in the sandbox, and this one, which holds the suite. The
candidate's code never runs here: ``candidate`` in the suite is a proxy
(``loopbench/sandbox/remote.py``) that sends each call to the worker over a pipe, and gets back
plain data or the exception it raised. Every assertion, every comparison and the count of tests
run here, and only this process holds the descriptor the events go to. A suite the model
wrote itself (Reflexion's own tests) is not trusted: then this process is confined as the
worker is (``loopbench/sandbox/confine.py``) and sandboxed; a test of it that writes past the
output limit fails, even when it catches the OutputLimit raised.

It reads its job (JSON: the suite as the harness compiled it, its asserts rewritten, see
``loopbench/sandbox/suite_code.py``; limits; descriptors; whether to confine itself) from stdin;
loads the suite; waits for the worker to load the candidate; and runs the tests in file order.
Events go to the descriptor the job names, one JSON line each, written as they happen, so a
run killed midway still says which tests finished and which one was running::

    {"event": "start", "test": NAME}
    {"event": "pass", "test": NAME}
    {"event": "fail", "test": NAME, "input": ..., "expected": ..., "actual": ...}
    {"event": "end", "status": STATUS, "detail": ...}

STATUS here is passed, failed, crashed, syntax_error, killed (the worker reported its memory
or output limit) or gone (the worker's process ended: the sandbox says why from its exit); a
timeout leaves no end line, and the sandbox names it.
"""

from __future__ import annotations

import binascii
import marshal
import os
import resource
import sys
import types

from loopbench.harness.errors import HarnessFault
from loopbench.sandbox.confine import Output, OutputLimit, confine
from loopbench.sandbox.plain_data import NotPlainData, dumps, loads
from loopbench.sandbox.remote import Ended, Worker

TYPE_CHECKING = False  # typing costs a tenth of this process's start: for mypy only
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NoReturn

FIELD_CHARS = 1000  # the most characters of one reported input, expected or actual
SUITE_FILE = "<suite>"


class SuiteFailure(HarnessFault):
    """A check that failed, as the report shows it."""

    def __init__(self, input: str, expected: str, actual: str) -> None:
        super().__init__(actual)
        self.input, self.expected, self.actual = input, expected, actual


def cut(text: str) -> str:
    return text if len(text) <= FIELD_CHARS else text[: FIELD_CHARS - 3] + "..."


def show(value: object) -> str:
    try:
        return cut(repr(value))
    except Exception as exc:  # a value too large or too deep to show (a suite's own __repr__)
        return f"<unrepresentable {type(value).__name__}: {type(exc).__name__}>"


def raised(exc: BaseException) -> str:
    """What the report says of an exception: the candidate's type's name when it raised it."""
    try:
        message = str(exc)
    except Exception:  # a suite's exception may fail to print
        message = ""
    if isinstance(exc, NotPlainData):
        return cut(message)
    name = getattr(exc, "remote_type", None) or type(exc).__name__
    return cut(f"raised {name}: {message}" if message else f"raised {name}")


# The checks the rewritten suite calls.


def _lb_eq(actual: object, expected: object, source: str) -> None:
    if not actual == expected:  # an object of the candidate's refuses (Remote)
        raise SuiteFailure(source, show(expected), show(actual))


def _lb_true(value: object, source: str) -> None:
    if not value:
        raise SuiteFailure(source, "true", show(value))


_NOTHING = object()
_last_value: list[object] = [_NOTHING]


def _lb_value(value: object) -> None:
    """Notes the value of a ``with raises(...)`` body's last expression."""
    _last_value[0] = value


class raises:
    """``with raises(ValueError): candidate("XCX")``: the body must raise that type."""

    def __init__(self, expected: Any, _source: str = "") -> None:
        self.expected = expected
        self.source = _source

    def __enter__(self) -> raises:
        _last_value[0] = _NOTHING
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any
    ) -> bool:
        types_ = self.expected if isinstance(self.expected, tuple) else (self.expected,)
        wanted = "raises " + " or ".join(t.__name__ for t in types_)
        if exc is None:
            value = _last_value[0]
            actual = "returned" if value is _NOTHING else f"returned {show(value)}"
            raise SuiteFailure(self.source, wanted, actual)
        if isinstance(exc, Ended):
            return False  # the worker ended: so does the run
        # guard: raises-accepts-own-type-only
        if isinstance(exc, self.expected):
            return True
        raise SuiteFailure(self.source, wanted, raised(exc)) from exc


def rules(*ids: str) -> Callable[[Callable[[Any], None]], Callable[[Any], None]]:
    """``@rules("empty-line")``: the rules of the specification a test checks. No effect on a
    run: the tests of a task set read them, to check that held-out covers each rule feedback
    checks (``tests/tasks/test_coding_rules.py``)."""

    def mark(test: Callable[[Any], None]) -> Callable[[Any], None]:
        return test

    return mark


def suite_module() -> types.ModuleType:
    module = types.ModuleType("loopbench_suite", "What code suites import: raises, rules.")
    module.raises = raises  # type: ignore[attr-defined]
    module.rules = rules  # type: ignore[attr-defined]
    return module


def where(exc: BaseException, stmts: list[tuple[int, int, str, str]]) -> tuple[str, str]:
    """The input and expected of the innermost suite statement the exception came through."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == SUITE_FILE:
            line = tb.tb_lineno
        tb = tb.tb_next
    spans = [s for s in stmts if line is not None and s[0] <= line <= s[1]]
    if not spans:
        return "", ""
    innermost = min(spans, key=lambda s: s[1] - s[0])
    return innermost[2], innermost[3]


def line_of(exc: BaseException, filename: str) -> str:
    tb, line = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return "" if line is None else f" at line {line}"


# The run.


class Run:
    def __init__(self, results_fd: int, output: Output | None = None) -> None:
        self.fd = results_fd
        self.output = output  # a suite the model wrote: what it may print
        self.test = ""  # the test running; "" while the candidate loads

    def refused_writes(self) -> int:
        return 0 if self.output is None else self.output.refused

    def emit(self, **event: str) -> None:
        os.write(self.fd, dumps(event) + b"\n")

    def end(self, status: str, detail: str = "") -> None:
        self.emit(event="end", status=status, detail=cut(detail))

    def worker_ended(self, ended: Ended) -> None:
        """The run ends where the worker ended: in the test running, or as it loaded."""
        detail = ended.detail
        if self.test:
            if ended.status != "killed":
                detail = f"{detail} during {self.test}".strip()
        elif ended.status == "gone" or detail.startswith("the candidate's process"):
            detail = f"{detail} as it loaded".strip()
        self.end(ended.status, detail)

    def worker_ended_at_once(self, ended: Ended) -> NoReturn:
        """The suite caught the worker's end and called it again: the run ends now, so that
        no test can catch the end and go on (a retry loop) until the time limit."""
        self.worker_ended(ended)
        os._exit(0)


def load_suite(suite: dict[str, Any]) -> list[tuple[str, Callable[[Any], None]]]:
    """The suite the harness compiled (``loopbench/sandbox/suite_code.py``), run as a module: its
    tests in file order."""
    if suite["python"] != sys.implementation.cache_tag:
        raise RuntimeError(f"a suite compiled for {suite['python']}, not this interpreter")
    code = marshal.loads(binascii.a2b_base64(suite["code"]))
    module = types.ModuleType("suite")
    module.__dict__.update(_lb_eq=_lb_eq, _lb_true=_lb_true, _lb_value=_lb_value)
    sys.modules["suite"] = module
    exec(code, module.__dict__)
    return [(name, module.__dict__[name]) for name in suite["tests"]]


def run_tests(run: Run, candidate: Any, tests: list[Any], spans: list[Any], worker: Worker) -> str:
    """Runs the tests in order. Once the worker has ended, in a test that caught it or not,
    the run ends there (the test is left running, and the sandbox names it; a test that
    calls the worker again after catching its end ends the run at once, see
    ``Run.worker_ended_at_once``); a test that wrote past the output limit fails, whether it
    caught the OutputLimit or not."""
    failed = 0
    for name, test in tests:
        run.test = name
        run.emit(event="start", test=name)
        refused = run.refused_writes()
        try:
            test(candidate)
            # guard: run-ends-test-where-worker
            if worker.ended is not None:
                raise worker.ended
            # guard: test-past-output-limit-fails
            if run.refused_writes() > refused:
                raise OutputLimit()
        except SuiteFailure as f:
            failed += 1
            run.emit(event="fail", test=name, input=f.input, expected=f.expected, actual=f.actual)
        except Ended:
            raise
        except BaseException as exc:
            if worker.ended is not None:  # a test that went on after catching it
                raise worker.ended from None
            failed += 1
            inp, exp = where(exc, spans)
            run.emit(event="fail", test=name, input=inp, expected=exp, actual=raised(exc))
        else:
            run.emit(event="pass", test=name)
    return "failed" if failed else "passed"


def trusted(limits: dict[str, Any]) -> None:
    """This process as the trusted side: no core file; no more address space than the box
    gives the candidate (what the worker sends is bounded per message, not what a suite
    keeps of it); and not dumpable, so that a process of the same user can neither trace it
    nor read its memory."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    memory = limits["memory_mb"] * 1024 * 1024
    # guard: trusted-runner-has-box-address
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    if os.geteuid() == 0:
        return  # the worker runs as a uid of its own, which can neither trace nor read this
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except (ImportError, OSError, AttributeError):
        pass  # then only a namespace (bwrap, unshare) keeps the worker out


def main() -> None:
    """The program: runs the suite, then exits at once (a suite the model wrote may leave
    threads)."""
    run_suite(loads(sys.stdin.buffer.read()))
    os._exit(0)


def run_suite(job: dict[str, Any]) -> None:
    output = None
    if job["confine"] is not None:  # a suite the model wrote: sandboxed like its code
        output = confine(job["confine"])
    else:
        trusted(job["limits"])
    run = Run(job["results_fd"], output)
    sys.modules["loopbench_suite"] = suite_module()
    worker = Worker(job["replies_fd"], job["calls_fd"], job["limits"], run.worker_ended_at_once)
    spans = job["suite"]["spans"]
    broken = job["suite"]["broken"]
    tests = []
    if not broken:
        try:
            tests = load_suite(job["suite"])
        except BaseException as exc:
            broken = f"the suite {raised(exc)}{line_of(exc, SUITE_FILE)}"
    try:
        candidate = worker.ready()  # the candidate's own failure to load comes first
    except Ended as ended:
        return run.worker_ended(ended)
    if broken:
        return run.end("crashed", broken)
    try:
        run.end(run_tests(run, candidate, tests, spans, worker))
    except Ended as ended:
        run.worker_ended(ended)
