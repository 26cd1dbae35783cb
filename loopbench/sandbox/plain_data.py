"""Plain data across the pipe between the test runner and the candidate's worker (the standard
library and ``loopbench.harness.errors`` only).

The test runner (``loopbench/sandbox/suite_runner.py``, trusted) and the candidate's worker
(``loopbench/sandbox/candidate_worker.py``, sandboxed) share this module, and nothing else: each
call of a candidate's function, its arguments and its result or exception cross as one message.

A message is a 4-byte big-endian length and that many bytes of JSON: at most MESSAGE_BYTES,
holding at most MESSAGE_VALUES values (counted before any is built: a reply of 16 MB of
empty lists would otherwise be 5 million objects, twice, in the trusted test runner), nested
no deeper than the interpreter's recursion limit as it is parsed and DEPTH as it is decoded.

Values are typed so that nothing is lost or confused: None, bool, str, float (nan, inf and
-0.0 too) and int (past 2**63, ``{"int": hex}``) as JSON; a list as a JSON list;
``{"tuple": [...]}``, ``{"set": [...]}``, ``{"frozenset": [...]}``,
``{"dict": [[key, value], ...]}``, ``{"bytes": base64}``, ``{"complex": [re, im]}``; and
``{"handle": {"id", "type", "callable"}}`` for an object that stays on its side (a
candidate's class or instance; a callable the suite passes). Only these exact types are
plain data: a subclass of a built-in type, or any object with behaviour of its own, is a
handle or refused, never rebuilt, so it can never decide a comparison. One exception: the
dicts of ``collections`` (Counter, OrderedDict, defaultdict) cross as the dict they hold,
which is what they equal anyway (HumanEval's harness passes a Counter where a dict is
expected, and so does this one); whatever sends them, what arrives is a plain dict.

An exception crosses as its type's name, its module, the first built-in exception in its
class hierarchy and its message (``exception_info``); the other side raises that built-in
type with the message, the original name noted for the report (``rebuild``).
"""

from __future__ import annotations

import _json
import binascii
import builtins
import os

from loopbench.harness.errors import HarnessFault

TYPE_CHECKING = False  # typing costs a tenth of this process's start: for mypy only
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, ClassVar

    Handle = dict[str, Any]  # {"id": int, "type": str, "callable": bool}

MESSAGE_BYTES = 16 * 1024 * 1024  # the most one message may hold
MESSAGE_VALUES = 1_000_000  # the most values (each container, string, number) one may hold
DEPTH = 100  # the deepest nesting of containers in a value
BIG = 2**63  # ints at or past this (either sign) travel as hex text
NAME_CHARS = 200  # the most characters of a type's name
MESSAGE_CHARS = 1000  # the most characters of an exception's message


class NotPlainData(HarnessFault):
    """A value that cannot cross as plain data; its message says why."""


class ProtocolError(HarnessFault):
    """The other side sent what the protocol does not allow."""


class Gone(HarnessFault):
    """The other side closed its end: its process has ended."""


# Values.


def encode(value: Any, handle: Callable[[Any], Handle] | None = None, nested: bool = False) -> Any:
    """``value`` as JSON-ready plain data. An object that is not plain data becomes
    ``handle(value)`` (at the top only, unless ``nested``), else NotPlainData."""
    return _encode(value, handle, nested, 0)


def _encode(value: Any, handle: Callable[[Any], Handle] | None, nested: bool, depth: int) -> Any:
    kind = type(value)
    if value is None or kind is bool or kind is float:
        return value
    if kind is str:
        _fits(len(value), "characters")
        return value
    if kind is int:
        return value if -BIG < value < BIG else {"int": hex(value)}
    if kind is complex:
        return {"complex": [value.real, value.imag]}
    if kind is bytes:
        _fits(len(value), "bytes")
        return {"bytes": binascii.b2a_base64(value, newline=False).decode("ascii")}
    if kind in (list, tuple, set, frozenset, dict):
        # guard: values-nested-at-most-depth
        if depth >= DEPTH:
            raise NotPlainData(f"a value nested more than {DEPTH} deep")
        _fits(len(value), "items")
        inner = handle if nested else None
        if kind is dict:
            pairs = [
                [_encode(k, inner, nested, depth + 1), _encode(v, inner, nested, depth + 1)]
                for k, v in value.items()
            ]
            return {"dict": pairs}
        items = [_encode(item, inner, nested, depth + 1) for item in value]
        return items if kind is list else {kind.__name__: items}
    if isinstance(value, dict) and getattr(kind, "__module__", "") == "collections":
        return _encode(dict(value), handle, nested, depth)  # Counter, OrderedDict, defaultdict
    if handle is not None:
        return {"handle": handle(value)}
    raise NotPlainData(f"a {_type_name(value)} object is not plain data")


def decode(data: Any, handle: Callable[[Handle], Any] | None = None, nested: bool = False) -> Any:
    """The value ``encode`` gave, rebuilt from built-in types only; a handle becomes
    ``handle(its fields)`` (at the top only, unless ``nested``). ProtocolError when it is not
    what ``encode`` can give."""
    try:
        return _decode(data, handle, nested, 0)
    except (TypeError, ValueError, KeyError, IndexError, RecursionError, MemoryError) as exc:
        raise ProtocolError(f"not plain data: {type(exc).__name__}") from None


def _decode(data: Any, handle: Callable[[Handle], Any] | None, nested: bool, depth: int) -> Any:
    kind = type(data)
    if data is None or kind is bool or kind is str or kind is float:
        return data
    if kind is int:
        if not -BIG < data < BIG:
            raise ValueError("a big int sent as a number")
        return data
    if depth >= DEPTH:
        raise ValueError("nested too deep")
    inner = handle if nested else None
    if kind is list:
        return [_decode(item, inner, nested, depth + 1) for item in data]
    if kind is not dict or len(data) != 1:
        raise ValueError("not a tagged value")
    ((tag, body),) = data.items()
    if tag == "handle" and handle is not None:
        return handle(_handle_fields(body))
    if tag == "int" and type(body) is str and body.lstrip("-").startswith("0x"):
        number = int(body, 16)
        if -BIG < number < BIG:
            raise ValueError("a small int sent as hex")
        return number
    if tag == "bytes" and type(body) is str:
        return binascii.a2b_base64(body.encode("ascii"), strict_mode=True)
    if tag == "complex" and type(body) is list and len(body) == 2:
        real, imag = body
        if type(real) is float and type(imag) is float:
            return complex(real, imag)
    if type(body) is not list:
        raise ValueError(f"an unknown tag {tag!r}")
    if tag == "dict":
        pairs = [(_decode(k, inner, nested, depth + 1), _decode(v, inner, nested, depth + 1))
                 for k, v in body]  # fmt: skip
        return dict(pairs)
    containers: dict[str, Callable[[list[Any]], Any]] = {
        "tuple": tuple,
        "set": set,
        "frozenset": frozenset,
    }
    if tag not in containers:
        raise ValueError(f"an unknown tag {tag!r}")
    return containers[tag]([_decode(item, inner, nested, depth + 1) for item in body])


def _handle_fields(body: Any) -> Handle:
    if (
        type(body) is dict
        and type(body.get("id")) is int
        and type(body.get("type")) is str
        and type(body.get("callable")) is bool
    ):
        return {"id": body["id"], "type": body["type"][:NAME_CHARS], "callable": body["callable"]}
    raise ValueError("a malformed handle")


def _fits(size: int, of: str) -> None:
    """Refuses at once what could never fit in a message (before building its JSON)."""
    if size > MESSAGE_BYTES:
        raise NotPlainData(f"a value of {size} {of}, over the {MESSAGE_BYTES} a message may hold")


def _type_name(value: Any) -> str:
    try:
        return str(type(value).__qualname__)[:NAME_CHARS]
    except BaseException:  # a metaclass may make even this raise
        return "unnamed"


# Exceptions.


def exception_info(exc: BaseException) -> dict[str, str]:
    """What crosses of an exception: its type's name and module, the first built-in exception
    among its classes, and its message (``str``, which code of its own may make raise)."""
    kind = type(exc)
    # guard: exception-first-built-class-identity
    base = next(
        (c for c in kind.__mro__ if getattr(builtins, c.__name__, None) is c),
        BaseException,
    )
    try:
        message = str(exc)[:MESSAGE_CHARS]
    except BaseException:
        message = ""
    try:
        module = str(kind.__module__)[:NAME_CHARS]
    except BaseException:
        module = ""
    return {"type": _type_name(exc), "module": module, "builtin": base.__name__, "message": message}


def rebuild(info: Any) -> BaseException:
    """The built-in exception ``info`` names, with its message; ``remote_type`` on it names the
    type the other side raised (for the report). ProtocolError when ``info`` is malformed."""
    fields = ("type", "module", "builtin", "message")
    if type(info) is not dict or any(type(info.get(f)) is not str for f in fields):
        raise ProtocolError("a malformed exception")
    kind = getattr(builtins, info["builtin"], None)
    if not (isinstance(kind, type) and issubclass(kind, BaseException)):
        kind = BaseException
    message = info["message"][:MESSAGE_CHARS]
    for base in kind.__mro__:  # some built-ins take other arguments (UnicodeDecodeError)
        try:
            exc: BaseException = base(message)
            break
        except TypeError:
            continue
    name = info["type"][:NAME_CHARS]
    shadows = isinstance(getattr(builtins, name, None), type) and info["module"] != "builtins"
    exc.remote_type = f"{info['module']}.{name}" if shadows else name  # type: ignore[attr-defined]
    return exc


# Messages: JSON through the json package's own C encoder and scanner, without its Python
# layer (importing json imports re and enum, a third of each process's start).

HEADER = 4
CONSTANTS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": -float("inf")}


def _unencodable(value: object) -> object:
    raise TypeError(f"not JSON-ready: a {type(value).__name__}")


_ENCODE = _json.make_encoder(
    None, _unencodable, _json.encode_basestring_ascii, None, ":", ",", False, False, True
)


class _Strict:
    """What the C scanner reads its options from: strict strings, plain types only."""

    strict = True
    object_hook = object_pairs_hook = None
    parse_float, parse_int, parse_constant = float, int, CONSTANTS.__getitem__
    memo: ClassVar[dict[str, str]] = {}


_SCAN = _json.make_scanner(_Strict())  # type: ignore[arg-type]  # it reads these attributes


def dumps(message: Any) -> bytes:
    """JSON-ready data (what ``encode`` gives, in dicts of str keys) as ASCII bytes."""
    return "".join(_ENCODE(message, 0)).encode("ascii")


def loads(data: bytes) -> Any:
    """One JSON value and nothing after it; ProtocolError for anything else."""
    try:
        text = data.decode("ascii")
        value, end = _SCAN(text, 0)
    except (StopIteration, ValueError, SystemError, RecursionError, MemoryError) as exc:
        raise ProtocolError(f"a message that is not JSON ({type(exc).__name__})") from None
    finally:
        _Strict.memo.clear()
    if end != len(text):
        raise ProtocolError("a message that is not JSON (text after its value)")
    return value


def send(fd: int, message: dict[str, Any]) -> None:
    """Writes one message; NotPlainData when it is over MESSAGE_BYTES or MESSAGE_VALUES
    (nothing is written)."""
    data = dumps(message)
    if len(data) > MESSAGE_BYTES:
        raise NotPlainData(f"{len(data)} bytes, over the {MESSAGE_BYTES} one message may hold")
    # guard: value-too-many-values-not
    if too_many_values(data):
        raise NotPlainData(f"more than the {MESSAGE_VALUES} values one message may hold")
    view = memoryview(len(data).to_bytes(HEADER, "big") + data)
    while view:
        view = view[os.write(fd, view) :]


def receive(fd: int) -> dict[str, Any]:
    """Reads one message: Gone at the end of the pipe, ProtocolError for anything else that is
    not a message (too long, torn, not a JSON object)."""
    size = int.from_bytes(_read(fd, HEADER, at_start=True), "big")
    # guard: message-over-cap-refused-unread
    if size > MESSAGE_BYTES:
        raise ProtocolError(f"a message of {size} bytes, over the {MESSAGE_BYTES} allowed")
    data = _read(fd, size, at_start=False)
    # guard: message-too-many-values-refused
    if too_many_values(data):
        raise ProtocolError(f"a message of more than the {MESSAGE_VALUES} values allowed")
    message = loads(data)
    if type(message) is not dict or type(message.get("op")) is not str:
        raise ProtocolError("a message that is not an operation")
    return message


def too_many_values(data: bytes) -> bool:
    """Whether a message's JSON holds more than MESSAGE_VALUES values, found without building
    any: a value is one, and one more for each comma, colon and opening bracket outside its
    strings. Each count is made only when the cheaper one before it cannot tell (and ``re`` is
    imported only for the last)."""
    if len(data) <= MESSAGE_VALUES:
        return False
    marks = (b",", b":", b"[", b"{")
    if 1 + sum(data.count(mark) for mark in marks) <= MESSAGE_VALUES:
        return False  # even with the marks inside its strings
    # Escaped backslashes first, then escaped quotes: what is left between quotes is a string.
    bare = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    if bare.count(b'"') // 2 > MESSAGE_VALUES:
        return True  # its strings alone
    import re

    # guard: marks-inside-strings-not-values
    bare = re.sub(rb'"[^"]*"', b"", bare)
    return 1 + sum(bare.count(mark) for mark in marks) > MESSAGE_VALUES


def _read(fd: int, size: int, at_start: bool) -> bytes:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            if at_start and left == size:
                raise Gone()
            raise ProtocolError("a message cut short")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


class Peer:
    """One side of the pipe. ``request`` sends a message and waits for its reply, answering
    the other side's requests meanwhile (a call of the candidate may call back a function the
    suite passed it), each through ``serve``."""

    def __init__(
        self, read_fd: int, write_fd: int, serve: Callable[[dict[str, Any]], dict[str, Any]]
    ) -> None:
        self.read_fd, self.write_fd, self.serve = read_fd, write_fd, serve

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        send(self.write_fd, message)
        while True:
            incoming = receive(self.read_fd)
            if incoming["op"] != "request":
                return incoming
            self.answer(incoming)

    def answer(self, request: dict[str, Any]) -> None:
        """Serves one request and sends its reply; a reply too long to send is a refusal."""
        reply = self.serve(request)
        try:
            send(self.write_fd, reply)
        except NotPlainData as exc:
            send(self.write_fd, {"op": "reply", "refused": f"a reply of {exc}"})
