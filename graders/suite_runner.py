"""Runs one code suite against one candidate, inside the sandbox (stdlib only).

``graders/sandbox.py`` copies this file into a fresh working directory and runs it with the
base interpreter, ``python -I -S -B``: it must never import loopbench. It reads the job
(JSON: code, preamble, suite, entry point, limits, uid) from stdin, never a file the
candidate could read. Then, in this order: it sets the resource limits; drops root for the
unprivileged uid the job names (root is exempt from RLIMIT_NPROC); installs an audit hook
(defence in depth, not the boundary: code in this process can get round it); caps stdout
and stderr; compiles and runs the candidate; compiles the suite with its asserts rewritten
(see ``_Rewrite``); and runs the tests in file order.

Events go to the descriptor the job names, one JSON line each, written as they happen, so
a run killed midway still says which tests finished and which one was running::

    {"event": "start", "test": NAME}
    {"event": "pass", "test": NAME}
    {"event": "fail", "test": NAME, "input": ..., "expected": ..., "actual": ...}
    {"event": "end", "status": STATUS, "detail": ...}

STATUS here is passed, failed, crashed, syntax_error or killed (the memory or output
limit); a timeout or a signal leaves no end line, and the parent names it. The candidate runs
in this process and can write these lines itself; the parent accepts a pass only when it
adds up (see ``graders/sandbox.py``).
"""

import ast
import io
import json
import os
import resource
import sys
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

FIELD_CHARS = 1000  # the most characters of one reported input, expected or actual
CANDIDATE_FILE = "<candidate>"
SUITE_FILE = "<suite>"


class SuiteFailure(Exception):
    """A check that failed, as the report shows it."""

    def __init__(self, input: str, expected: str, actual: str) -> None:
        super().__init__(actual)
        self.input, self.expected, self.actual = input, expected, actual


class OutputLimit(BaseException):
    """The candidate printed more than the limit: ends the run (a BaseException, so the
    candidate's ``except Exception`` does not swallow it)."""


# The limits end the run; any other exception the candidate raises fails the test it is in.
LIMITS = (MemoryError, OutputLimit)


def cut(text: str) -> str:
    return text if len(text) <= FIELD_CHARS else text[: FIELD_CHARS - 3] + "..."


def show(value: object) -> str:
    try:
        return cut(repr(value))
    except LIMITS:
        raise
    except BaseException as exc:  # a candidate's __repr__ may raise
        return f"<unrepresentable {type(value).__name__}: {type(exc).__name__}>"


def raised(exc: BaseException) -> str:
    try:
        message = str(exc)
    except LIMITS:
        raise
    except BaseException:  # a candidate's exception may fail to print
        message = ""
    name = type(exc).__name__
    return cut(f"raised {name}: {message}" if message else f"raised {name}")


# The checks the rewritten suite calls.


def _lb_eq(actual: object, expected: object, source: str) -> None:
    if not actual == expected:
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

    def __enter__(self) -> "raises":
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
        if isinstance(exc, self.expected):
            return True
        if isinstance(exc, LIMITS):
            return False  # a limit (memory, output) ends the run, here as anywhere
        raise SuiteFailure(self.source, wanted, raised(exc)) from exc


def suite_module() -> types.ModuleType:
    module = types.ModuleType("loopbench_suite", "What code suites import: raises.")
    module.raises = raises  # type: ignore[attr-defined]
    return module


class _Rewrite(ast.NodeTransformer):
    """``assert A == B`` -> ``_lb_eq(A, B, "A")``; ``assert E`` -> ``_lb_true(E, "E")`` (a
    message is dropped); ``with raises(X): body`` -> ``with raises(X, _source="body"):``,
    the body's last expression noted for "returned ...". Evaluation order is unchanged."""

    def __init__(self, source: str) -> None:
        self.source = source

    def text(self, node: ast.AST) -> str:
        return cut(ast.get_source_segment(self.source, node) or ast.unparse(node))

    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        test = node.test
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
            args = [test.left, test.comparators[0], ast.Constant(self.text(test.left))]
            call = ast.Call(ast.Name("_lb_eq", ast.Load()), args, [])
        else:
            args = [test, ast.Constant(self.text(test))]
            call = ast.Call(ast.Name("_lb_true", ast.Load()), args, [])
        return ast.copy_location(ast.Expr(call), node)

    def visit_With(self, node: ast.With) -> ast.AST:
        self.generic_visit(node)
        for item in node.items:
            call = item.context_expr
            if isinstance(call, ast.Call) and _called(call) == "raises":
                body = "\n".join(self.text(statement) for statement in node.body)
                call.keywords.append(ast.keyword("_source", ast.Constant(cut(body))))
                last = node.body[-1]
                if isinstance(last, ast.Expr):
                    noted = ast.Call(ast.Name("_lb_value", ast.Load()), [last.value], [])
                    node.body[-1] = ast.copy_location(ast.Expr(noted), last)
        return node


def _called(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


def statements(tree: ast.Module, source: str) -> list[tuple[int, int, str, str]]:
    """(first line, last line, input, expected) of each statement, for the report of an
    exception raised in it: an ``assert A == B`` gives A and B's source, others their own."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or node.end_lineno is None:
            continue
        test = node.test if isinstance(node, ast.Assert) else None
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
            inp = ast.get_source_segment(source, test.left) or ""
            exp = literal(test.comparators[0], source)
        else:
            inp, exp = ast.get_source_segment(source, test or node) or "", ""
        found.append((node.lineno, node.end_lineno, cut(inp), cut(exp)))
    return found


def literal(node: ast.expr, source: str) -> str:
    """An expected value never evaluated (the actual raised first): its repr when it is a
    literal, else its source."""
    try:
        return show(ast.literal_eval(node))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return ast.get_source_segment(source, node) or ""


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


# The process: limits, privileges, the audit hook, output.


def set_limits(limits: dict[str, Any]) -> None:
    cpu = limits["cpu_s"]
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))  # SIGXCPU, then SIGKILL
    memory = limits["memory_mb"] * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_NPROC, (limits["processes"], limits["processes"]))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["file_bytes"], limits["file_bytes"]))
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def drop_root(uid: int, gid: int) -> None:
    """Become the unprivileged uid. Its interpreter may sit where that uid cannot reach
    (pyenv under a 0700 /root), so the stdlib stays importable through descriptors opened
    first: a process may always follow its own /proc/self/fd links."""
    folders = [p for p in sys.path if os.path.isdir(p)]
    fds = [os.open(p, os.O_RDONLY | os.O_DIRECTORY) for p in folders]
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    moved = {folder: f"/proc/self/fd/{fd}" for folder, fd in zip(folders, fds, strict=True)}
    sys.path[:] = moved.values()
    sys.path_importer_cache.clear()
    for module in list(sys.modules.values()):  # packages already imported (encodings...)
        path = getattr(module, "__path__", None)
        if isinstance(path, list):
            path[:] = [_moved(p, moved) for p in path]


def _moved(path: str, moved: dict[str, str]) -> str:
    for folder, fd_path in moved.items():
        if path == folder or path.startswith(folder + "/"):
            return fd_path + path[len(folder) :]
    return path


# Audit events refused outright: new processes, signals to others, sockets, ctypes, limits.
# fmt: off
PROCESS_EVENTS = (
    "os.system", "os.exec", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.kill",
    "os.killpg", "subprocess.", "pty.", "signal.pthread_kill", "socket.", "ctypes.dlopen",
    "ctypes.dlsym", "resource.",
)
# fmt: on
# Modules whose calls raise no audit event: processes (fork_exec), shared memory outside the
# work directory, a database engine that opens files itself, and raw memory.
REFUSED_IMPORTS = frozenset({"_posixsubprocess", "_posixshmem", "_sqlite3", "_ctypes"})
PATH_EVENTS = frozenset({"open", "os.listdir", "os.scandir", "os.chdir"})
# Events that change the filesystem: (the positions of their paths, of their dir_fds). Their
# paths must lie in the working directory.
WRITE_EVENTS: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "os.mkdir": ((0,), (2,)),
    "os.remove": ((0,), (1,)),
    "os.rmdir": ((0,), (1,)),
    "os.rename": ((0, 1), (2, 3)),
    "os.link": ((0, 1), (2, 3)),
    "os.symlink": ((1,), (2,)),
    "os.chmod": ((0,), (2,)),
    "os.chown": ((0,), (3,)),
    "os.utime": ((0,), (3,)),
    "os.truncate": ((0,), ()),
    "os.setxattr": ((0,), ()),
    "os.removexattr": ((0,), ()),
}
NEW_ENTRY_EVENTS = frozenset({"os.mkdir", "os.link", "os.symlink"})
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def install_audit_hook(workdir: str, readable: list[str], files: int) -> None:
    """Refuses PROCESS_EVENTS and REFUSED_IMPORTS; paths outside the working directory
    except reads under ``readable`` (the stdlib); paths it cannot vouch for (a ``..``, or
    relative to a descriptor it cannot see); and more than ``files`` new files and folders.
    What it refuses is bound here, not read from this module, which the candidate can reach
    (and it can reach the hook too: defence in depth)."""
    process_events, refused_imports = PROCESS_EVENTS, REFUSED_IMPORTS
    path_events, write_events, new_entry_events = PATH_EVENTS, WRITE_EVENTS, NEW_ENTRY_EVENTS
    write_flags, tmpfile = WRITE_FLAGS, getattr(os, "O_TMPFILE", 0)
    created = [0]

    def under(path: str, roots: list[str]) -> bool:
        return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)

    def refuse(what: str) -> NoReturn:
        raise PermissionError(f"sandbox: {what} is not allowed")

    def resolve(event: str, raw: Any) -> str:
        path = os.fsdecode(raw)
        if ".." in path.split("/"):
            refuse(f"{event} {path!r} (a '..')")
        return os.path.realpath(path)

    def create(event: str, path: str) -> None:
        created[0] += 1
        if created[0] > files:
            refuse(f"{event} {path!r} (more than {files} new files)")

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "import":
            if args[0] in refused_imports:
                raise ImportError(f"sandbox: import {args[0]} is not allowed", name=args[0])
        elif event in path_events:
            if not args or isinstance(args[0], int) or args[0] is None:
                return  # a descriptor already open, or the working directory itself
            mode, flags = (args[1], args[2]) if event == "open" else ("r", 0)
            if mode is None and not os.path.isabs(os.fsdecode(args[0])):
                refuse(f"os.open {args[0]!r} (relative: its dir_fd is not known)")
            path = resolve(event, args[0])
            writes = isinstance(flags, int) and flags & write_flags
            if under(path, [workdir]):
                new = isinstance(flags, int) and flags & (os.O_CREAT | tmpfile)
                if new and ((tmpfile and flags & tmpfile == tmpfile) or not os.path.lexists(path)):
                    create(event, path)
                return
            if not writes and not any(c in (mode or "") for c in "wax+") and under(path, readable):
                return
            refuse(f"{event} {path!r}")
        elif event in write_events:
            paths, dir_fds = write_events[event]
            if any(fd not in (None, -1) for i in dir_fds for fd in args[i : i + 1]):
                refuse(f"{event} relative to a descriptor")
            for i in paths:
                if not isinstance(args[i], int) and not under(resolve(event, args[i]), [workdir]):
                    refuse(f"{event} {os.fsdecode(args[i])!r}")
            if event in new_entry_events:
                create(event, os.fsdecode(args[paths[-1]]))
        elif event.startswith(process_events):
            refuse(event)

    sys.addaudithook(hook)


class CappedWriter(io.TextIOBase):
    """A text stream that passes the first ``budget[0]`` bytes on (the budget is shared by
    stdout and stderr), then raises OutputLimit."""

    def __init__(self, fd: int, budget: list[int]) -> None:
        self.fd, self.budget = fd, budget

    def write(self, text: str) -> int:
        data = str(text).encode("utf-8", "replace")
        if len(data) > self.budget[0]:
            self.budget[0] = 0
            raise OutputLimit()
        self.budget[0] -= len(data)
        os.write(self.fd, data)
        return len(text)


# The run.


class Run:
    def __init__(self, results_fd: int) -> None:
        self.fd = results_fd

    def emit(self, **event: str) -> None:
        os.write(self.fd, (json.dumps(event) + "\n").encode("utf-8"))

    def end(self, status: str, detail: str = "") -> None:
        self.emit(event="end", status=status, detail=cut(detail))


def load_candidate(job: dict[str, Any]) -> tuple[Any, str, str]:
    """(the entry point, status, detail): status "" when the candidate loaded."""
    try:
        preamble = compile(job["preamble"], "<preamble>", "exec", dont_inherit=True)
        code = compile(job["code"], CANDIDATE_FILE, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return None, "syntax_error", f"{type(exc).__name__}: {exc.msg} (line {exc.lineno})"
    except ValueError as exc:  # e.g. a null byte in the source
        return None, "syntax_error", f"ValueError: {exc}"
    module = types.ModuleType("solution")
    sys.modules["solution"] = module
    try:
        exec(preamble, module.__dict__)
        exec(code, module.__dict__)
    except LIMITS:
        raise
    except BaseException as exc:
        where_ = line_of(exc, CANDIDATE_FILE)
        return None, "crashed", f"the candidate {raised(exc)}{where_}"
    entry = module.__dict__.get(job["entry_point"])
    if entry is None:
        return None, "crashed", f"the candidate defines no {job['entry_point']!r}"
    return entry, "", ""


def load_suite(source: str) -> tuple[list[tuple[str, Callable[[Any], None]]], list[Any]]:
    """The tests in file order (``check`` when there is no ``test_*``), and the statement
    spans ``where`` reads."""
    tree = ast.parse(source, SUITE_FILE)
    names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    spans = statements(tree, source)
    code = compile(ast.fix_missing_locations(_Rewrite(source).visit(tree)), SUITE_FILE, "exec")
    module = types.ModuleType("suite")
    module.__dict__.update(_lb_eq=_lb_eq, _lb_true=_lb_true, _lb_value=_lb_value)
    sys.modules["suite"] = module
    exec(code, module.__dict__)
    tests = [n for n in names if n.startswith("test_")] or [n for n in names if n == "check"]
    return [(name, module.__dict__[name]) for name in tests], spans


def run_tests(run: Run, candidate: Any, tests: list[Any], spans: list[Any]) -> str:
    failed = 0
    for name, test in tests:
        run.emit(event="start", test=name)
        try:
            test(candidate)
        except SuiteFailure as f:
            failed += 1
            run.emit(event="fail", test=name, input=f.input, expected=f.expected, actual=f.actual)
        except LIMITS:
            raise
        except BaseException as exc:
            failed += 1
            inp, exp = where(exc, spans)
            run.emit(event="fail", test=name, input=inp, expected=exp, actual=raised(exc))
        else:
            run.emit(event="pass", test=name)
    return "failed" if failed else "passed"


@contextmanager
def limits_as_statuses(run: Run, job: dict[str, Any]) -> Iterator[None]:
    try:
        yield
    except MemoryError:
        run.end("killed", f"memory limit ({job['limits']['memory_mb']} MB) exceeded")
    except OutputLimit:
        run.end("killed", f"output limit ({job['limits']['output_bytes']} bytes) exceeded")


def main() -> None:
    job = json.loads(sys.stdin.read())
    run = Run(job["results_fd"])
    set_limits(job["limits"])
    if os.getuid() == 0 and job["uid"] is not None:
        drop_root(job["uid"], job["gid"])
    readable = [os.path.realpath(p) for p in sys.path] + ["/dev/null", "/dev/urandom"]
    install_audit_hook(os.path.realpath(os.getcwd()), readable, job["limits"]["files"])
    budget = [job["limits"]["output_bytes"]]
    sys.stdout, sys.stderr = CappedWriter(1, budget), CappedWriter(2, budget)
    sys.modules["loopbench_suite"] = suite_module()
    with limits_as_statuses(run, job):
        candidate, status, detail = load_candidate(job)
        if status:
            return run.end(status, detail)
        try:
            tests, spans = load_suite(job["suite"])
        except LIMITS:
            raise
        except BaseException as exc:
            return run.end("crashed", f"the suite {raised(exc)}{line_of(exc, SUITE_FILE)}")
        if not tests:
            return run.end("crashed", "the suite defines no test_* function and no check")
        run.end(run_tests(run, candidate, tests, spans))


if __name__ == "__main__":
    main()
    os._exit(0)  # without waiting for threads or exit handlers the candidate left
