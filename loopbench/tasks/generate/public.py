"""Real, stable public facts for the optional "public" slice (``--public N``).

Each is answerable from world knowledge as well as from its entry. Facts age and sources
differ (Everest was re-measured in 2020), which is why the slice is off by default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

PublicKind = Literal["mountain", "river", "landmark"]


@dataclass(frozen=True)
class PublicFact:
    title: str
    kind: PublicKind
    value: int
    text: str

    @property
    def field(self) -> str:
        return {"mountain": "height", "river": "length", "landmark": "opened"}[self.kind]


def _mountain(title: str, where: str, metres: int) -> PublicFact:
    return PublicFact(title, "mountain", metres, f"{where} Height: {metres:,} metres.")


def _river(title: str, where: str, km: int) -> PublicFact:
    return PublicFact(title, "river", km, f"{where} Length: about {km:,} kilometres.")


def _landmark(title: str, what: str, year: int) -> PublicFact:
    return PublicFact(title, "landmark", year, f"{what}, opened in {year}.")


PUBLIC_FACTS = (
    _mountain("Mount Everest", "The highest mountain above sea level, in the Himalayas.", 8849),
    _mountain("Kilimanjaro", "Dormant volcano in Tanzania, the highest in Africa.", 5895),
    _mountain("Aconcagua", "The highest mountain of the Andes, in Argentina.", 6961),
    _mountain("Denali", "The highest mountain of North America, in Alaska.", 6190),
    _mountain("Mount Elbrus", "Dormant volcano in the Caucasus, the highest in Europe.", 5642),
    _mountain("Mount Fuji", "Volcano on Honshu, the highest mountain in Japan.", 3776),
    _mountain("Matterhorn", "Pyramidal peak of the Alps on the Swiss-Italian border.", 4478),
    _river("Nile", "River in north-east Africa flowing into the Mediterranean Sea.", 6650),
    _river("Danube", "River of central and south-eastern Europe ending in the Black Sea.", 2850),
    _river("Volga", "The longest river in Europe, ending in the Caspian Sea.", 3530),
    _river("Rhine", "River rising in the Swiss Alps and ending in the North Sea.", 1230),
    _river("Thames", "River of southern England flowing through London.", 346),
    _landmark("Eiffel Tower", "Wrought-iron lattice tower in Paris", 1889),
    _landmark("Brooklyn Bridge", "Suspension bridge over the East River in New York", 1883),
    _landmark("Tower Bridge", "Bascule and suspension bridge over the Thames in London", 1894),
    _landmark("Golden Gate Bridge", "Suspension bridge across the Golden Gate strait", 1937),
    _landmark("Empire State Building", "Skyscraper in Midtown Manhattan", 1931),
    _landmark("Sydney Opera House", "Performing-arts centre on Sydney Harbour", 1973),
    _landmark("Suez Canal", "Sea-level canal joining the Mediterranean and the Red Sea", 1869),
    _landmark("Panama Canal", "Lock canal across the Isthmus of Panama", 1914),
    _landmark("Channel Tunnel", "Railway tunnel under the English Channel", 1994),
)
