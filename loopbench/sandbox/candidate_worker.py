"""The candidate's worker: model-written code loaded in the sandbox, answering calls (the
standard library and ``loopbench.harness.errors`` only).

``loopbench/sandbox/run.py`` starts it with the base interpreter (``python -I -S -B``, never
loopbench) at the run's isolation level. It reads its job (JSON: code, preamble, entry
point, limits, uid, descriptors) from stdin; confines itself (``loopbench/sandbox/confine.py``);
compiles and runs the candidate; says ``{"op": "ready", "entry": V}`` (or ``{"op":
"load_failed", "status", "detail"}``); then answers the test runner's requests until the pipe
closes, one message each way (``loopbench/sandbox/plain_data.py``)::

    {"op": "request", "kind": "call", "target": ID, "method": NAME | null, "args", "kwargs"}
    {"op": "request", "kind": "getattr", "target": ID, "name": NAME}
    -> {"op": "reply", "value": V} | {"op": "reply", "raised": INFO}
       | {"op": "reply", "refused": WHY}

A handle with a negative id is one of the candidate's objects (handed out by this worker); a
positive id is a function of the suite's, called back with a request the other way. A limit
(memory, output) is ``{"op": "limit", "what": ...}``, and the worker exits with EXIT_MEMORY or
EXIT_OUTPUT: at the first write past the output limit, from inside that write, so no
``except`` of the candidate's can catch it and go on. It holds no descriptor but its pipes
and its stdout and stderr: nothing it says is trusted, since the test runner takes its
values as answers to compare, never as verdicts, and the candidate runs in this process.
"""

from __future__ import annotations

import os
import sys
import types

from loopbench.sandbox.confine import LIMITS, OutputLimit, confine
from loopbench.sandbox.plain_data import (
    MESSAGE_CHARS,
    Gone,
    NotPlainData,
    Peer,
    decode,
    encode,
    exception_info,
    loads,
    rebuild,
    receive,
    send,
)

TYPE_CHECKING = False  # typing costs a tenth of this process's start: for mypy only
if TYPE_CHECKING:
    from typing import Any

    from loopbench.sandbox.plain_data import Handle

CANDIDATE_FILE = "<candidate>"
EXIT_MEMORY, EXIT_OUTPUT = 3, 4


def describe(exc: BaseException) -> str:
    """``raised NAME: message at line N`` of the candidate's code, for a crash as it loads."""
    info = exception_info(exc)
    tb, line = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == CANDIDATE_FILE:
            line = tb.tb_lineno
        tb = tb.tb_next
    text = (
        f"raised {info['type']}: {info['message']}" if info["message"] else f"raised {info['type']}"
    )
    return text[:MESSAGE_CHARS] + ("" if line is None else f" at line {line}")


def load_candidate(job: dict[str, Any]) -> tuple[Any, str, str]:
    """(the entry point, status, detail): status "" when the candidate loaded."""
    try:
        preamble = compile(job["preamble"], "<preamble>", "exec", dont_inherit=True)
        # guard: candidate-compiles-apart-from
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
        return None, "crashed", f"the candidate {describe(exc)}"
    if job["entry_point"] not in module.__dict__:
        return None, "crashed", f"the candidate defines no {job['entry_point']!r}"
    return module.__dict__[job["entry_point"]], "", ""


class Server:
    """The candidate's objects by handle, and the requests that reach them."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self.peer = Peer(read_fd, write_fd, self.serve)
        self.objects: dict[int, Any] = {}

    def handle(self, value: Any) -> Handle:
        number = len(self.objects) + 1
        self.objects[number] = value
        return {"id": -number, "type": type(value).__qualname__, "callable": callable(value)}

    def resolve(self, fields: Handle) -> Any:
        """An object a handle names: the candidate's own, or a stand-in for the suite's."""
        if fields["id"] < 0:
            return self.objects[-fields["id"]]
        return SuiteFunction(self, fields["id"])

    def reply(self, outcome: Any) -> dict[str, Any]:
        try:
            return {"op": "reply", "value": encode(outcome, self.handle)}
        except LIMITS:
            raise
        except BaseException as exc:  # NotPlainData, or a RecursionError on the way
            return {"op": "reply", "refused": str(exc) or type(exc).__name__}

    def serve(self, request: dict[str, Any]) -> dict[str, Any]:
        target = self.objects[-request["target"]]
        if request["kind"] == "getattr":
            call: Any = lambda: getattr(target, request["name"])  # noqa: E731
        else:
            args = [decode(a, self.resolve, nested=True) for a in request["args"]]
            kwargs = {k: decode(v, self.resolve, nested=True) for k, v in request["kwargs"]}
            method = request["method"]
            call = lambda: (target if method is None else getattr(target, method))(*args, **kwargs)  # noqa: E731
        try:
            outcome = call()
        except LIMITS:
            raise
        # guard: any-exception-candidate-raises-fails
        except BaseException as exc:
            return {"op": "reply", "raised": exception_info(exc)}
        return self.reply(outcome)


class SuiteFunction:
    """A function the suite passed the candidate (a clock): calling it asks the test runner."""

    def __init__(self, server: Server, number: int) -> None:
        self._server, self._number = server, number

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        server = self._server
        request = {
            "op": "request",
            "kind": "call",
            "target": self._number,
            "method": None,
            "args": [encode(a, server.handle) for a in args],
            "kwargs": [[k, encode(v, server.handle)] for k, v in kwargs.items()],
        }
        reply = server.peer.request(request)
        if reply.get("op") != "reply":
            raise RuntimeError("the test runner broke the protocol")
        if "raised" in reply:
            raise rebuild(reply["raised"])
        if "refused" in reply:
            raise NotPlainData(str(reply["refused"]))
        return decode(reply["value"], self.resolve_nested)

    def resolve_nested(self, fields: Handle) -> Any:
        return self._server.resolve(fields)


def main() -> None:
    """The program: serves until the test runner is done, then exits at once, without
    waiting for threads or exit handlers the candidate left."""
    serve(loads(sys.stdin.buffer.read()))
    os._exit(0)


def serve(job: dict[str, Any]) -> None:
    calls, replies = job["calls_fd"], job["replies_fd"]
    confine(job, lambda: ended("output", replies, EXIT_OUTPUT))
    server = Server(calls, replies)
    try:
        entry, status, detail = load_candidate(job)
        ready = server.reply(entry) if not status else {}
        if "value" not in ready:  # it did not load, or its entry point is too large to send
            status, detail = status or "crashed", detail or f"the candidate's entry point {ready}"
            send(replies, {"op": "load_failed", "status": status, "detail": detail})
            return
        send(replies, {"op": "ready", "entry": ready["value"]})
        while True:
            server.peer.answer(receive(calls))
    except Gone:
        return  # the test runner is done
    # guard: memory-exhaustion-killed
    except MemoryError:
        ended("memory", replies, EXIT_MEMORY)
    except OutputLimit:
        ended("output", replies, EXIT_OUTPUT)


def ended(what: str, replies: int, code: int) -> None:
    try:
        send(replies, {"op": "limit", "what": what})
    finally:
        os._exit(code)
