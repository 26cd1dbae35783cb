"""A fictional haulage world: companies, their depots in cities, and the people who run them.

Everything is drawn from one ``random.Random`` in a fixed order, so a seed gives the same
world byte for byte. The knobs shape it: ``ambiguity`` is the share of depots whose entry
keeps a local title the question's words cannot produce; ``distractors`` is the share of
companies given look-alikes (a company one vowel away with a depot in the same city, a
person one vowel away, and an entry that looks relevant but is not).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Literal

from loopbench.tasks.generate.names import KINDS, NameMaker

Role = Literal["founder", "ceo", "manager", "retired"]
LATEST = 2024

# The local titles an ambiguous depot keeps (the seed's "Porto yard (Veltrano)" problem).
LOCAL_TITLES = ("{city} yard ({short})", "{short} terminal at {city}", "{city} hub ({short})")


@dataclass
class City:
    name: str
    region: str
    population: int
    style: int  # which phrasing its entry uses


@dataclass
class Person:
    name: str
    born: int
    birthplace: str
    role: Role
    company: str
    since: int | None = None  # the year they took their post (chief executive, manager)
    depot_city: str = ""  # a manager's depot
    start: int = 0  # a retired person's years with the company
    until: int = 0
    style: int = 0


@dataclass
class Depot:
    company: str
    short: str
    city: str
    opened: int
    trucks: int
    vans: int
    manager: str
    title: str = ""
    regular: bool = True  # titled by the convention, "<company> <city> depot"
    style: int = 0


@dataclass
class Company:
    name: str
    short: str  # its first word, used in local depot titles
    hq: str
    founded: int
    founder: str
    ceo: str
    depots: list[Depot] = field(default_factory=list)
    twin_of: str = ""  # a look-alike made as a distractor
    style: int = 0

    def depot(self, city: str) -> Depot:
        return next(d for d in self.depots if d.city == city)


@dataclass
class Extra:
    """An entry that looks relevant and is not: a workshop, a company's history."""

    title: str
    text: str
    company: str


@dataclass
class World:
    companies: list[Company]
    cities: dict[str, City]
    people: dict[str, Person]
    extras: list[Extra]

    def company(self, name: str) -> Company:
        return next(c for c in self.companies if c.name == name)

    @property
    def depots(self) -> list[Depot]:
        return [d for c in self.companies for d in c.depots]


def company_count(n: int) -> int:
    """Enough companies for ``n`` different questions, and an encyclopedia of a few hundred."""
    return max(6, min(30, math.ceil(n / 25)))


def build_world(rng: random.Random, n: int, ambiguity: float, distractors: float) -> World:
    names = NameMaker(rng)
    base = company_count(n)
    twins = round(distractors * base)
    # Sizes first (2 to 4 depots; the first two companies have 2 and 3, so "which" questions
    # of 3 and 4 look-ups always have a company to ask about).
    sizes = [2, 3, *(rng.randint(2, 4) for _ in range(base - 2))]
    twin_sizes = [rng.randint(2, 3) for _ in range(twins)]
    depots = sum(sizes) + sum(twin_sizes)
    # With distractors, cities are shared, so another company's depot can sit in the same one.
    pool = depots + 4 if distractors == 0 else max(6, math.ceil(depots * (1 - distractors / 2)))
    regions = [names.region() for _ in range(max(2, pool // 6))]
    cities: dict[str, City] = {}
    for _ in range(pool):
        name = names.city()
        cities[name] = City(name, rng.choice(regions), _population(rng, cities), rng.randrange(3))
    free = list(cities)
    rng.shuffle(free)
    people: dict[str, Person] = {}
    companies: list[Company] = []

    def city_choice(k: int) -> list[str]:
        if distractors == 0:  # every depot in a city of its own: the plainest world
            return [free.pop() for _ in range(k)]
        return rng.sample(sorted(cities), k)

    for size in sizes:
        companies.append(_company(rng, names, names.company_word(), city_choice(size), people))
    originals = [companies[i * base // twins] for i in range(twins)]
    for original, size in zip(originals, twin_sizes, strict=True):
        shared = rng.choice([d.city for d in original.depots])
        others = [c for c in sorted(cities) if c not in {shared}]
        chosen = [shared, *rng.sample(others, size - 1)]
        twin = _company(rng, names, names.near(original.short), chosen, people, original)
        companies.append(twin)
    _title_depots(rng, [d for c in companies for d in c.depots], ambiguity)
    extras = _distractors(rng, names, originals, people)
    for person in people.values():
        person.birthplace = person.birthplace or rng.choice(sorted(cities))
    return World(companies, cities, people, extras)


def _population(rng: random.Random, taken: dict[str, City]) -> int:
    seen = {c.population for c in taken.values()}
    while True:
        value = rng.randrange(8_000, 900_000, 100)
        if value not in seen:
            return value


def _company(
    rng: random.Random,
    names: NameMaker,
    short: str,
    depot_cities: list[str],
    people: dict[str, Person],
    original: Company | None = None,
) -> Company:
    kind = original.name.split(" ", 1)[1] if original else rng.choice(KINDS)
    name = f"{short} {kind}"
    founded = rng.randint(1890, 1990)
    cast = Cast(rng, names, people)
    founder = _person(cast, "founder", name, founded - rng.randint(24, 48))
    ceo_born = rng.randint(1950, 1985)
    ceo = _person(cast, "ceo", name, ceo_born)
    ceo.since = rng.randint(max(founded, ceo_born + 30), LATEST - 1)
    company = Company(name, short, depot_cities[0], founded, founder.name, ceo.name)
    company.twin_of = original.name if original else ""
    company.style = rng.randrange(3)
    # No two depots of a company share a count or a year: "which has the most" has one answer.
    trucks_all = rng.sample(range(6, 151), len(depot_cities))
    vans_all = rng.sample(range(2, 61), len(depot_cities))
    opened_all = rng.sample(range(founded, 2021), len(depot_cities))
    for city, trucks, vans, opened in zip(
        depot_cities, trucks_all, vans_all, opened_all, strict=True
    ):
        born = rng.randint(1950, 1992)
        manager = _person(cast, "manager", name, born)
        manager.since = rng.randint(max(opened, born + 23), LATEST)
        manager.depot_city = city
        depot = Depot(name, short, city, opened, trucks, vans, manager.name, style=rng.randrange(3))
        company.depots.append(depot)
    return company


@dataclass
class Cast:
    """Who the world's people are, and what makes new ones: its random draws and names."""

    rng: random.Random
    names: NameMaker
    people: dict[str, Person]


def _person(cast: Cast, role: Role, company: str, born: int, name: str = "") -> Person:
    person = Person(
        name or cast.names.person(), born, "", role, company, style=cast.rng.randrange(3)
    )
    cast.people[person.name] = person
    return person


def _title_depots(rng: random.Random, depots: list[Depot], ambiguity: float) -> None:
    for depot in depots:
        depot.title = f"{depot.company} {depot.city} depot"
    for depot in rng.sample(depots, round(ambiguity * len(depots))):
        local = rng.choice(LOCAL_TITLES)
        depot.title, depot.regular = local.format(city=depot.city, short=depot.short), False


def _distractors(
    rng: random.Random, names: NameMaker, chosen: list[Company], people: dict[str, Person]
) -> list[Extra]:
    """For each chosen company: a person one vowel from one of its people, and a workshop in
    one of its depot cities or its history, which mention trucks and years like a depot."""
    extras = []
    for company in chosen:
        model = people[rng.choice([company.ceo, *(d.manager for d in company.depots)])]
        born = model.born + rng.choice((-3, -2, -1, 1, 2, 3))
        name = names.near_person(model.name)
        twin = _person(Cast(rng, names, people), "retired", company.name, born, name)
        twin.start = min(max(company.founded, born + 20), LATEST - 5)
        twin.until = rng.randint(twin.start + 5, LATEST)
        if rng.random() < 0.5:
            city = rng.choice(company.depots).city
            text = (
                f"{company.name}'s vehicle workshop in {city}, opened in "
                f"{rng.randint(company.founded, 2022)}. It services about "
                f"{rng.randint(10, 90)} trucks a month; it is not a depot and keeps no fleet."
            )
            extras.append(Extra(f"{company.name} {city} workshop", text, company.name))
        else:
            first = company.depots[0].city
            text = (
                f"{company.name} began in {company.founded} with {rng.randint(2, 9)} trucks "
                f"hired in {first}. By {company.founded + rng.randint(10, 30)} it ran "
                f"{rng.randint(20, 80)} trucks from a single yard; its present depots are listed "
                f"in the entry '{company.name}'."
            )
            extras.append(Extra(f"History of {company.name}", text, company.name))
    return extras
