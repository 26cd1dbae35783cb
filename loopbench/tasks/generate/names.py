"""New proper names from seeded syllables: companies, cities, regions, people.

No model has seen these worlds, so the names must be new, and the exact grader must never
read one as a number: a name holds letters only, and no word of it is a number word
("one", "ten", ...), which the grader counts wherever it stands as a whole word.
"""

from __future__ import annotations

import random
import re

from loopbench.graders.exact import WORD_VALUES

# Company kinds, the second word of a company's name ("Veltrano Haulage").
KINDS = ("Haulage", "Freight", "Transport", "Cargo", "Trucking", "Distribution")

_ONSETS = (
    *("b", "br", "d", "dr", "f", "g", "gr", "h", "k", "kr", "l", "m"),
    *("n", "p", "r", "s", "st", "t", "tr", "v", "z", "c", "w", "sk"),
)
_VOWELS = ("a", "e", "i", "o", "u", "a", "e", "o", "ai", "ei", "ou")
_CODAS = ("", "", "", "n", "r", "l", "s", "m", "rn", "nd", "st", "lt")
# Endings give each kind of name its own look, so a reader can tell a town from a person.
_CITY_ENDS = ("vik", "holm", "ford", "mere", "stad", "wick", "dale", "port", "ven", "sund", "by")
_SURNAME_ENDS = ("ow", "er", "in", "ley", "ton", "ard", "ing", "ett", "ock", "well")
_FIRST_ENDS = ("a", "o", "en", "is", "el", "ia", "an", "et")
_REGION_ENDS = ("land", "mark", "shire", "moor", "vale")

# Words a question or an entry uses around names: a name equal to one would confuse a reader.
_RESERVED = {
    "the",
    "and",
    "depot",
    "yard",
    "hub",
    "terminal",
    "history",
    "workshop",
    "entry",
    "manager",
    "founder",
    "city",
    "town",
    "mount",
    *(kind.casefold() for kind in KINDS),
}
VOWEL_LETTERS = "aeiou"
# Hard to read or say: a doubled a, i or u, three vowels or four consonants in a row.
_AWKWARD = re.compile(r"aa|ii|uu|[aeiou]{3}|[^aeiou]{4}|(.)\1\1")


def is_clean(name: str) -> bool:
    """Letters and spaces only, and no word of it a number word the grader would count."""
    words = name.split(" ")
    return all(
        word.isascii() and word.isalpha() and word.casefold() not in WORD_VALUES for word in words
    )


class NameMaker:
    """Draws names from one ``random.Random``; never gives the same word twice."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def _syllable(self) -> str:
        return self.rng.choice(_ONSETS) + self.rng.choice(_VOWELS)

    def _word(self, syllables: int, ends: tuple[str, ...] | None = None) -> str:
        for _ in range(1000):
            stem = "".join(self._syllable() for _ in range(syllables))
            word = (stem + (self.rng.choice(ends) if ends else self.rng.choice(_CODAS))).title()
            if self._take(word):
                return word
        raise RuntimeError("ran out of new names; the syllable lists are too short")

    def _take(self, word: str) -> bool:
        folded = word.casefold()
        if not (4 <= len(word) <= 12) or folded in self.used or folded in _RESERVED:
            return False
        if not is_clean(word) or _AWKWARD.search(folded):
            return False
        self.used.add(folded)
        return True

    def company_word(self) -> str:
        return self._word(self.rng.choice((2, 3)))

    def city(self) -> str:
        for _ in range(100):  # at least six letters: short ones turn out English ("Baby")
            word = self._word(self.rng.choice((1, 2)), _CITY_ENDS)
            if len(word) >= 6:
                return word
        raise RuntimeError("ran out of new city names")

    def region(self) -> str:
        return self._word(1, _REGION_ENDS)

    def person(self) -> str:
        return f"{self._word(1, _FIRST_ENDS)} {self._word(self.rng.choice((1, 2)), _SURNAME_ENDS)}"

    def near(self, word: str) -> str:
        """A new word one vowel away from ``word`` (Veltrano -> Veltrana): a look-alike."""
        places = [i for i, c in enumerate(word) if c.casefold() in VOWEL_LETTERS]
        for _ in range(200):
            i = self.rng.choice(places)
            swap = self.rng.choice([v for v in VOWEL_LETTERS if v != word[i].casefold()])
            changed = word[:i] + (swap.upper() if i == 0 else swap) + word[i + 1 :]
            if self._take(changed):
                return changed
        return self.company_word()  # every neighbour taken: any new word will do

    def near_person(self, name: str) -> str:
        """A new person's name sharing one half with ``name`` and a look-alike other half."""
        first, last = name.split(" ", 1)
        if self.rng.random() < 0.5:
            return f"{first} {self.near(last)}"
        return f"{self.near(first)} {last}"
