"""JSON on a run's hot path: orjson where it can, the standard library where it refuses."""

import json

import orjson
import pytest

from loopbench.harness import fast_json


def test_what_orjson_writes_reads_back_as_the_standard_librarys_does():
    value = {"model": "m", "messages": [{"role": "user", "content": "Gdańsk, 🚢"}], "n": 1.5}
    assert json.loads(fast_json.dumps(value)) == json.loads(json.dumps(value)) == value


def test_what_orjson_refuses_is_written_and_read_as_before():
    lone = {"text": "x\ud800", 1: 2**70}
    assert fast_json.dumps(lone) == json.dumps(lone).encode()
    with pytest.raises(orjson.JSONEncodeError):  # the writer makes it valid and writes again
        fast_json.dumps_text(lone)
    assert fast_json.loads(b'{"a": "\\ud800", "b": NaN}')["a"] == "\ud800"
    with pytest.raises(ValueError):
        fast_json.loads(b"not json")


@pytest.mark.parametrize("data", [b'{"n": 18446744073709551616}', "[-123456789012345678901234]"])
def test_an_integer_past_64_bits_is_read_whole_not_as_a_float(data):
    assert repr(fast_json.loads(data)) == repr(json.loads(data))  # an int, not 1.8e19
    assert fast_json.loads(b'{"n": 18446744073709551615}') == {"n": 2**64 - 1}
