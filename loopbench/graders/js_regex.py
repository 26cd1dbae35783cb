"""JavaScript's regular expressions, as promptfoo's ``regex`` asserts run them: ``new
RegExp(value).test(output)``, no flags.

A pattern is translated into the ``regex`` module's syntax (its ``VERSION1``, ASCII word
and digit classes), so that it is matched under the answer's time limit as every regex a
task set gives is (loopbench/graders/user_regex.py), and matches what JavaScript matches: ``.``
stops at ``\\n``, ``\\r``, U+2028 and U+2029; ``$`` is the very end (Python's also matches
before a final newline); ``\\d``, ``\\w`` and ``\\b`` are ASCII's, ``\\s`` JavaScript's
list of spaces; a backreference to a group that has not matched matches nothing; and the
text is read as JavaScript reads it without the ``u`` flag, in UTF-16 code units (an emoji
is two). Named groups, ``(?<city>...)``, and their references, ``\\k<city>``, are read.

What JavaScript refuses is refused (``NotARegex``, saying why), and so is what it would read
otherwise than a Python reader meant: inline flags ``(?i)``, ``(?P<name>...)``, atomic
groups and possessive repeats; ``\\A``, ``\\Z`` and any escape of a letter JavaScript does
not know (to it, ``\\Z`` is the letter Z); ``\\p{...}`` and ``\\u{...}`` (read so only with
the ``u`` flag, which promptfoo does not set); a reference to a group the pattern lacks;
legacy octal escapes.
"""

from __future__ import annotations

import functools
import string
import sys
from array import array
from dataclasses import dataclass

import regex

from loopbench.graders.answer_time import TooSlow, time_left
from loopbench.graders.js_regex_refusals import not_a_group, unknown_escape
from loopbench.graders.user_regex import MAX_COPIES, NotARegex, shown

#: JavaScript's ``\\s``: its white space and line terminators (ECMA-262 WhiteSpace and
#: LineTerminator), as a set's items.
_SPACES = r"\t\n\x0b\x0c\r\x20\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_DOT = r"[^\n\r\u2028\u2029]"
_SIMPLE = {"n": "\\n", "r": "\\r", "t": "\\t", "v": "\\x0b", "f": "\\x0c"}
_CLASSES = {"d": "\\d", "D": "\\D", "w": "\\w", "W": "\\W"}
_FLAGS = regex.VERSION1 | regex.ASCII


def units(text: str) -> str:
    """``text`` as JavaScript holds it: one character per UTF-16 code unit (a character
    past U+FFFF as its two surrogates)."""
    if max(text, default="\0") <= "\uffff":
        return text
    code_units = array("H", text.encode("utf-16-le", "surrogatepass"))
    if sys.byteorder == "big":
        code_units.byteswap()
    return "".join(map(chr, code_units))


def compiled(pattern: str) -> regex.Pattern[str]:
    """``pattern`` (JavaScript's) ready to match; ``NotARegex`` saying why when JavaScript
    refuses it or it would be read otherwise than meant."""
    return _compiled(pattern)


@functools.lru_cache(maxsize=512)
def _compiled(pattern: str) -> regex.Pattern[str]:
    translated = translate(pattern)
    try:
        return regex.compile(translated, _FLAGS)
    except (regex.error, RecursionError, OverflowError) as exc:
        raise NotARegex(str(exc)) from None


def search(pattern: str, text: str) -> bool:
    """Whether ``new RegExp(pattern).test(text)``; ``TooSlow`` past the answer's time."""
    where = compiled(pattern)
    try:
        # guard: js-regex-search-under-answer-time
        return where.search(units(text), timeout=time_left(shown(pattern))) is not None
    except TimeoutError:
        raise TooSlow(shown(pattern)) from None


def translate(pattern: str) -> str:
    """``pattern`` in the ``regex`` module's ``VERSION1`` syntax (with ``regex.ASCII``)."""
    reader = _Reader(units(pattern), _groups(units(pattern)))
    text, pieces = reader.disjunction()
    if reader.at < len(reader.p):  # only an unmatched ")" stops a disjunction early
        raise NotARegex("unmatched ')'")
    # guard: js-regex-counted-repeats-past-max
    if pieces > MAX_COPIES:
        raise NotARegex(
            f"its counted repeats make {pieces:,} copies of what they repeat, more than "
            f"{MAX_COPIES:,}; repeat fewer times, or use * or + (matched without copies)"
        )
    return text


@dataclass
class _Groups:
    count: int
    names: dict[str, int]


def _groups(p: str) -> _Groups:
    """The pattern's capturing groups: how many, and the number of each named one."""
    count, names, at, in_class = 0, {}, 0, False
    while at < len(p):
        char = p[at]
        if char == "\\":
            at += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(" and not p.startswith("(?", at):
            count += 1
        elif char == "(" and p.startswith("(?<", at) and p[at + 3 : at + 4] not in ("=", "!"):
            count += 1
            name = p[at + 3 : p.find(">", at)] if ">" in p[at:] else ""
            if name in names:
                raise NotARegex(f"duplicate capture group name {name!r}")
            names[name] = count
        at += 1
    return _Groups(count, names)


class _Reader:
    """Reads a JavaScript pattern (UTF-16 code units) into ``regex`` syntax, counting the
    pieces its counted repeats compile to (loopbench/graders/user_regex.py's ``MAX_COPIES``)."""

    def __init__(self, p: str, groups: _Groups) -> None:
        self.p, self.at, self.groups = p, 0, groups

    def peek(self, ahead: int = 0) -> str:
        at = self.at + ahead
        return self.p[at] if at < len(self.p) else ""

    def disjunction(self) -> tuple[str, int]:
        parts, pieces = [], 0
        while True:
            text, counted = self.alternative()
            parts.append(text)
            pieces += counted
            if self.peek() != "|":
                return "|".join(parts), pieces
            self.at += 1

    def alternative(self) -> tuple[str, int]:
        out, pieces = [], 0
        while self.peek() not in ("", "|", ")"):
            text, counted, repeatable = self.term()
            if (quantified := self.quantifier()) is not None:
                # guard: js-regex-nothing-to-repeat-refused
                if not repeatable:
                    raise NotARegex(
                        f"nothing to repeat at position {self.at} (an assertion such as ^, $, "
                        "\\b or a lookaround is not repeated here)"
                    )
                suffix, times = quantified
                text, counted = f"(?:{text}){suffix}", max(times, 1) * counted
            out.append(text)
            pieces += counted
        return "".join(out), pieces

    def quantifier(self) -> tuple[str, int] | None:
        """A repeat at the reader's place (``*``, ``{2,5}?``...), and the copies it makes;
        None when there is none. A repeat after it is refused (possessive ``a++``)."""
        found = self._repeat()
        if found is None:
            return None
        if self.peek() == "?":
            self.at += 1
            found = (found[0] + "?", found[1])
        # guard: js-regex-possessive-repeat-refused
        if self._repeat() is not None:
            raise NotARegex(
                f"nothing to repeat at position {self.at} (a possessive repeat such as a++ "
                "is Python's, not JavaScript's)"
            )
        return found

    def _repeat(self) -> tuple[str, int] | None:
        char = self.peek()
        if char in ("*", "+", "?"):
            self.at += 1
            return char, 1
        counted = _braces(self.p, self.at)
        if counted is None:
            return None
        least, most, end = counted
        if most is not None and most < least:
            raise NotARegex("numbers out of order in {} quantifier")
        self.at = end
        bound = "" if most is None else str(most)
        suffix = f"{{{least}}}" if most == least else f"{{{least},{bound}}}"
        return suffix, least if most is None else most

    def term(self) -> tuple[str, int, bool]:
        """One term: its text, its pieces, and whether a repeat may follow it."""
        char = self.peek()
        self.at += 1
        if char == "^":
            return "^", 1, False
        if char == "$":
            return "\\Z", 1, False
        if char == ".":
            return _DOT, 1, True
        if char == "(":
            return self.group()
        if char == "[":
            return self.char_class(), 1, True
        if char == "\\":
            return self.atom_escape()
        if char in "*+?" or (char == "{" and _braces(self.p, self.at - 1) is not None):
            raise NotARegex(f"nothing to repeat at position {self.at - 1}")
        return _literal(char), 1, True

    def group(self) -> tuple[str, int, bool]:
        head = ""
        repeatable = True
        if self.peek() == "?":
            rest = self.p[self.at + 1 : self.at + 3]
            if rest[:1] in (":", "=", "!"):
                head, repeatable = "?" + rest[:1], rest[:1] == ":"
                self.at += 2
            elif rest in ("<=", "<!"):
                head, repeatable = "?" + rest, False
                self.at += 3
            elif rest[:1] == "<":
                end = self.p.find(">", self.at)
                name = self.p[self.at + 2 : end] if end != -1 else ""
                if not _js_name(name):
                    raise NotARegex(f"invalid capture group name {name!r}")
                self.at = end + 1
            else:
                raise NotARegex(not_a_group(self.p[self.at - 1 : self.at + 4]))
        text, pieces = self.disjunction()
        if self.peek() != ")":
            raise NotARegex("unterminated group")
        self.at += 1
        return f"({head}{text})", 1 + pieces, repeatable

    def atom_escape(self) -> tuple[str, int, bool]:
        char = self.peek()
        if char == "":
            raise NotARegex("\\ at end of pattern")
        if char in ("b", "B"):
            self.at += 1
            return "\\" + char, 1, False
        if char.isdigit() and char != "0":
            return self.backreference(), 1, True
        if char == "k":
            return self.named_reference(), 1, True
        if char in _CLASSES:
            self.at += 1
            return _CLASSES[char], 1, True
        if char == "s":
            self.at += 1
            return f"[{_SPACES}]", 1, True
        if char == "S":
            self.at += 1
            return f"[^{_SPACES}]", 1, True
        return self.character_escape(in_class=False), 1, True

    def backreference(self) -> str:
        start = self.at
        while self.peek().isdigit():
            self.at += 1
        number = int(self.p[start : self.at])
        # guard: js-regex-reference-missing-group-refused
        if number > self.groups.count:
            raise NotARegex(
                f"\\{number} refers to group {number}, and the pattern has "
                f"{self.groups.count}; JavaScript would read it as an octal escape"
            )
        return _reference(number)

    def named_reference(self) -> str:
        end = self.p.find(">", self.at)
        name = self.p[self.at + 2 : end] if self.peek(1) == "<" and end != -1 else None
        if name is None or name not in self.groups.names:
            raise NotARegex(f"\\k{'<' + name + '>' if name else ''} names no group of the pattern")
        self.at = end + 1
        return _reference(self.groups.names[name])

    def character_escape(self, in_class: bool) -> str:
        """The escape after a backslash that stands for one character, as ``regex`` text."""
        char = self.peek()
        self.at += 1
        if char in _SIMPLE:
            return _SIMPLE[char]
        if char == "0" and not self.peek().isdigit():
            return "\\x00"
        if char == "c" and self.peek().isascii() and self.peek().isalpha():
            self.at += 1
            return _literal(chr(ord(self.p[self.at - 1]) % 32))
        if char in ("x", "u"):
            width = 2 if char == "x" else 4
            digits = self.p[self.at : self.at + width]
            if len(digits) == width and all(d in string.hexdigits for d in digits):
                self.at += width
                return _literal(chr(int(digits, 16)))
            if char == "u" and self.peek() == "{":
                raise NotARegex(
                    "\\u{...} is read so only with the u flag, which promptfoo does not set; "
                    "write \\uHHHH"
                )
            return _literal(char)
        # guard: js-regex-unknown-letter-escape-refused
        if char == "" or char.isdigit() or (char.isascii() and char.isalpha()):
            raise NotARegex(unknown_escape(char, in_class))
        return _literal(char)

    def char_class(self) -> str:
        negated = self.peek() == "^"
        self.at += negated
        items: list[str] = []
        while (char := self.peek()) != "]":
            if char == "":
                raise NotARegex("missing ] to end a character class")
            low, low_set = self.class_atom()
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.at += 1
                high, high_set = self.class_atom()
                if low_set or high_set:  # Annex B: a class in a range makes "-" a character
                    items += [low, "\\-", high]
                    continue
                if _char_of(low) > _char_of(high):
                    raise NotARegex("range out of order in character class")
                items.append(f"{low}-{high}")
            else:
                items.append(low)
        self.at += 1
        if not items:
            return "[\\d\\D]" if negated else "(?!)"
        return f"[{'^' if negated else ''}{''.join(items)}]"

    def class_atom(self) -> tuple[str, bool]:
        """One item of a set, and whether it is a class of characters (``\\d``)."""
        char = self.peek()
        if char != "\\":
            self.at += 1
            return _literal(char), False
        self.at += 1
        escaped = self.peek()
        if escaped in _CLASSES:
            self.at += 1
            return _CLASSES[escaped], True
        if escaped in ("s", "S"):
            self.at += 1
            return (_SPACES if escaped == "s" else f"[^{_SPACES}]"), True
        if escaped == "b":
            self.at += 1
            return "\\x08", False
        if escaped == "-":
            self.at += 1
            return "\\-", False
        return self.character_escape(in_class=True), False


def _reference(number: int) -> str:
    """A backreference as JavaScript reads one: the group's text, or nothing when the
    group has not matched."""
    return f"(?({number})\\{number})"


def _braces(p: str, at: int) -> tuple[int, int | None, int] | None:
    """A counted repeat starting at ``at`` (``{2}``, ``{2,}``, ``{2,5}``): its least, its
    most (None: unbounded) and where it ends; None when the brace is a character."""
    if at >= len(p) or p[at] != "{":
        return None
    end = p.find("}", at)
    if end == -1:
        return None
    least, comma, most = p[at + 1 : end].partition(",")
    if not _decimal(least) or (most and not _decimal(most)):
        return None
    if not comma:
        return int(least), int(least), end + 1
    return int(least), int(most) if most else None, end + 1


def _decimal(text: str) -> bool:
    return text.isascii() and text.isdecimal()


def _literal(char: str) -> str:
    """One character as ``regex`` reads it literally, in a set or out of one."""
    return f"\\u{ord(char):04x}" if not char.isalnum() or not char.isascii() else char


def _char_of(item: str) -> str:
    """The character a literal (``_literal``'s text, or an escape) stands for."""
    if item.startswith("\\u"):
        return chr(int(item[2:], 16))
    if item.startswith("\\x"):
        return chr(int(item[2:], 16))
    return {"\\n": "\n", "\\r": "\r", "\\t": "\t"}.get(item, item)


def _js_name(name: str) -> bool:
    """Whether ``name`` is a group name JavaScript takes (an identifier; read here when
    ASCII)."""
    return (
        bool(name)
        and name.isascii()
        and (name[0].isalpha() or name[0] in "_$")
        and all(c.isalnum() or c in "_$" for c in name)
    )
