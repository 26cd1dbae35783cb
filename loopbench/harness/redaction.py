"""Every secret loopbench holds, redacted in every form from everything it writes.

The secrets are the API key and the user name and password a base URL embeds. An
endpoint is hostile and a model repeats what it is sent, so a secret can come back in
an error body, a reply or a tool call's arguments, as given or encoded: JSON-escaped,
every character ``\\u``-escaped, percent-encoded, HTML-escaped, in base64 (alone, or
inside other bytes, as a Basic header carries ``user:password``) and upper- or
lower-cased. The whole secret, and wherever ``SECRET_RUN`` or more of its characters in a
row appear, in any of those forms, become ``[redacted]``; except a run that lies within one
word of the secret (``_within_a_word``): a key written by hand, ``sk-test-newcomer-1234``,
holds words a path or a sentence holds too ("newcomer"), and those are left as they are.
A run reaching into a second word ("test-newc"), or within a word that is not one (the
random part of a key, ``Q7mZp2Lr9XvB``), is redacted.

One ``Redactor`` does it. The client keeps one for its endpoint's secrets and applies
it to everything the endpoint sends, before anything else sees it; the process keeps
one for every secret it was given (``protected``), which every writer applies to what
it writes (records, traces, experiment.json, the cache, the report, exports, messages
on stdout and stderr: ``loopbench.harness.streams.redacted_output``), so a secret that reached a
tool's output is caught too.
"""

from __future__ import annotations

import base64
import contextlib
import html
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import quote, quote_plus

#: The shortest run of a secret's characters that is redacted where it appears on its own.
SECRET_RUN = 8
#: A secret shorter than SECRET_RUN is redacted whole, if it has at least this many
#: characters: a shorter one (a user name "bob") would blank ordinary words.
SHORTEST_WHOLE = 6
#: The longest run of letters taken for a word (``_within_a_word``): a longer one is random.
LONGEST_WORD = 24
MARK = "[redacted]"


class Redactor:
    """Redacts ``secrets`` and each ``(user, password)`` pair, in every form, from a text."""

    def __init__(
        self, secrets: Iterable[str | None] = (), pairs: Iterable[tuple[str, str]] = ()
    ) -> None:
        self.secrets = frozenset(s for s in secrets if s)
        self.pairs = frozenset(pairs)
        pieces: set[str] = set()
        for secret in self.secrets:
            pieces |= _pieces(secret)
        for user, password in self.pairs:
            pair = f"{user}:{password}"
            pieces |= _text_forms(pair) | _runs(base64.b64encode(pair.encode()).decode())
        words = {p.lower() for p in pieces if p}
        self._pattern: re.Pattern[str] | None = None
        if words:
            # A lookahead finds overlapping matches, so a run longer than SECRET_RUN is
            # found whole; a trie keeps the pattern fast with thousands of pieces. Matched
            # against the text lower-cased: three times faster than ignoring case.
            self._pattern = re.compile(f"(?=({_trie(words)}))", re.DOTALL)
            # Only where enough characters that pieces hold stand in a row is the trie
            # tried: a scan for them is several times faster than the trie everywhere.
            alphabet = "".join(sorted({re.escape(c) for w in words for c in w}))
            shortest = min(map(len, words))
            self._regions = re.compile(f"[{alphabet}]{{{shortest},}}")

    def __bool__(self) -> bool:
        return self._pattern is not None

    def __call__(self, text: str) -> str:
        if self._pattern is None or not text:
            return text
        # guard: secrets-any-case
        lowered = text.lower()
        if len(lowered) != len(text):  # a letter whose lower case is longer: one at a time
            lowered = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
        spans: list[list[int]] = []
        for region in self._regions.finditer(lowered):
            for match in self._pattern.finditer(lowered, *region.span()):
                start, end = match.span(1)
                if spans and start <= spans[-1][1]:
                    spans[-1][1] = max(spans[-1][1], end)
                else:
                    spans.append([start, end])
        if not spans:
            return text
        kept, last = [], 0
        for start, end in spans:
            # Inside JSON text a cut must not leave an escape half written: the backslashes
            # before a span and one it ends on go with it.
            # guard: secrets-cut-never-leaves-json
            while start > last and text[start - 1] == "\\":
                start -= 1
            if text[end - 1] == "\\" and end < len(text):
                end += 1
            kept += [text[last:start], MARK]
            last = max(last, end)
        return "".join(kept) + text[last:]

    def value(self, value: Any) -> Any:
        """A JSON value with every string in it (keys too) redacted."""
        if not self:
            return value
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {self(str(k)): self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value

    def json_text(self, text: str) -> str:
        """JSON text (tool-call arguments) redacted, still the same JSON where it parses."""
        redacted = self(text)
        if redacted == text:
            return text
        try:
            return json.dumps(self.value(json.loads(text)), ensure_ascii=False)
        except (ValueError, RecursionError):
            return redacted


def _runs(text: str) -> set[str]:
    """Every SECRET_RUN characters in a row of ``text``; a shorter text whole, if long enough."""
    if len(text) < SECRET_RUN:
        # guard: secrets-short-word-not-secret
        return {text} if len(text) >= SHORTEST_WHOLE else set()
    # guard: secrets-runs-eight-not-whole
    return {text[i : i + SECRET_RUN] for i in range(len(text) - SECRET_RUN + 1)}


def _pieces(secret: str) -> set[str]:
    found = _text_forms(secret) if len(secret) >= SHORTEST_WHOLE else set()
    for run in _runs(secret) - _word_runs(secret):
        # guard: secrets-every-form-run-redacted
        found |= _text_forms(run)
    for variant in {secret, secret.upper(), secret.lower()}:
        for encoded in _base64_forms(variant):
            found |= _runs(encoded) if len(encoded) >= SECRET_RUN else set()
    return found


def _word_runs(secret: str) -> set[str]:
    """The runs of ``SECRET_RUN`` characters of ``secret`` whose letters and digits all
    belong to one word of it (``_is_word``). Such a run is a word of ordinary text too; the
    others are the secret's (a run found both ways is the secret's)."""
    words = list(re.finditer(r"[^\W_]+", secret))  # letters and digits between the rest
    found: dict[str, bool] = {}
    for start in range(len(secret) - SECRET_RUN + 1):
        end = start + SECRET_RUN
        within = [w[0] for w in words if w.start() < end and w.end() > start]
        run = secret[start:end]
        in_word = len(within) == 1 and _is_word(within[0])
        found[run] = found.get(run, True) and in_word
    return {run for run, in_word in found.items() if in_word}


def _is_word(text: str) -> bool:
    """Whether letters or digits read as a word: letters in one case (or capitalised), at
    most ``LONGEST_WORD`` of them, or digits alone. Random ones mix cases, letters and
    digits."""
    letters = text.isalpha() and len(text) <= LONGEST_WORD
    # guard: secrets-word-runs-left-alone
    return text.isdigit() or (letters and (text.islower() or text.isupper() or text.istitle()))


def _text_forms(text: str) -> set[str]:
    """``text`` as written, escaped in JSON, HTML and URLs, and with every character escaped;
    and each of those as a JSON string holds it (a trace line holding a tool's output)."""
    forms = _escaped_forms(text)
    for form in list(forms):
        escaped = json.dumps(form)[1:-1]
        forms |= {escaped, escaped.replace("/", "\\/")}
    return forms


def _escaped_forms(text: str) -> set[str]:
    escaped = json.dumps(text)[1:-1]
    # guard: secrets-every-character-u-escaped
    return {
        text,
        escaped,
        escaped.replace("/", "\\/"),
        json.dumps(text, ensure_ascii=False)[1:-1],
        "".join(json.dumps(c)[1:-1] if ord(c) > 127 else f"\\u{ord(c):04x}" for c in text),
        "".join(f"%{b:02x}" for b in text.encode()),
        quote(text, safe=""),
        quote(text, safe="/"),
        quote_plus(text),
        html.escape(text),
    }


def _base64_forms(secret: str) -> set[str]:
    """The base64 characters that depend on ``secret``'s bytes alone, wherever it starts
    in the bytes encoded: one text for each of the three alignments, in both alphabets."""
    data = secret.encode()
    found = set()
    # guard: secrets-base64-at-each-three
    for offset in range(3):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            text = encode(b"\0" * offset + data).decode().rstrip("=")
            # The first characters also hold bits of the bytes before the secret, and the
            # last one, unless the bytes end on a group of three, of the bytes after it.
            end = len(text) if (offset + len(data)) % 3 == 0 else len(text) - 1
            found.add(text[(0, 2, 3)[offset] : end])
    return found


def _trie(words: Iterable[str]) -> str:
    """A regular expression matching any of ``words``, longest first, as a trie."""
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        branches = [re.escape(c) + emit(child) for c, child in sorted(node.items()) if c]
        if not branches:
            return ""
        group = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{group})?" if "" in node else group

    return emit(root)


#: Every secret the process holds: what every writer applies.
_active = Redactor()


def redact(text: str) -> str:
    """``text`` without any secret this process holds, in any form."""
    return _active(text)


def holds_secrets() -> bool:
    """Whether the process holds any secret (when it holds none, ``redact`` changes nothing)."""
    return bool(_active)


@contextlib.contextmanager
def protected(
    secrets: Iterable[str | None] = (), pairs: Iterable[tuple[str, str]] = ()
) -> Iterator[Redactor]:
    """Within it, ``redact`` also redacts ``secrets`` and the ``(user, password)`` pairs."""
    global _active
    before = _active
    held = Redactor(
        [*before.secrets, *secrets],
        [*before.pairs, *pairs],
    )
    _active = held
    try:
        yield held
    finally:
        # guard: secrets-protected-lets-go-secrets
        _active = before
