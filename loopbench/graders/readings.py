"""The typed reading of an answer: what the exact grader reads alike, and what votes on an
exact set compare (seed 003's canonical typed answer).

A reading is the multiset of numbers the answer states (``numbers_in``: "84 years" and
"eighty-four" are both 84) and the set of entities it names (its normalised words, less
numbers, function words, units and the remains of possessives and contractions, whatever
their case). As text (``typed_key``) it is a JSON object, which ``typed_of`` reads back,
so that a vote over canonical texts still knows which reading supports which.
"""

from __future__ import annotations

import json

from loopbench.graders.exact import normalise, numbers_in

#: Words that name no entity: function words, comparison words, common units, and what
#: is left of a possessive or a contraction ("Hamburg's", "it's") once normalised.
FILLER = frozenset(
    """
    a an the and or of in on at to by for from with than then is are was were be it its
    this that there their which who what answer final about approximately around roughly
    probably likely so more fewer less most least larger largest smaller smallest higher
    highest lower lowest bigger biggest longer longest shorter shortest older oldest
    younger youngest difference has have had years year months days km kilometres
    kilometers m metres meters miles feet ft per cent percent total s t d ll re ve
    """.split()  # noqa: SIM905  (a word list reads better as text)
)

Reading = tuple[tuple[float, ...], frozenset[str]]


def typed_reading(answer: str) -> Reading:
    """What a vote compares: the numbers stated (as a multiset) and the entities named."""
    numbers = tuple(sorted(numbers_in(answer)))
    words = normalise(answer).split()
    # guard: self-consistency-votes-entities-too
    return numbers, frozenset(w for w in words if w not in FILLER and not numbers_in(w))


def supports(narrower: Reading, wider: Reading) -> bool:
    """Same numbers, and only some of ``wider``'s entities: an answer that does not
    contradict ``wider``."""
    return narrower[0] == wider[0] and narrower[1] < wider[1]


def typed_key(answer: str) -> str:
    """The answer's typed reading as text: equal for answers read alike."""
    numbers, entities = typed_reading(answer)
    return json.dumps({"numbers": [float(n) for n in numbers], "entities": sorted(entities)})


def typed_of(key: str) -> Reading | None:
    """The reading ``typed_key`` wrote as ``key``; None for any other text."""
    try:
        value = json.loads(key)
    except ValueError:
        return None
    if not isinstance(value, dict) or set(value) != {"numbers", "entities"}:
        return None
    numbers, entities = value["numbers"], value["entities"]
    if not isinstance(numbers, list) or not isinstance(entities, list):
        return None
    if not all(isinstance(n, int | float) and not isinstance(n, bool) for n in numbers):
        return None
    if not all(isinstance(e, str) for e in entities):
        return None
    return tuple(float(n) for n in numbers), frozenset(entities)
