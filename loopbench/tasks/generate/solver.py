"""The reference solver: answers a generated question from the encyclopedia's text alone.

Its rules (docs/tasksets.md, "Generated sets"):

- It reads the question against the frames of frames.py; exactly one reading must fit.
- It looks up a title only if the title appears verbatim in the question or in an entry it
  has already read, or is the title the encyclopedia's stated naming convention makes from
  the question's words ("Veltrano Haulage's Porvik depot" -> "Veltrano Haulage Porvik
  depot"), and then only if that title exists: a walk that knows which titles exist never
  tries one that misses, so what it counts is the shortest walk.
- It uses the plain lookup (the text, no related titles) and parses facts from that text.
- It never looks a title up twice; ``hops`` is the number of titles it looked up.

It does not read the world the set was generated from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from loopbench.graders.answer_keys import Expected, Fact, Solution
from loopbench.harness.errors import HarnessFault
from loopbench.harness.tools import ToolFailure
from loopbench.tasks.generate.encyclopedia import DEPOT_CONVENTION
from loopbench.tasks.generate.frames import Form, Frame, Kind, Read, Ref, evaluate, find_frames
from loopbench.tasks.generate.reading import NAME, TITLE, WORD, ReadError, Record, parse_entry
from loopbench.tasks.tools import Encyclopedia, plain_lookup


class SolverError(HarnessFault):
    """The question cannot be answered under the solver's rules; says why."""


@dataclass(frozen=True)
class Solved:
    expected: Expected
    hops: int
    solution: Solution


_DEPOT = re.compile(rf"(?P<company>{NAME})'s (?P<city>{WORD}) depot")
_LINKS: dict[str, tuple[Kind, Form]] = {
    "the chief executive of ": ("company", "ceo"),
    "the founder of ": ("company", "founder"),
    "the manager of ": ("depot", "manager"),
}


def parse_ref(text: str, kind: Kind) -> Ref | None:
    """The reference a slot's phrase makes, or None if the phrase cannot be one."""
    if kind == "company":
        return Ref("name", text) if re.fullmatch(NAME, text) else None
    if kind == "depot":
        match = _DEPOT.fullmatch(text)
        return Ref("depot", match["company"], match["city"]) if match else None
    if kind == "person":
        for lead, (inner_kind, form) in _LINKS.items():
            if text.startswith(lead):
                inner = parse_ref(text.removeprefix(lead), inner_kind)
                return Ref(form, inner=inner) if inner else None
        return Ref("name", text) if re.fullmatch(NAME, text) else None
    if kind == "city":
        match = re.fullmatch(r"the city where (.+) was born", text)
        if match:
            inner = parse_ref(match[1], "person")
            return Ref("birthplace", inner=inner) if inner else None
        return Ref("name", text) if re.fullmatch(WORD, text) else None
    return Ref("name", text) if re.fullmatch(TITLE, text) else None


def read_question(question: str) -> tuple[Frame, list[Ref]]:
    readings = []
    for frame, slots in find_frames(question):
        refs = [parse_ref(slots[s], k) for s, k in zip("abc", frame.slots, strict=False)]
        if all(r is not None for r in refs):
            readings.append((frame, [r for r in refs if r is not None]))
    if len(readings) != 1:
        raise SolverError(f"{len(readings)} readings of the question fit; exactly one must")
    return readings[0]


@dataclass
class Walk:
    """One question's walk through the encyclopedia: what was looked up and read."""

    question: str
    book: Encyclopedia
    produced: set[str]
    lookups: list[str] = field(default_factory=list)
    records: dict[str, Record] = field(default_factory=dict)
    texts: list[str] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)

    def may_look_up(self, title: str) -> bool:
        return (
            title in self.question
            or title in self.produced
            or any(title in text for text in self.texts)
        )

    def read(self, title: str, kind: Kind) -> Record:
        if title in self.records:
            return self.records[title]
        if not self.may_look_up(title):
            raise SolverError(f"{title!r} is named neither by the question nor by an entry read")
        try:
            text = plain_lookup(self.book, title)
        except ToolFailure as exc:
            raise SolverError(f"looking up {title!r}: {exc}") from None
        self.lookups.append(title)
        self.texts.append(text)
        try:
            record = self.records[title] = parse_entry(kind, title, text)
        except ReadError as exc:
            raise SolverError(str(exc)) from None
        return record

    def fact(self, record: Record, name: str) -> int | str:
        try:
            value = record.get(name)
        except ReadError as exc:
            raise SolverError(str(exc)) from None
        self.note(Fact(title=record.title, field=name, value=value))
        return value

    def note(self, fact: Fact) -> None:
        if fact not in self.facts:
            self.facts.append(fact)

    def subject(self, ref: Ref, kind: Kind) -> Record:
        """The entry of what ``ref`` refers to, reading the entries that lead to it."""
        if ref.form == "name":
            return self.read(ref.name, kind)
        if ref.form == "depot":
            return self._depot(ref)
        assert ref.inner is not None
        if ref.form == "birthplace":
            person = self.subject(ref.inner, "person")
            return self.read(str(self.fact(person, "birthplace")), "city")
        inner_kind: Kind = "depot" if ref.form == "manager" else "company"
        holder = self.subject(ref.inner, inner_kind)
        return self.read(str(self.fact(holder, ref.form)), "person")

    def _depot(self, ref: Ref) -> Record:
        convention = f"{ref.name} {ref.city} depot"
        # guard: solver-uses-naming-convention-only
        if convention in self.produced and self.book.exact(convention) == convention:
            record = self.read(convention, "depot")
        else:  # a local title: only the company's entry says it
            company = self.read(ref.name, "company")
            if ref.city not in company.depots:
                raise SolverError(f"the entry {ref.name!r} lists no depot in {ref.city}")
            title = company.depots[ref.city]
            self.note(Fact(title=ref.name, field=f"depot in {ref.city}", value=title))
            record = self.read(title, "depot")
        if (record.fields.get("company"), record.fields.get("city")) != (ref.name, ref.city):
            raise SolverError(f"the entry {record.title!r} is not {ref.phrase}")
        return record

    def operand(self, record: Record, path: tuple[str, ...]) -> list[Read]:
        *links, last = path
        for link in links:
            if link == "depots":  # every depot the company lists, in its order
                depots = [self.read(title, "depot") for title in record.depots.values()]
                return [Read(self._int(d, last), d.label) for d in depots]
            record = self.read(str(self.fact(record, link)), "person")
        return [Read(self._int(record, last), record.label)]

    def _int(self, record: Record, name: str) -> int:
        value = self.fact(record, name)
        if not isinstance(value, int):
            raise SolverError(f"the entry {record.title!r} gives {name} as {value!r}")
        return value


def produced_titles(book: Encyclopedia, refs: list[Ref]) -> set[str]:
    """The titles the stated naming convention makes from the question's depot phrases."""
    if DEPOT_CONVENTION not in book.naming:
        return set()
    found: set[str] = set()
    stack = list(refs)
    while stack:
        ref = stack.pop()
        if ref.form == "depot":
            found.add(f"{ref.name} {ref.city} depot")
        if ref.inner is not None:
            stack.append(ref.inner)
    return found


def solve(question: str, book: Encyclopedia) -> Solved:
    frame, refs = read_question(question)
    walk = Walk(question, book, produced_titles(book, refs))
    # The question read left to right: first what each slot refers to, then the operands.
    subjects = [walk.subject(ref, kind) for ref, kind in zip(refs, frame.slots, strict=True)]
    reads = [walk.operand(subjects[slot], path) for slot, path in frame.operands]
    if frame.rule in ("more", "less") and reads[0][0].value == reads[1][0].value:
        raise SolverError("the two values are equal, so neither is more")
    if frame.rule == "ratio" and reads[1][0].value == 0:
        raise SolverError("the ratio divides by zero")
    if frame.rule in ("max", "min"):
        values = [r.value for operand in reads for r in operand]
        if values.count(max(values) if frame.rule == "max" else min(values)) > 1:
            raise SolverError("two depots share the extreme value, so none is the one")
    answer = evaluate(frame, reads)
    expected = answer.expected(question)
    solution = Solution(operation=frame.op, lookups=walk.lookups, facts=walk.facts)
    return Solved(expected, len(walk.lookups), solution)
