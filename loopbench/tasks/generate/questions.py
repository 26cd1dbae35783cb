"""Drafting questions: a frame filled with references drawn from the world, kept only if
its walk has the wanted number of look-ups and its answer is well posed.

The walk here is worked out from the world (what the generator knows); the solver later
works it out again from the text alone, and the two must agree.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction

from loopbench.graders.answer_keys import Operation
from loopbench.harness.errors import HarnessFault
from loopbench.tasks.generate.frames import (
    FRAMES,
    PUBLIC_FRAMES,
    Answer,
    Form,
    Frame,
    Kind,
    Read,
    Ref,
    evaluate,
    near_a_rounding_edge,
)
from loopbench.tasks.generate.public import PublicFact
from loopbench.tasks.generate.world import City, Company, Depot, Person, World

Thing = Company | Depot | Person | City | PublicFact
ATTEMPTS = 4000


class DraftError(HarnessFault):
    pass


@dataclass(frozen=True)
class Draft:
    frame: Frame
    question: str
    lookups: tuple[str, ...]
    answer: Answer
    slice: str


def feasible(hops: int) -> tuple[Operation, ...]:
    """The operations a question of ``hops`` look-ups can have: a single look-up is a fact
    (perhaps with arithmetic inside one entry); "which" needs a company and two depots."""
    if hops == 1:
        return ("lookup", "difference", "sum", "ratio")
    if hops == 2:
        return ("difference", "sum", "ratio", "comparison")
    return ("difference", "sum", "ratio", "comparison", "which")


class WorldWalk:
    """The walk a question takes, worked out from the world: titles in the solver's order."""

    def __init__(self, world: World, public: list[PublicFact]) -> None:
        self.world = world
        self.public = {f.title: f for f in public}
        self.titles: list[str] = []

    def _visit(self, title: str) -> None:
        if title not in self.titles:
            self.titles.append(title)

    def subject(self, ref: Ref, kind: Kind) -> Thing:
        world = self.world
        if ref.form == "depot":
            company = world.company(ref.name)
            depot = company.depot(ref.city)
            if not depot.regular:  # its title is only in the company's entry
                self._visit(company.name)
            self._visit(depot.title)
            return depot
        if ref.form == "name":
            self._visit(ref.name)
            if ref.name in self.public:
                return self.public[ref.name]
            if kind == "company":
                return world.company(ref.name)
            return world.people[ref.name] if kind == "person" else world.cities[ref.name]
        assert ref.inner is not None
        if ref.form == "birthplace":
            person = self.subject(ref.inner, "person")
            assert isinstance(person, Person)
            self._visit(person.birthplace)
            return world.cities[person.birthplace]
        holder = self.subject(ref.inner, "depot" if ref.form == "manager" else "company")
        name = str(getattr(holder, ref.form))
        self._visit(name)
        return world.people[name]

    def operand(self, thing: Thing, path: tuple[str, ...]) -> list[Read]:
        *links, last = path
        for link in links:
            if link == "depots":
                assert isinstance(thing, Company)
                for depot in thing.depots:
                    self._visit(depot.title)
                return [Read(_value(d, last), _label(d)) for d in thing.depots]
            name = str(getattr(thing, link))
            self._visit(name)
            thing = self.world.people[name]
        return [Read(_value(thing, last), _label(thing))]


def _value(thing: Thing, name: str) -> int:
    value = thing.value if isinstance(thing, PublicFact) else getattr(thing, name)
    if not isinstance(value, int):
        raise DraftError(f"{thing!r} has no {name}")
    return value


def _label(thing: Thing) -> tuple[str, ...]:
    if isinstance(thing, Depot):
        return (thing.city, thing.company)
    return (thing.title,) if isinstance(thing, PublicFact) else (thing.name,)


class Sampler:
    """Draws references at random, often from one "home" company so that questions compare
    things that belong together."""

    def __init__(self, world: World, rng: random.Random) -> None:
        self.world, self.rng = world, rng
        self.home = world.companies[0]

    def company(self) -> Company:
        if self.rng.random() < 0.6:
            return self.home
        return self.rng.choice(self.world.companies)

    def ref(self, kind: Kind) -> Ref:
        rng = self.rng
        if kind == "company":
            return Ref("name", self.company().name)
        if kind == "depot":
            company = self.company()
            return Ref("depot", company.name, rng.choice(company.depots).city)
        if kind == "person":
            form: Form = rng.choice(("ceo", "founder", "manager", "name"))
            if form == "name":
                return Ref("name", rng.choice(sorted(self.world.people)))
            inner_kind: Kind = "depot" if form == "manager" else "company"
            return Ref(form, inner=self.ref(inner_kind))
        if rng.random() < 0.3:
            return Ref("birthplace", inner=self.ref("person"))
        return Ref("name", rng.choice(self.company().depots).city)


def draft(frame: Frame, refs: list[Ref], world: World, public: list[PublicFact]) -> Draft:
    """The question ``frame`` makes of ``refs``, its walk and its answer; DraftError when it
    would be ill posed (a negative difference, a tie, a ratio at a rounding edge)."""
    walk = WorldWalk(world, public)
    things = [walk.subject(r, k) for r, k in zip(refs, frame.slots, strict=True)]
    if len({id(t) for t in things}) < len(things):
        raise DraftError("two slots refer to the same thing")
    reads = [walk.operand(things[slot], path) for slot, path in frame.operands]
    first = [r[0].value for r in reads]
    if frame.rule == "a-b" and first[0] - first[1] <= 0:
        raise DraftError("the difference is not positive")
    is_age = frame.operands[-1][1][-1] == "born" and frame.operands[0][1][-1] != "born"
    if is_age and not 18 <= first[0] - first[1] <= 90:  # no working person's age
        raise DraftError("an unlikely age")
    if frame.rule in ("more", "less") and first[0] == first[1]:
        raise DraftError("a tie")
    if frame.rule == "ratio" and near_a_rounding_edge(Fraction(first[0], first[1])):
        raise DraftError("the ratio sits at a rounding edge")
    if frame.rule in ("max", "min"):
        values = [r.value for operand in reads for r in operand]
        if values.count(max(values) if frame.rule == "max" else min(values)) > 1:
            raise DraftError("a tie")
    question = frame.text.format(**{s: r.phrase for s, r in zip("abc", refs, strict=False)})
    hops = len(walk.titles)
    where = "public" if frame in PUBLIC_FRAMES else f"hops-{hops}"
    return Draft(frame, question, tuple(walk.titles), evaluate(frame, reads), where)


def make_drafts(
    world: World, rng: random.Random, targets: list[tuple[int, Operation]]
) -> list[Draft]:
    """One draft per (hops, operation) target, each question asked once."""
    sampler = Sampler(world, rng)
    drafts: list[Draft] = []
    asked: set[str] = set()
    for hops, op in targets:
        frames = [f for f in FRAMES if f.op == op and len(f.slots) <= hops]
        for _ in range(ATTEMPTS):
            frame = rng.choice(frames)
            sampler.home = rng.choice(world.companies)
            if frame.op == "which" and frame.slots == ("company",):  # a look-up per depot
                sized = [c for c in world.companies if len(c.depots) == hops - 1]
                if not sized:
                    continue
                refs = [Ref("name", rng.choice(sized).name)]
            else:
                refs = [sampler.ref(kind) for kind in frame.slots]
            try:
                made = draft(frame, refs, world, [])
            except DraftError:
                continue
            if len(made.lookups) == hops and made.question not in asked:
                asked.add(made.question)
                drafts.append(made)
                break
        else:
            raise DraftError(
                f"could not draw a new {op} question of {hops} look-up{'s' * (hops > 1)} "
                f"from this world in {ATTEMPTS} tries; lower --n (or --ambiguity, which "
                "takes depots out of single look-ups), or allow more --operations or --hops"
            )
    return drafts


def public_drafts(
    world: World, rng: random.Random, count: int, public: list[PublicFact]
) -> list[Draft]:
    """``count`` questions on real facts, drawn from every well-posed pair and frame."""
    options = []
    for frame in PUBLIC_FRAMES:
        titles = [f.title for f in public if f.kind == frame.slots[0]]
        for a in titles:
            for b in titles:
                if a != b:
                    try:
                        refs = [Ref("name", a), Ref("name", b)]
                        options.append(draft(frame, refs, world, public))
                    except DraftError:
                        continue
    if count > len(options):
        raise DraftError(f"--public may be at most {len(options)}")
    return rng.sample(options, count)
