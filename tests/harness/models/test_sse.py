import pytest

from loopbench.harness.models.sse import ServerEvent, SSEError, SSEReader


def read(*pieces: bytes, max_line: int = 1 << 20) -> list[ServerEvent]:
    reader = SSEReader(max_line)
    return [event for piece in pieces for event in reader.feed(piece)]


def test_events_are_their_data_lines_joined_and_their_names():
    body = b'event: ping\ndata: {"a": 1}\n\ndata: one\ndata: two\n\n'
    assert read(body) == [ServerEvent("ping", '{"a": 1}'), ServerEvent("message", "one\ntwo")]


def test_pieces_split_anywhere_read_as_the_whole():
    body = "data: caf\u00e9 \u2028 ok\r\n\r\nevent: x\rdata:y\r\r: a comment\n\ndata: [DONE]\n\n"
    whole = read(body.encode())
    assert whole == [
        ServerEvent("message", "caf\u00e9 \u2028 ok"),
        ServerEvent("x", "y"),
        ServerEvent("message", "[DONE]"),
    ]
    encoded = body.encode()
    assert read(*(encoded[i : i + 1] for i in range(len(encoded)))) == whole


def test_comments_ids_and_unknown_fields_are_not_events():
    assert read(b": keep-alive\n\nid: 7\nretry: 10\nfoo: bar\n\n") == []


def test_an_event_cut_off_by_the_end_is_not_an_event():
    assert read(b"data: whole\n\ndata: half") == [ServerEvent("message", "whole")]


def test_bytes_that_are_not_utf8_are_refused():
    with pytest.raises(SSEError, match="not UTF-8"):
        read(b"data: \xff\n\n")


def test_an_endless_line_is_refused_before_the_body_limit():
    reader = SSEReader(max_line=100)
    reader.feed(b"data: " + b"x" * 90)
    with pytest.raises(SSEError, match="longer than 100"):
        reader.feed(b"x" * 20)
