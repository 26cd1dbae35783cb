"""The candidate as the test runner sees it: proxies that send each call to its worker (the
standard library and ``loopbench.harness.errors`` only; the trusted side of
``loopbench/sandbox/plain_data.py``).

``Worker`` is the connection. The name a suite calls (``candidate``) is a proxy of the
candidate's entry point; calling it sends the call to the worker, whose reply is a plain
value rebuilt here from built-in types, or the exception the candidate raised, rebuilt as
the built-in type it derives from. An object that is not plain data (an instance of the
candidate's class, a bound method) stays in the worker as a handle: its proxy here,
``Remote``, forwards calls, attribute reads, ``len``, indexing, ``in`` and iteration (whose
answers cross as plain data, as any call's do), and refuses everything that would compare
it or compute with it (``==``, ordering, hashing, truth, arithmetic, conversion to a
number), so no object of the candidate's can ever decide an assertion. A function the suite
passes the candidate (a clock) stays here, and the worker calls it back.

When the worker ends (it exits, breaks the protocol, or reports a limit), ``Ended`` is
raised and kept (``Worker.ended``); the test runner ends the run in the test it happened
in, whatever the test did with the exception: a test that caught it is ended as it returns,
and one that calls the worker again (a retry loop) is ended at that call.
"""

from __future__ import annotations

from loopbench.harness.errors import HarnessFault
from loopbench.sandbox.plain_data import (
    Gone,
    NotPlainData,
    Peer,
    ProtocolError,
    decode,
    encode,
    exception_info,
    rebuild,
    receive,
)

TYPE_CHECKING = False  # typing costs a tenth of this process's start: for mypy only
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NoReturn

    from loopbench.sandbox.plain_data import Handle

LOAD_STATUSES = ("syntax_error", "crashed")
DETAIL_CHARS = 1000


class Ended(HarnessFault):
    """The worker can answer no more: ``status`` and ``detail`` end the run ("gone", with no
    detail, when its process ended and only the sandbox can say why)."""

    def __init__(self, status: str, detail: str) -> None:
        super().__init__(detail)
        self.status, self.detail = status, detail


class Worker:
    def __init__(
        self,
        read_fd: int,
        write_fd: int,
        limits: dict[str, Any],
        called_after_end: Callable[[Ended], NoReturn],
    ) -> None:
        self.peer = Peer(read_fd, write_fd, self._serve)
        self.limits = limits
        self.ended: Ended | None = None
        self.called_after_end = called_after_end  # ends the run: the suite caught Ended
        self.suite_objects: dict[int, Any] = {}

    def ready(self) -> Any:
        """The candidate's entry point (a proxy, or plain data if that is what it is), once the
        worker has loaded it; Ended when it could not."""
        message = self._exchange(None)
        if message["op"] == "limit":  # it printed past the limit as it loaded
            self._outcome(message)
        if message["op"] == "load_failed":
            status, detail = message.get("status"), message.get("detail")
            if status in LOAD_STATUSES and type(detail) is str:
                self._end(str(status), detail[:DETAIL_CHARS])
        if message["op"] != "ready" or "entry" not in message:
            self._end("crashed", "the candidate's process broke the protocol as it loaded")
        return self._value(message["entry"])

    def call(self, target: int, method: str | None, args: Any, kwargs: dict[str, Any]) -> Any:
        message = {
            "op": "request",
            "kind": "call",
            "target": target,
            "method": method,
            "args": [encode(a, self._keep, nested=True) for a in args],
            "kwargs": [[k, encode(v, self._keep, nested=True)] for k, v in kwargs.items()],
        }
        return self._outcome(self._exchange(message))

    def getattr(self, target: int, name: str) -> Any:
        message = {"op": "request", "kind": "getattr", "target": target, "name": name}
        return self._outcome(self._exchange(message))

    def _exchange(self, message: dict[str, Any] | None) -> dict[str, Any]:
        # guard: worker-called-after-end-ends-run
        if self.ended is not None:
            self.called_after_end(self.ended)
        try:
            if message is None:
                return receive(self.peer.read_fd)
            return self.peer.request(message)
        except (Gone, BrokenPipeError):  # its process ended (as this wrote, for a broken pipe)
            self._end("gone", "")
        except ProtocolError as exc:
            self._end("crashed", f"the candidate's process broke the protocol: {exc}")

    def _outcome(self, reply: dict[str, Any]) -> Any:
        if reply["op"] == "limit":
            what = reply.get("what")
            if what == "memory":
                self._end("killed", f"memory limit ({self.limits['memory_mb']} MB) exceeded")
            if what == "output":
                self._end("killed", f"output limit ({self.limits['output_bytes']} bytes) exceeded")
        if reply["op"] == "reply":
            if "value" in reply:
                return self._value(reply["value"])
            if "raised" in reply:
                try:
                    raise rebuild(reply["raised"])
                except ProtocolError as exc:
                    self._end("crashed", f"the candidate's process broke the protocol: {exc}")
            if "refused" in reply and type(reply["refused"]) is str:
                raise NotPlainData(f"returned {reply['refused'][:DETAIL_CHARS]}")
        self._end("crashed", "the candidate's process broke the protocol: an unknown reply")

    def _value(self, data: Any) -> Any:
        try:
            return decode(data, self._remote)
        except ProtocolError as exc:
            self._end("crashed", f"the candidate's process broke the protocol: {exc}")

    def _end(self, status: str, detail: str) -> NoReturn:
        self.ended = Ended(status, detail)
        raise self.ended

    def _remote(self, fields: Handle) -> Remote:
        kind = RemoteCallable if fields["callable"] else Remote
        return kind(self, fields["id"], fields["type"])

    def _keep(self, value: Any) -> Handle:
        """A handle for an object of the suite's the worker may call back (a clock): a
        positive id."""
        if isinstance(value, Remote):  # the worker's own object (a negative id) goes back
            return {"id": value._lb_id, "type": value._lb_type, "callable": False}
        number = len(self.suite_objects) + 1
        self.suite_objects[number] = value
        return {"id": number, "type": type(value).__name__, "callable": callable(value)}

    def _serve(self, request: dict[str, Any]) -> dict[str, Any]:
        """The worker calls back a function of the suite's, with plain data or its own
        objects (handles) as arguments."""
        target = self.suite_objects.get(request.get("target", 0))
        try:
            if request.get("kind") != "call" or target is None or request.get("method"):
                raise ProtocolError("a call back of something the suite did not pass")
            args = [decode(a, self._remote) for a in request.get("args", ())]
            kwargs = {str(k): decode(v, self._remote) for k, v in request.get("kwargs", ())}
        except (ProtocolError, TypeError, ValueError) as exc:
            return {"op": "reply", "raised": exception_info(TypeError(str(exc)))}
        try:
            value = target(*args, **kwargs)
        except Ended:
            raise
        except BaseException as exc:
            return {"op": "reply", "raised": exception_info(exc)}
        try:
            return {"op": "reply", "value": encode(value, self._keep, nested=True)}
        except NotPlainData as exc:
            return {"op": "reply", "refused": str(exc)}


class Remote:
    """An object of the candidate's, left in its worker: calls cross, comparisons never."""

    __slots__ = ("_lb_id", "_lb_type", "_lb_worker")

    def __init__(self, worker: Worker, id_: int, type_: str) -> None:
        self._lb_worker, self._lb_id, self._lb_type = worker, id_, type_

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)  # probes such as copy's and pickle's do not cross
        return self._lb_worker.getattr(self._lb_id, name)

    def _lb_method(self, name: str, *args: Any) -> Any:
        return self._lb_worker.call(self._lb_id, name, args, {})

    def __len__(self) -> int:
        return self._lb_method("__len__")  # type: ignore[no-any-return]

    def __getitem__(self, key: Any) -> Any:
        return self._lb_method("__getitem__", key)

    def __contains__(self, item: Any) -> bool:
        return self._lb_method("__contains__", item) is True

    def __iter__(self) -> Any:
        return self._lb_method("__iter__")

    def __next__(self) -> Any:
        return self._lb_method("__next__")

    def __repr__(self) -> str:
        return f"a {self._lb_type} object (not plain data, so not compared)"

    def _lb_refuse(self, *args: Any) -> Any:
        raise NotPlainData(f"returned {self!r}")

    # guard: object-candidate-never-compared
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _lb_refuse
    __hash__ = __bool__ = _lb_refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _lb_refuse
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _lb_refuse
    __pow__ = __rpow__ = __neg__ = __pos__ = __abs__ = __round__ = _lb_refuse
    __int__ = __float__ = __complex__ = __index__ = _lb_refuse


class RemoteCallable(Remote):
    __slots__ = ()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._lb_worker.call(self._lb_id, None, args, kwargs)
