"""Plain data across the sandbox's pipe (issue 20): what crosses keeps its exact type and
value, anything with behaviour of its own is refused or stays behind a handle, and whatever
the candidate's side sends that the protocol does not allow is refused without harm."""

import math
import os
import threading
from collections import Counter, OrderedDict, defaultdict
from enum import IntEnum

import pytest

from loopbench.sandbox.plain_data import (
    DEPTH,
    MESSAGE_BYTES,
    MESSAGE_VALUES,
    Gone,
    NotPlainData,
    ProtocolError,
    decode,
    encode,
    exception_info,
    rebuild,
    receive,
    send,
    too_many_values,
)


def crossed(value):
    """``value`` sent over a real pipe and read back."""
    read, write = os.pipe()
    try:
        send(write, {"op": "reply", "value": encode(value)})
        return decode(receive(read)["value"])
    finally:
        os.close(read)
        os.close(write)


def same(a, b) -> bool:
    """Equal with the same types all the way down (so 1 is not True, () is not [])."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1, a) == math.copysign(1, b)
        )
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return a == b


VALUES = [
    None,
    True,
    False,
    0,
    1,
    -(2**63) + 1,
    2**63,
    -(2**200),
    10**5000,
    0.0,
    -0.0,
    1.0,
    float("nan"),
    float("inf"),
    -float("inf"),
    1e-320,
    "",
    "naïve \ud800 \x00",
    b"\x00\xff",
    complex(1.5, -0.0),
    [],
    (),
    (1,),
    [1, (2, [3])],
    {1, "1", (1,)},
    frozenset({2}),
    {"a": 1, 1: "a", (1, 2): [3], None: {frozenset(): ()}},
    [True, 1, 1.0],
]


@pytest.mark.parametrize(
    "value", VALUES, ids=[type(v).__name__ + str(i) for i, v in enumerate(VALUES)]
)
def test_values_cross_with_their_exact_types(value):
    assert same(crossed(value), value)


def test_bool_int_float_and_containers_stay_apart():
    assert [type(v) for v in crossed([True, 1, 1.0, (), [], set(), {}])] == [
        bool,
        int,
        float,
        tuple,
        list,
        set,
        dict,
    ]


class Text(str):
    def __eq__(self, other):
        return True

    __hash__ = str.__hash__


class Number(IntEnum):
    ONE = 1


class Mapping(dict):
    def __eq__(self, other):
        return True


@pytest.mark.parametrize(
    "value",
    [Text("x"), Number.ONE, Mapping(a=1), object(), iter([1]), type, len],
    ids=["str-subclass", "IntEnum", "dict-subclass", "object", "iterator", "class", "builtin"],
)
def test_anything_with_behaviour_of_its_own_is_refused(value):
    with pytest.raises(NotPlainData):
        encode(value)
    with pytest.raises(NotPlainData):
        encode([value])
    assert encode(value, lambda v: {"id": -1, "type": "T", "callable": False}) == {
        "handle": {"id": -1, "type": "T", "callable": False}
    }
    with pytest.raises(NotPlainData):  # a handle inside a value only when asked for
        encode([value], lambda v: {"id": -1, "type": "T", "callable": False})


def test_the_dicts_of_collections_cross_as_the_dict_they_hold():
    """What HumanEval's harness accepts where a dict is expected (a Counter), this one does."""
    for value in (Counter("abca"), OrderedDict(b=1, a=2), defaultdict(int, a=1)):
        assert same(crossed([value]), [dict(value)])
    fake = type("Counter", (dict,), {"__module__": "collections", "__eq__": lambda s, o: True})
    assert same(crossed(fake(a=1)), {"a": 1})  # whatever claims it: a plain dict arrives


def test_nesting_and_size_are_bounded_both_ways():
    deep: list = []
    for _ in range(DEPTH + 1):
        deep = [deep]
    with pytest.raises(NotPlainData, match="nested more than"):
        encode(deep)
    data: list = []
    for _ in range(DEPTH + 1):
        data = [data]
    with pytest.raises(ProtocolError):
        decode(data)
    with pytest.raises(NotPlainData, match="over the"):
        encode("x" * (MESSAGE_BYTES + 1))


@pytest.mark.parametrize(
    "data",
    [
        {"tuple": [1], "set": [1]},
        {"object": []},
        {"int": "0x1"},
        2**70,
        {"set": [[1]]},
        {"dict": [[[1], 2]]},
        {"bytes": "not base64!"},
        {"complex": [1, 2]},
        {"handle": {"id": 1, "type": "T", "callable": False}},
    ],
    ids=[
        "two-tags",
        "unknown-tag",
        "small-int-as-hex",
        "big-int-as-number",
        "list-in-set",
        "list-as-key",
        "bad-base64",
        "complex-of-ints",
        "unasked-handle",
    ],
)
def test_what_encode_cannot_give_is_refused(data):
    with pytest.raises(ProtocolError):
        decode(data)


def message_from(raw: bytes):
    read, write = os.pipe()
    os.write(write, raw)
    os.close(write)
    try:
        return receive(read)
    finally:
        os.close(read)


def test_messages_that_are_not_messages_are_refused():
    with pytest.raises(Gone):
        message_from(b"")
    with pytest.raises(ProtocolError, match="over the"):  # refused before anything is read
        message_from((MESSAGE_BYTES + 1).to_bytes(4, "big"))
    with pytest.raises(ProtocolError, match="cut short"):
        message_from((10).to_bytes(4, "big") + b"{}")
    with pytest.raises(ProtocolError, match="not JSON"):
        message_from((3).to_bytes(4, "big") + b"{x}")
    with pytest.raises(ProtocolError, match="not an operation"):
        message_from((2).to_bytes(4, "big") + b"[]")


class ParseError(ValueError):
    pass


def test_an_exception_crosses_as_its_built_in_type_with_its_name():
    again = rebuild(exception_info(ParseError("bad input")))
    assert type(again) is ValueError
    assert (str(again), again.remote_type) == ("bad input", "ParseError")
    assert type(rebuild(exception_info(KeyError("k")))) is KeyError


def test_a_class_named_like_a_built_in_is_not_that_built_in():
    fake = type("ValueError", (Exception,), {"__module__": "solution"})
    again = rebuild(exception_info(fake("no")))
    assert type(again) is Exception
    assert again.remote_type == "solution.ValueError"


def test_a_built_in_that_takes_other_arguments_falls_back_to_its_base():
    info = exception_info(UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad"))
    again = rebuild(info)
    assert isinstance(again, UnicodeError) and again.remote_type == "UnicodeDecodeError"


@pytest.mark.parametrize(
    "info",
    [None, {"type": "E"}, {"type": 1, "module": "m", "builtin": "E", "message": ""}],
    ids=["none", "missing-fields", "not-text"],
)
def test_a_malformed_exception_is_refused(info):
    with pytest.raises(ProtocolError):
        rebuild(info)


def test_an_unknown_built_in_is_a_base_exception():
    info = {"type": "X", "module": "m", "builtin": "print", "message": "m"}
    assert type(rebuild(info)) is BaseException


def received(body: bytes):
    """A message of ``body`` read from a pipe that a thread writes it to."""
    read, write = os.pipe()

    def feed() -> None:
        with os.fdopen(write, "wb") as pipe:
            pipe.write(len(body).to_bytes(4, "big") + body)

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        return receive(read)
    finally:
        writer.join()
        os.close(read)


def test_a_message_of_too_many_values_is_refused_before_it_is_parsed():
    """Within the bytes a message may hold, 5.6 million empty lists (issue 28: the trusted
    runner peaked at 794 MB building them)."""
    flood = b'{"op":"reply","value":[' + b"[]," * (MESSAGE_VALUES + 1) + b"[]]}"
    assert len(flood) < MESSAGE_BYTES
    with pytest.raises(ProtocolError, match=f"more than the {MESSAGE_VALUES} values allowed"):
        received(flood)
    fits = b'{"op":"reply","value":[' + b"0," * (MESSAGE_VALUES - 10) + b"0]}"
    assert len(received(fits)["value"]) == MESSAGE_VALUES - 9


def test_commas_and_brackets_inside_strings_are_not_values():
    text = "[,{:" * MESSAGE_VALUES  # four marks a character, in one string: one value
    tricky = ['\\"[,', text, '"\\']  # escaped quotes and backslashes next to the marks
    assert not too_many_values(json_of(tricky))
    assert too_many_values(json_of([0] * (MESSAGE_VALUES + 1)))
    assert too_many_values(json_of(["ab"] * (MESSAGE_VALUES + 1)))
    assert received(b'{"op":"reply","value":' + json_of(tricky) + b"}")["value"] == tricky


def test_an_honest_value_of_too_many_values_is_not_sent():
    read, write = os.pipe()
    os.set_blocking(write, False)  # nothing reads it: were it sent, the write would fail at once
    try:
        with pytest.raises(NotPlainData, match=f"more than the {MESSAGE_VALUES} values"):
            send(write, {"op": "reply", "value": encode([[]] * (MESSAGE_VALUES + 1))})
    finally:
        os.close(read)
        os.close(write)


def json_of(value) -> bytes:
    import json

    return json.dumps(value, separators=(",", ":")).encode("ascii")
