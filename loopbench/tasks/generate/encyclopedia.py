"""The world written as an encyclopedia: entries in a few regular phrasings, related titles
for the improved lookup, and a naming note that says honestly how entries are titled.

Facts are stated once, in the entry of the thing they belong to, so the shortest walk to a
fact is well defined (see solver.py). A company's entry lists every depot's title, which is
the only place an ambiguous depot's title appears in text.
"""

from __future__ import annotations

from typing import TypedDict

from loopbench.tasks.generate.public import PublicFact
from loopbench.tasks.generate.world import City, Company, Depot, Person, World
from loopbench.tasks.tools import fold

# The convention the solver may apply to a question's words; it reads it from ``naming``.
DEPOT_CONVENTION = "'<company> <city> depot'"
_COUNT_WORDS = {2: "two", 3: "three", 4: "four"}


class BookJson(TypedDict):
    """encyclopedia.json's content."""

    entries: dict[str, str]
    related: dict[str, list[str]]
    naming: str


_TOWNS = ("market town", "mill town", "railway town", "harbour town", "hill town")
_CITIES = ("port city", "river city", "cathedral city", "industrial city")


def company_text(company: Company) -> str:
    listed = [f"in {d.city} (entry '{d.title}')" for d in company.depots]
    places = ", ".join(listed[:-1]) + " and " + listed[-1]
    k = _COUNT_WORDS[len(company.depots)]
    if company.style == 0:
        return (
            f"{company.name} is a road-haulage company headquartered in {company.hq}. It was "
            f"founded in {company.founded} by {company.founder}, and its chief executive is "
            f"{company.ceo}. It runs {k} depots: {places}."
        )
    if company.style == 1:
        return (
            f"Haulage firm based in {company.hq}, founded by {company.founder} in "
            f"{company.founded}. Chief executive: {company.ceo}. Depots ({k}): "
            f"{'; '.join(item.removeprefix('in ') for item in listed)}."
        )
    return (
        f"{company.name} was set up by {company.founder} in {company.founded} and has its head "
        f"office in {company.hq}. It is led by its chief executive, {company.ceo}. Its {k} "
        f"depots are {places}."
    )


def depot_text(depot: Depot) -> str:
    fleet = f"{depot.trucks} trucks and {depot.vans} vans"
    if depot.style == 0:
        return (
            f"{depot.company} depot in {depot.city}, opened in {depot.opened}. Vehicles: "
            f"{fleet}. Manager: {depot.manager}."
        )
    if depot.style == 1:
        return (
            f"The {depot.city} depot of {depot.company} opened in {depot.opened}. It runs "
            f"{fleet} and is managed by {depot.manager}."
        )
    return (
        f"Opened in {depot.opened}, {depot.company}'s depot at {depot.city} keeps {fleet}. "
        f"Its manager is {depot.manager}."
    )


def person_text(person: Person) -> str:
    surname = person.name.split(" ", 1)[1]
    if person.role == "retired":
        return (
            f"{person.name} (born {person.born} in {person.birthplace}) is a retired dispatcher "
            f"who worked for {person.company} from {person.start} to {person.until}."
        )
    post = {
        "ceo": f"chief executive of {person.company}",
        "manager": f"manager of {person.company}'s {person.depot_city} depot",
        "founder": f"founder of {person.company}",
    }[person.role]
    if person.role == "founder":
        took = f"founded {person.company}"
    else:
        took = f"became {post} in {person.since}"
    if person.style == 0:
        held = f"has been {post} since {person.since}" if person.since else took
        return f"{person.name} (born {person.born} in {person.birthplace}) {held}."
    if person.style == 1:
        return f"{person.name} was born in {person.birthplace} in {person.born}. {surname} {took}."
    if person.since:
        return (
            f"{post[0].upper()}{post[1:]} since {person.since}, {person.name} was born in "
            f"{person.born} in {person.birthplace}."
        )
    return f"{person.name}, {post}, was born in {person.born} in {person.birthplace}."


def city_text(city: City) -> str:
    kinds = _TOWNS if city.population < 100_000 else _CITIES
    town = kinds[city.population // 100 % len(kinds)]
    town = ("an " if town[0] in "aeiou" else "a ") + town
    people = f"{city.population:,}"
    if city.style == 0:
        return f"{city.name} is {town} in the {city.region} region. Population: {people}."
    if city.style == 1:
        return f"{city.name}, {town} in {city.region}, has a population of {people}."
    return f"{city.name} is {town} of {people} people in the {city.region} region."


def naming_text(world: World, public: bool) -> str:
    regular = [d.title for d in world.depots if d.regular]
    local = any(not d.regular for d in world.depots)
    company, person = world.companies[0], world.companies[0].ceo
    city = sorted(world.cities)[0]
    said = [
        f"Entries are titled by the proper name of one thing: a company ('{company.name}'), "
        f"a person ('{person}') or a city ('{city}')."
    ]
    if regular and local:
        said.append(
            f"A company's depot is usually titled {DEPOT_CONVENTION}, e.g. '{regular[0]}'; "
            "some depots keep an older local title instead (a yard, terminal or hub named "
            "after their city and the company's first word)."
        )
    elif regular:
        said.append(f"A company's depot is titled {DEPOT_CONVENTION}, e.g. '{regular[0]}'.")
    else:
        said.append(
            "A company's depots keep local titles (a yard, terminal or hub named after "
            "their city and the company's first word)."
        )
    said.append("A company's entry lists the titles of all its depots.")
    if world.extras:
        said.append(
            "Workshops and company histories have entries of their own, titled "
            "'<company> <city> workshop' and 'History of <company>'."
        )
    if public:
        said.append(
            "Mountains, rivers and landmarks are titled by their usual English names, "
            "e.g. 'Mount Everest', 'Nile', 'Eiffel Tower'."
        )
    return " ".join(said)


def write_book(world: World, public: list[PublicFact]) -> BookJson:
    """encyclopedia.json's content. Entries come in a fixed order (cities, companies, depots,
    people, other entries, public facts; each by title), which is the order the improved
    lookup lists matches in, so a query naming a city shows that city's entry first."""
    entries: dict[str, str] = {}
    related: dict[str, list[str]] = {}
    depots_in: dict[str, list[str]] = {}
    for depot in world.depots:
        depots_in.setdefault(depot.city, []).append(depot.title)
    for city in sorted(world.cities.values(), key=lambda c: c.name):
        entries[city.name] = city_text(city)
        if depots_in.get(city.name):
            related[city.name] = sorted(depots_in[city.name])
    for company in sorted(world.companies, key=lambda c: c.name):
        entries[company.name] = company_text(company)
        extras = [e.title for e in world.extras if e.company == company.name]
        listed = [d.title for d in company.depots]
        related[company.name] = [*listed, company.ceo, company.founder, *extras]
    for depot in sorted(world.depots, key=lambda d: d.title):
        entries[depot.title] = depot_text(depot)
        related[depot.title] = [depot.company, depot.manager, depot.city]
    for person in sorted(world.people.values(), key=lambda p: p.name):
        entries[person.name] = person_text(person)
        home = person.company
        if person.role == "manager":
            home = world.company(person.company).depot(person.depot_city).title
        related[person.name] = [home, person.birthplace]
    for extra in sorted(world.extras, key=lambda e: e.title):
        entries[extra.title] = extra.text
        related[extra.title] = [extra.company]
    for fact in sorted(public, key=lambda f: f.title):
        entries[fact.title] = fact.text
        related[fact.title] = sorted(f.title for f in public if f.kind == fact.kind and f != fact)
    folded = {fold(t) for t in entries}
    if len(folded) != len(entries):  # the lookup folds case: two titles must not fold alike
        raise RuntimeError("two entries have titles that differ only in case")
    return {"entries": entries, "related": related, "naming": naming_text(world, bool(public))}
