"""Where a reply commits to its answer: the one reading every grader and every pattern that
reads an answer uses.

1. **The text read.** Markdown emphasis and code marks, and LaTeX's wrappers (``\\boxed``,
   ``\\text``, ``\\frac{a}{b}`` as a/b, ``\\$``, ``\\%``) are read as the plain text they
   show.
2. **The final answer.** The last of: a line starting ``Answer:`` or ``Final answer:``
   (after list marks, emphasis or a heading's hashes; a heading "Final answer" alone gives
   the next line), "the answer is" (also "the correct option is", "I choose"...), GSM8K's
   ``####`` and ``\\boxed{}``. A reply with none is read whole.
3. **A self-correction** after the final answer ("Actually", "Wait", "I made an error",
   "scratch that"...) gives the answer when what follows it states one (the last committed
   answer wins); a correction that says the answer was wrong and gives none leaves the
   reply ``retracted``; a hesitation that gives none ("Wait, let me check.") leaves the
   answer as it was.
4. **The sentence that commits.** A question ("Broncos?") commits to nothing, and a "No"
   after it opens the answer ("Broncos? No, Panthers."). Of an answer line, its first
   sentence commits, or a later one that goes on with its working ("= ...") or concludes
   ("So ..."); an explanation after it ("Mars (A) and Earth (B) are smaller") does not.
   A reply with no final answer commits in its last concluding sentence ("So B."), else in
   its first when that is the answer alone ("18 eggs."), else in its last that states
   something.

Each grader reads the committed sentence with its own check (``Read``), which says what is
stated: an answer, a hedge, or nothing (then the next sentence in that order is tried).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Generic, TypeVar

from loopbench.graders.words import CONCLUDING, CORRECTION, FILLER, OFFERS_AFTER, POSSIBLE, RETRACTS

T = TypeVar("T")


@dataclass(frozen=True)
class Said(Generic[T]):
    """What a text states: ``value`` (None for a hedge or for nothing), and why not."""

    value: T | None
    why: str = ""
    stated: bool = True
    """Whether the text states anything a grader reads (a hedge does; "Let me see" does not)."""


Read = Callable[[str, bool], Said[T]]
"""A grader's check of one committed sentence; the flag says whether a final answer's mark
gave it (an answer line states its answer first; a sentence of working, last)."""


def nothing(why: str) -> Said[T]:
    """A text that states nothing a grader reads: the next sentence is tried."""
    return Said(None, why, stated=False)


def hedge(why: str) -> Said[T]:
    """A text that offers more than one answer: never a pass."""
    return Said(None, f"hedged: {why}")


_LATEX = [
    (re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}"), r"\1/\2"),
    (re.compile(r"\\(?:text|textbf|mathrm|mathbf|operatorname)\s*\{([^{}]*)\}"), r"\1"),
    (re.compile(r"\\(?:times|cdot)"), "*"),
    (re.compile(r"\\div"), "/"),
    (re.compile(r"\\([$%&#])"), r"\1"),
    (re.compile(r"\{,\}"), ","),
    (re.compile(r"\\[()\[\]]|\\[,;!]|\\quad"), " "),
    (re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*"), r"\1"),
    (re.compile(r"\bi\.\s?e\.(?=\s)", re.IGNORECASE), "that is"),  # a restatement, not a stop
    (re.compile(r"\be\.\s?g\.(?=\s)", re.IGNORECASE), "for example"),
    (re.compile(r"~~[^~\n]*~~"), ""),  # struck out: not said
    (re.compile(r"\*\*|`+|~~"), ""),
    (re.compile(r"\$\$"), " "),  # display maths
    (re.compile(r"(?<![\w$])\$(?=[^$\n]*\$)|(?<=[\w)}])\$(?!\d)"), ""),
]


def plain(reply: str) -> str:
    """``reply`` as the plain text it shows (see the module's first rule); a vulgar fraction
    as a/b ("12½" is "12 1/2")."""
    for pattern, replacement in _LATEX:
        reply = pattern.sub(replacement, reply)
    return _VULGAR.sub(_fraction, reply)


_VULGAR = re.compile(r"(\d?)([\u00bc-\u00be\u2150-\u215e])")


def _fraction(found: re.Match[str]) -> str:
    value = Fraction(unicodedata.numeric(found.group(2))).limit_denominator(16)
    whole = f"{found.group(1)} " if found.group(1) else ""
    return f"{whole}{value.numerator}/{value.denominator}"


_MARKS = r"[\s>#*_`\-+\d.)]*?"
_ANSWER_LINE = re.compile(
    rf"^{_MARKS}(?:(?:the|my|your)\s+)?(?:(?:final|correct|short|best)\s+)?answer\b"
    r"[^:\uff1a\n]{0,20}?[:\uff1a]\s*(?P<text>[^\n]*)$",
    re.IGNORECASE | re.MULTILINE,
)
_HEADING = re.compile(
    rf"^{_MARKS}(?:final\s+|correct\s+)?answer\s*[:\uff1a]?\s*$\n\s*(?P<text>[^\n]*)",
    re.IGNORECASE | re.MULTILINE,
)
_IN_LINE = re.compile(
    r"\b(?:(?:(?:final|correct|right|best)\s+)?(?:answer|option|choice|label)\s*"
    r"(?:is\b|would\s+be\b|will\s+be\b|must\s+be\b|should\s+be\b|=|[:\uff1a])"
    r"|i(?:\s+would|\s+will|['\u2019]d|['\u2019]ll)?\s+(?:choose|pick|select|go\s+with)\b)"
    r"\s*:?\s*(?P<text>[^\n]*)",
    re.IGNORECASE,
)
_GSM8K = re.compile(r"####\s*(?P<text>[^\n]*)")
#: A line giving a total ("Total: $18.00"), as worked answers end.
_TOTAL = re.compile(
    rf"(?:^|(?<=[.!?]\s)){_MARKS}(?:grand\s+)?total\s*[:=]\s*(?P<text>[^\n]*)$",
    re.IGNORECASE | re.MULTILINE,
)
_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")
_BOXED_ALL = re.compile(r"\\(?:boxed|fbox)\s*\{([^{}]*)\}")


@dataclass(frozen=True)
class Final:
    """The final answer's text (``anchored`` when a mark gave it, else the reply whole) and
    what a self-correction after it says: the text after it (``revision``), and whether it
    said the answer was wrong (``retracts``)."""

    text: str
    anchored: bool
    revision: str | None = None
    retracts: bool = False
    offers: bool = False
    """Whether the text after the answer offers another ("Answer: spam. Or maybe ham.")."""
    rest: str = ""
    """The reply after the final answer's line."""


def final(reply: str) -> Final:
    """The final answer of ``reply`` (plain text; see the module's rules 2 and 3)."""
    found = _anchors(reply)
    start, text = max(found) if found else (0, reply)
    after = reply[start:]
    corrections = [m for m in CORRECTION.finditer(after) if m.start() > 0]
    offered = next((m for m in OFFERS_AFTER.finditer(after) if m.start() > 0), None)
    # guard: reading-another-answer-offered-after
    if offered is not None and not corrections:
        return Final(text[: offered.start()], bool(found), after[offered.end() :], offers=True)
    if not corrections:
        return Final(text, bool(found), rest=after[len(text) :])
    last = corrections[-1]
    first = corrections[0].start()
    return Final(
        text[:first] if first < len(text) else text,
        bool(found),
        after[last.end() :],
        RETRACTS.search(after, corrections[0].start()) is not None,
    )


def _anchors(reply: str) -> list[tuple[int, str]]:
    """Where each mark of a final answer starts its text, with the text."""
    found = [
        (m.start("text"), m.group("text"))
        for pattern in (_ANSWER_LINE, _HEADING, _IN_LINE, _GSM8K, _TOTAL)
        for m in pattern.finditer(reply)
        if m.group("text").strip(" .*_:")
    ]
    lines: dict[int, list[re.Match[str]]] = {}
    for m in _BOXED.finditer(reply):
        lines.setdefault(reply.rfind("\n", 0, m.start()) + 1, []).append(m)
    for line_start, boxes in lines.items():
        if len(boxes) > 1:  # "\boxed{A} or \boxed{B}": the line gives the answer, boxes and all
            line_end = len(reply) if (end := reply.find("\n", line_start)) < 0 else end
            found.append((line_start, _BOXED_ALL.sub(r"\1", reply[line_start:line_end])))
        elif (content := _braced(reply, boxes[0].end())) is not None:
            found.append((boxes[0].end(), content))
    return found


def _braced(text: str, start: int) -> str | None:
    """The text up to the brace closing one opened just before ``start``."""
    depth = 1
    for at in range(start, min(len(text), start + 2000)):
        depth += {"{": 1, "}": -1}.get(text[at], 0)
        if depth == 0:
            return text[start:at]
    return None


def read_reply(reply: str, read: Read[T]) -> Said[T]:
    """What ``reply`` commits to, as ``read`` reads its committed sentence."""
    return _read_final(final(plain(reply)), read, depth=0)


def _read_final(answer: Final, read: Read[T], depth: int) -> Said[T]:
    # guard: reading-self-correction-after-answer
    if answer.revision is not None and depth < 3:
        revised = _read_final(revision_of(answer.revision), read, depth + 1)
        if says_nothing(answer.revision):
            revised = nothing("no answer")
        # guard: reading-answer-offered-after-answer
        if revised.stated and answer.offers:
            return Said(None, "hedged: offers another answer after it")
        if revised.stated:
            return revised
        # guard: reading-retraction-with-nothing
        if answer.retracts:
            return Said(None, "retracted: corrected with no answer after it")
    sentences, asked = _split(answer.text)
    order = (
        _answer_line_order(sentences) if answer.anchored else _unmarked(sentences, terse=not asked)
    )
    said: Said[T] = nothing("no answer")
    for sentence in order:
        said = read(sentence, answer.anchored)
        if said.stated:
            return _offered_later(said, [*sentences, *sentences_of(answer.rest)], sentence, read)
    return said if answer.text.strip() else nothing("no answer")


def _offered_later(said: Said[T], sentences: list[str], chosen: str, read: Read[T]) -> Said[T]:
    """``said``, or a hedge when a sentence after it offers another answer as possible
    ("Answer: B. C could also be right.")."""
    if said.value is None or chosen not in sentences:
        return said
    for sentence in sentences[sentences.index(chosen) + 1 :]:
        other = read(sentence, True) if POSSIBLE.search(sentence) else None
        # guard: reading-another-answer-offered-as
        if other is not None and other.value is not None and other.value != said.value:
            return Said(None, "hedged: offers another answer as possible")
    return said


def says_nothing(text: str) -> bool:
    """Whether a correction's text is made of words that state no answer ("let me check")."""
    words = re.findall(r"[^\W\d_]+", text.replace("'", "").replace("\u2019", ""))
    # A capital letter alone is an option's ("Actually it is A."), not the article.
    return not re.search(r"\d", text) and all(w != "A" and w.lower() in FILLER for w in words)


def revision_of(text: str) -> Final:
    """What follows a self-correction, read as a reply of its own."""
    found = _anchors(text)
    if found:
        return Final(max(found)[1], True)
    return Final(text, False)


_SENTENCE = re.compile(
    r"(?<=[.!?])(?<!\b[A-Z]\.[A-Z]\.)(?<!\b(?:Mr|Ms|Dr|St|vs)\.)(?<!\bi\.e\.)(?<!\be\.g\.)"
    r"(?<!\betc\.)(?<!\bapprox\.)\s+|\n+",
    re.IGNORECASE,
)
_NO_AFTER_QUESTION = re.compile(r"^\W*no\b[\s,:;.\-\u2013\u2014!]*(?=\w)", re.IGNORECASE)


def sentences_of(text: str) -> list[str]:
    return _split(text)[0]


def _split(text: str) -> tuple[list[str], bool]:
    """The sentences of ``text`` that can commit: not questions; a "No" opening the one
    after a question read as the start of an answer."""
    kept: list[str] = []
    after_question = asked = False
    for sentence in _SENTENCE.split(text):
        sentence = sentence.strip()
        if not sentence:
            continue
        # guard: reading-question-commits-nothing
        if sentence.endswith("?"):
            after_question = asked = True
            continue
        if after_question:
            # guard: reading-no-after-question-opens
            sentence = _NO_AFTER_QUESTION.sub("", sentence)
        after_question = False
        kept.append(sentence)
    return kept, asked


def _answer_line_order(sentences: list[str]) -> Iterator[str]:
    """An answer line's first sentence, or a later one going on with its working or
    concluding; then the others in order."""
    if not sentences:
        return
    chosen = 0
    for k, sentence in enumerate(sentences[1:], 1):
        # guard: reading-answer-line-explanation-does
        if _concludes(sentence) or ("=" in sentences[chosen] and "=" in sentence):
            chosen = k
    yield sentences[chosen]
    yield from (s for k, s in enumerate(sentences) if k != chosen)


#: The most words of a first sentence that is the answer alone ("18 eggs.", "B.").
_TERSE_WORDS = 3


def _unmarked(sentences: list[str], terse: bool = True) -> Iterator[str]:
    """A reply with no final answer: its concluding sentences, last first; its first when it
    is short (and no question came before it); then the others, last first."""
    concluding = [s for s in sentences if _concludes(s)]
    yield from reversed(concluding)
    rest = [s for s in sentences if not _concludes(s)]
    if terse and rest and len(rest[0].split()) <= _TERSE_WORDS:
        yield rest[0]
        rest = rest[1:]
    yield from reversed(rest)


def _concludes(sentence: str) -> bool:
    first = re.match(r"\W*(\w+)", sentence)
    return first is not None and first.group(1).lower() in CONCLUDING


def answer_part(reply: str) -> str | None:
    """What a pattern keeps as its answer: the final answer's text after its mark when that
    is one sentence and the reply's end; else the reply from the mark's line on (what
    follows may correct it, and a reader of several sentences starts at the mark); None
    when the reply marks no final answer."""
    found = _anchors(reply)
    if not found:
        return None
    start, text = max(found)
    alone = len(sentences_of(plain(text))) <= 1
    # guard: reading-cot-keeps-correction-after
    if alone and not reply[start + len(text) :].strip(" \t\n}$*_."):
        return text.strip(" *_\n") or None
    # What follows may correct the answer or offer another, and an answer of several
    # sentences is read from its first: kept with the mark, read as the whole reply is.
    return reply[reply.rfind("\n", 0, start) + 1 :].strip() or None


def answer_text(reply: str) -> Said[str]:
    """The sentence ``reply`` commits in, as text: what a grader of a free answer reads."""
    return read_reply(reply, _whole)


def _whole(sentence: str, _: bool) -> Said[str]:
    text = sentence.strip(" ,;:-\u2013\u2014\t")
    return Said(text) if text else nothing("no answer")


def answer_line(reply: str) -> str:
    """The final answer's text whole, as written (a self-correction's when it gives one):
    what a grader of a structured answer (a JSON object) reads."""
    answer = final(reply)
    if answer.revision is not None and answer.revision.strip() and not answer.offers:
        return revision_of(answer.revision).text.strip()
    return answer.text.strip()
