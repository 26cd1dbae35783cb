"""Reading entries back: each kind of entry's text parsed into the facts it states.

The solver reads only what a lookup returns, so these patterns are the whole of what it
knows about how entries are written; every phrasing in encyclopedia.py must match one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from loopbench.harness.errors import HarnessFault
from loopbench.tasks.generate.frames import Kind

NAME = r"[A-Z][a-z]+(?: [A-Z][a-z]+)+"  # a person or a company: two words or more
WORD = r"[A-Z][a-z]+"  # a city
TITLE = r"[A-Z][\w-]*(?: [A-Z][\w-]*)*"  # a public fact's title, e.g. "Mount Everest"


class ReadError(HarnessFault):
    pass


@dataclass
class Record:
    """What one entry states."""

    title: str
    kind: Kind
    fields: dict[str, int | str] = field(default_factory=dict)
    depots: dict[str, str] = field(default_factory=dict)
    """A company's depots: city -> the title of the depot's entry."""

    @property
    def label(self) -> tuple[str, ...]:
        """How an answer names it: a depot by its city (then company), others by title."""
        if self.kind == "depot":
            return (str(self.fields["city"]), str(self.fields["company"]))
        return (self.title,)

    def get(self, name: str) -> int | str:
        if name not in self.fields:
            raise ReadError(f"the entry {self.title!r} states no {name}")
        return self.fields[name]


def _number(text: str) -> int:
    return int(text.replace(",", ""))


_PATTERNS: dict[str, dict[str, list[str]]] = {
    "company": {
        "founded": [r"founded in (\d{4})", rf"(?:founded|set up) by {NAME} in (\d{{4}})"],
        "founder": [rf"founded in \d{{4}} by ({NAME})", rf"(?:founded|set up) by ({NAME})"],
        "ceo": [
            rf"chief executive is ({NAME})",
            rf"Chief executive: ({NAME})",
            rf"chief executive, ({NAME})",
        ],
    },
    "depot": {
        "opened": [r"[Oo]pened in (\d{4})"],
        "trucks": [r"(\d+) trucks"],
        "vans": [r"(\d+) vans"],
        "manager": [rf"Manager: ({NAME})\.", rf"managed by ({NAME})\.", rf"manager is ({NAME})\."],
    },
    "person": {
        "born": [r"born (\d{4}) in", r"born in [A-Z][a-z]+ in (\d{4})", r"born in (\d{4}) in"],
        "birthplace": [
            rf"born \d{{4}} in ({WORD})",
            rf"born in ({WORD}) in \d{{4}}",
            rf"born in \d{{4}} in ({WORD})",
        ],
        "since": [r"since (\d{4})", r"became [^.]* in (\d{4})"],
    },
    "city": {
        "population": [r"Population: ([\d,]+)", r"population of ([\d,]+)", r"of ([\d,]+) people"]
    },
    "mountain": {"height": [r"Height: ([\d,]+) metres"]},
    "river": {"length": [r"Length: about ([\d,]+) kilometres"]},
    "landmark": {"opened": [r"opened in (\d{4})"]},
}
_NAMED_FIELDS = {"founder", "ceo", "manager", "birthplace"}
_DEPOT_OF = [
    rf"^(?P<company>{NAME}) depot in (?P<city>{WORD}),",
    rf"^The (?P<city>{WORD}) depot of (?P<company>{NAME}) opened",
    rf", (?P<company>{NAME})'s depot at (?P<city>{WORD}) keeps",
]
_LISTED = re.compile(rf"({WORD}) \(entry '([^']+)'\)")


def parse_entry(kind: Kind, title: str, text: str) -> Record:
    """The facts ``text`` states about the ``kind`` of thing titled ``title``; a fact
    whose pattern matches nowhere is simply absent (``Record.get`` says so when used)."""
    record = Record(title, kind)
    for name, patterns in _PATTERNS[kind].items():
        for pattern in patterns:
            match = re.search(pattern, text)
            if match:
                found = match.group(1)
                record.fields[name] = found if name in _NAMED_FIELDS else _number(found)
                break
    if kind == "depot":
        for pattern in _DEPOT_OF:
            match = re.search(pattern, text)
            if match:
                record.fields.update(company=match["company"], city=match["city"])
                break
        else:
            raise ReadError(f"the entry {title!r} does not say whose depot it is, or where")
    if kind == "company":
        record.depots = dict(_LISTED.findall(text))
    return record
