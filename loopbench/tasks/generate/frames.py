"""The question grammar, shared by the generator (which fills it) and the solver (which
reads it back): frames with slots, the phrases a slot may hold, and how an answer is
computed from the values read.

A slot holds a reference to one thing. A reference is a name the question states, a depot
("Veltrano Haulage's Porvik depot"), or a link from another reference ("the chief
executive of ...", "the manager of ...", "the city where ... was born"). An operand is a
slot and a path of fields read from what it refers to ("manager", "born").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from typing import Literal

from loopbench.graders.answer_keys import Expected, Operation
from loopbench.graders.exact import normalise

Kind = Literal["company", "depot", "person", "city", "mountain", "river", "landmark"]
Form = Literal["name", "depot", "ceo", "founder", "manager", "birthplace"]
Rule = Literal["value", "a-b", "sum", "ratio", "more", "less", "max", "min"]
RATIO_TOLERANCE = 0.005  # half a hundredth: any reading that rounds to the right hundredth


@dataclass(frozen=True)
class Ref:
    form: Form
    name: str = ""  # the name stated (form "name"), or the company of a depot
    city: str = ""  # a depot's city
    inner: Ref | None = None  # what a link starts from

    @property
    def phrase(self) -> str:
        if self.form == "depot":
            return f"{self.name}'s {self.city} depot"
        if self.inner is None:
            return self.name
        lead = {
            "ceo": "the chief executive of ",
            "founder": "the founder of ",
            "manager": "the manager of ",
            "birthplace": "the city where ",
        }[self.form]
        return lead + self.inner.phrase + (" was born" if self.form == "birthplace" else "")


@dataclass(frozen=True)
class Frame:
    key: str
    op: Operation
    text: str  # slots are {a}, {b}, {c}
    slots: tuple[Kind, ...]
    operands: tuple[tuple[int, tuple[str, ...]], ...]  # (slot, path of fields)
    rule: Rule

    @property
    def pattern(self) -> re.Pattern[str]:
        escaped = re.escape(self.text)
        for slot in "abc":
            escaped = escaped.replace(re.escape("{" + slot + "}"), f"(?P<{slot}>.+?)")
        return re.compile(escaped)


def _f(key: str, op: Operation, text: str, slots: str, operands: str, rule: Rule) -> Frame:
    kinds: dict[str, Kind] = {
        "C": "company",
        "D": "depot",
        "P": "person",
        "T": "city",
        "M": "mountain",
        "R": "river",
        "L": "landmark",
    }
    parsed = tuple(("abc".index(o[0]), tuple(o[2:].split("."))) for o in operands.split())
    return Frame(key, op, text, tuple(kinds[s] for s in slots), parsed, rule)


_HUNDREDTH = ", to the nearest hundredth?"
# fmt: off
FRAMES = (
    _f("trucks", "lookup", "How many trucks does {a} have?", "D", "a:trucks", "value"),
    _f("vans", "lookup", "How many vans does {a} have?", "D", "a:vans", "value"),
    _f("opened", "lookup", "In what year did {a} open?", "D", "a:opened", "value"),
    _f("founded", "lookup", "In what year was {a} founded?", "C", "a:founded", "value"),
    _f("born", "lookup", "In what year was {a} born?", "P", "a:born", "value"),
    _f("population", "lookup", "What is the population of {a}?", "T", "a:population", "value"),
    _f("more-trucks", "difference", "How many more trucks does {a} have than {b}?", "DD",
       "a:trucks b:trucks", "a-b"),
    _f("more-vans", "difference", "How many more vans does {a} have than {b}?", "DD",
       "a:vans b:vans", "a-b"),
    _f("opened-after", "difference", "How many years after {a} opened did {b} open?", "DD",
       "b:opened a:opened", "a-b"),
    _f("opened-after-founding", "difference",
       "How many years after {a} was founded did {b} open?", "CD", "b:opened a:founded", "a-b"),
    _f("older", "difference", "How many years older is {a} than {b}?", "PP",
       "b:born a:born", "a-b"),
    _f("age-at-opening", "difference", "How old was {a} in the year {b} opened?", "PD",
       "b:opened a:born", "a-b"),
    _f("manager-age", "difference",
       "How old was the manager of {a} in the year that depot opened?", "D",
       "a:opened a:manager.born", "a-b"),
    _f("age-at-post", "difference", "How old was {a} in the year they took up their post?",
       "P", "a:since a:born", "a-b"),
    _f("more-people", "difference", "How many more people live in {a} than in {b}?", "TT",
       "a:population b:population", "a-b"),
    _f("trucks-over-vans", "difference", "How many more trucks than vans does {a} have?", "D",
       "a:trucks a:vans", "a-b"),
    _f("trucks-together", "sum", "How many trucks do {a} and {b} have together?", "DD",
       "a:trucks b:trucks", "sum"),
    _f("vans-together", "sum", "How many vans do {a} and {b} have together?", "DD",
       "a:vans b:vans", "sum"),
    _f("vehicles", "sum", "How many trucks and vans does {a} have in all?", "D",
       "a:trucks a:vans", "sum"),
    _f("trucks-of-three", "sum", "How many trucks do {a}, {b} and {c} have together?", "DDD",
       "a:trucks b:trucks c:trucks", "sum"),
    _f("people-together", "sum", "How many people live in {a} and {b} together?", "TT",
       "a:population b:population", "sum"),
    _f("trucks-ratio", "ratio",
       "What is the ratio of the trucks at {a} to the trucks at {b}" + _HUNDREDTH, "DD",
       "a:trucks b:trucks", "ratio"),
    _f("vans-ratio", "ratio",
       "What is the ratio of the vans at {a} to the vans at {b}" + _HUNDREDTH, "DD",
       "a:vans b:vans", "ratio"),
    _f("trucks-per-van", "ratio", "How many trucks per van does {a} have" + _HUNDREDTH, "D",
       "a:trucks a:vans", "ratio"),
    _f("people-ratio", "ratio",
       "What is the ratio of the population of {a} to that of {b}" + _HUNDREDTH, "TT",
       "a:population b:population", "ratio"),
    _f("which-more-trucks", "comparison", "Which has more trucks, {a} or {b}, and by how many?",
       "DD", "a:trucks b:trucks", "more"),
    _f("which-more-vans", "comparison", "Which has more vans, {a} or {b}, and by how many?",
       "DD", "a:vans b:vans", "more"),
    _f("which-opened-earlier", "comparison",
       "Which opened earlier, {a} or {b}, and by how many years?", "DD",
       "a:opened b:opened", "less"),
    _f("who-older", "comparison",
       "Who is older, {a} or {b}, and by how many years? Give their name.", "PP",
       "a:born b:born", "less"),
    _f("which-founded-earlier", "comparison",
       "Which was founded earlier, {a} or {b}, and by how many years?", "CC",
       "a:founded b:founded", "less"),
    _f("which-more-people", "comparison",
       "Which has more people, {a} or {b}, and by how many? Name the city.", "TT",
       "a:population b:population", "more"),
    _f("most-trucks", "which",
       "Which of {a}'s depots has the most trucks, and how many trucks does it have?", "C",
       "a:depots.trucks", "max"),
    _f("most-vans", "which",
       "Which of {a}'s depots has the most vans, and how many vans does it have?", "C",
       "a:depots.vans", "max"),
    _f("fewest-vans", "which",
       "Which of {a}'s depots has the fewest vans, and how many vans does it have?", "C",
       "a:depots.vans", "min"),
    _f("fewest-trucks", "which",
       "Which of {a}'s depots has the fewest trucks, and how many trucks does it have?", "C",
       "a:depots.trucks", "min"),
    _f("first-opened", "which", "Which of {a}'s depots opened first, and in what year?", "C",
       "a:depots.opened", "min"),
    _f("last-opened", "which", "Which of {a}'s depots opened last, and in what year?", "C",
       "a:depots.opened", "max"),
    _f("most-trucks-of-three", "which",
       "Which of {a}, {b} and {c} has the most trucks, and how many does it have?", "DDD",
       "a:trucks b:trucks c:trucks", "max"),
    _f("fewest-vans-of-three", "which",
       "Which of {a}, {b} and {c} has the fewest vans, and how many does it have?", "DDD",
       "a:vans b:vans c:vans", "min"),
    _f("first-of-three", "which", "Which of {a}, {b} and {c} opened first, and in what year?",
       "DDD", "a:opened b:opened c:opened", "min"),
)

PUBLIC_FRAMES = (
    _f("public-higher", "difference", "How much higher is {a} than {b}, in metres?", "MM",
       "a:height b:height", "a-b"),
    _f("public-longer", "difference", "How many kilometres longer is the {a} than the {b}?",
       "RR", "a:length b:length", "a-b"),
    _f("public-after", "difference", "How many years after the {a} opened did the {b} open?",
       "LL", "b:opened a:opened", "a-b"),
    _f("public-which-higher", "comparison",
       "Which is higher, {a} or {b}, and by how many metres?", "MM",
       "a:height b:height", "more"),
    _f("public-which-longer", "comparison",
       "Which is longer, the {a} or the {b}, and by how many kilometres?", "RR",
       "a:length b:length", "more"),
    _f("public-which-first", "comparison",
       "Which opened first, the {a} or the {b}, and by how many years?", "LL",
       "a:opened b:opened", "less"),
)
# fmt: on


@dataclass(frozen=True)
class Read:
    """A value read for an operand, with what names its subject in an answer: a depot by
    (city, company), anything else by its name."""

    value: int
    label: tuple[str, ...]


@dataclass(frozen=True)
class Answer:
    numbers: tuple[int | float, ...]
    entities: tuple[str, ...] = ()
    tolerance: float | None = None
    others: tuple[str, ...] = ()
    """The other candidates of an entity answer (the depot, person or city it beat), named
    as the winner is: what a hedge would list."""

    def expected(self, question: str) -> Expected:
        """The answer key; its distractors the other candidates the question does not name
        (a right answer may repeat the question's names: "59 more than Bilbao")."""
        asked = f" {normalise(question)} "
        named = {normalise(e) for e in self.entities}
        distractors = [
            o
            for o in dict.fromkeys(self.others)
            if normalise(o) not in named and f" {normalise(o)} " not in asked
        ]
        return Expected(
            numbers=list(self.numbers),
            entities=list(self.entities),
            tolerance=self.tolerance,
            distractors=distractors,
        )


def hundredths(ratio: Fraction) -> float:
    """Rounded half up, as a person rounds, not to even as ``round`` does."""
    exact = Decimal(ratio.numerator) / Decimal(ratio.denominator)
    # guard: ratios-round-half-up-as
    return float(exact.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def near_a_rounding_edge(ratio: Fraction) -> bool:
    """Within a thousandth of a point where rounding to hundredths flips: a fair reader
    computing in floating point could land either side, so such pairs are not asked."""
    hundreds = ratio * 100
    return abs(hundreds - (hundreds.numerator // hundreds.denominator) - Fraction(1, 2)) < 0.1


def _name(win: Read, others: list[Read]) -> str:
    # Depots in different cities are told apart by city, in one city by company.
    shared = any(o.label[0] == win.label[0] for o in others if o is not win)
    return win.label[-1] if shared else win.label[0]


def evaluate(frame: Frame, reads: list[list[Read]]) -> Answer:
    """The answer from the values read, one list of reads per operand (several for a
    "which" operand, one per depot)."""
    first = [r[0] for r in reads]
    if frame.rule == "value":
        return Answer((first[0].value,))
    if frame.rule == "a-b":
        return Answer((first[0].value - first[1].value,))
    if frame.rule == "sum":
        return Answer((sum(r.value for r in first),))
    if frame.rule == "ratio":
        return Answer((hundredths(Fraction(first[0].value, first[1].value)),), (), RATIO_TOLERANCE)
    if frame.rule in ("more", "less"):
        a, b = first
        a_wins = a.value > b.value if frame.rule == "more" else a.value < b.value
        win, lose = (a, b) if a_wins else (b, a)
        return Answer((abs(a.value - b.value),), (_name(win, first),), others=(_name(lose, first),))
    # "which": one operand listing a company's depots, or one operand a slot
    candidates = [r for operand in reads for r in operand]
    choose = max if frame.rule == "max" else min
    best = choose(candidates, key=lambda r: r.value)
    others = tuple(_name(r, candidates) for r in candidates if r is not best)
    return Answer((best.value,), (_name(best, candidates),), others=others)


def find_frames(question: str) -> list[tuple[Frame, dict[str, str]]]:
    """Every frame whose text matches the question, with the phrase in each slot."""
    found = []
    for frame in (*FRAMES, *PUBLIC_FRAMES):
        match = frame.pattern.fullmatch(question)
        if match:
            found.append((frame, match.groupdict()))
    return found
