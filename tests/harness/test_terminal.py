"""Text from data made safe to print: control characters shown, error lines one short line."""

import io
import sys

import pytest

from loopbench.harness.streams import PrintableStream, printing_printably, unescaped
from loopbench.harness.terminal import ERROR_CHARS, error_line, one_line, printable

TITLE = "\x1b]0;pwn\x07"  # sets the terminal window's title
CLEAR = "\x1b[2J"  # clears the screen

#: Every character that acts on a terminal, or shows text in another order than stored.
ACTIVE = [chr(c) for c in [*range(0x20), 0x7F, *range(0x80, 0xA0)]]
ACTIVE += ["\u202e", "\u2066", "\u200f", "\u2028", "\ufeff", "\ud800"]


@pytest.mark.parametrize("char", ACTIVE, ids=lambda c: f"U+{ord(c):04X}")
def test_every_control_character_becomes_its_escape_in_a_line(char):
    shown = one_line(f"a{char}b")
    assert shown.isprintable() and shown.startswith("a\\") and shown.endswith("b")


def test_escapes_are_shown_as_repr_writes_them_not_dropped():
    assert one_line(f"id{TITLE}{CLEAR}") == "id\\x1b]0;pwn\\x07\\x1b[2J"
    assert one_line("a\nb\tc\rd") == "a\\nb\\tc\\x0dd"
    assert one_line("\u202eevil") == "\\u202eevil"


def test_printable_keeps_newlines_and_tabs_of_a_block():
    assert printable(f"line 1\n\tline 2{TITLE}\r") == "line 1\n\tline 2\\x1b]0;pwn\\x07\\x0d"


def test_ordinary_text_is_left_as_it_is_and_escaping_twice_changes_nothing():
    text = "direct:prompts=terse · 12% → 15% «é» 日本 \\x1b"
    assert one_line(text) == printable(text) == text
    once = one_line(f"{TITLE}\n{CLEAR}")
    assert one_line(once) == printable(once) == once


def test_a_short_error_line_is_only_made_one_line():
    assert error_line("tasks.csv: line 3: bad\nrow") == "tasks.csv: line 3: bad\\nrow"


def test_a_long_error_line_keeps_its_start_and_end_and_says_how_much_was_cut():
    text = "tasks.jsonl: line 7: field 'id': " + "x" * 10_000 + "; give a shorter id"
    line = error_line(text)
    assert len(line) <= ERROR_CHARS
    assert line.startswith("tasks.jsonl: line 7: field 'id': xxx")
    assert line.endswith("xxx; give a shorter id")
    start, note, end = line.split(" … ")
    assert note == f"({len(text) - len(start) - len(end):,} characters cut)"
    assert error_line(line) == line  # cut once


def test_a_long_error_line_is_cleaned_before_it_is_cut_and_only_at_its_ends():
    seen: list[int] = []

    def clean(text: str) -> str:
        seen.append(len(text))
        return text.replace("sk-secret", "[redacted]")

    line = error_line("sk-secret " + "y" * 100_000 + " sk-secret", clean=clean)
    assert "sk-secret" not in line and line.count("[redacted]") == 2
    assert max(seen) <= 4 * ERROR_CHARS


def test_escapes_in_a_long_error_line_count_at_their_shown_width():
    line = error_line("f.toml: " + TITLE * 1000)
    assert len(line) <= ERROR_CHARS and "\x1b" not in line and "\x07" not in line
    assert line.startswith("f.toml: \\x1b]0;pwn\\x07\\x1b]0;pwn\\x07")


def test_an_error_line_of_143_megabytes_is_one_short_line():
    text = "big.jsonl: line 1: " + "\n\x1b[2J" * (143 * 1024 * 1024 // 5)
    line = error_line(text)
    assert len(line) <= ERROR_CHARS and "\n" not in line and "\x1b" not in line
    assert line.startswith("big.jsonl: line 1: \\n\\x1b[2J")
    assert "characters cut" in line


def test_a_printable_stream_escapes_what_is_written_and_keeps_the_raw_one_below():
    raw = io.StringIO()
    stream = PrintableStream(raw)
    assert stream.write(f"{TITLE}ok\n") == len(f"{TITLE}ok\n")
    stream.writelines([CLEAR, "\n"])
    assert raw.getvalue() == "\\x1b]0;pwn\\x07ok\n\\x1b[2J\n"
    assert unescaped(stream) is raw and unescaped(raw) is raw
    assert stream.getvalue() == raw.getvalue()  # anything else is the stream's own


def test_printing_printably_covers_stdout_and_stderr_and_puts_them_back(capsys):
    before = sys.stdout, sys.stderr
    with printing_printably():
        print(f"out {TITLE}")
        print(f"err {CLEAR}", file=sys.stderr)
    assert (sys.stdout, sys.stderr) == before
    said = capsys.readouterr()
    assert said.out == "out \\x1b]0;pwn\\x07\n" and said.err == "err \\x1b[2J\n"
