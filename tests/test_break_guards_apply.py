"""Every guard in ``tests/break_guards.py`` still applies, and every guard in the product
is there: each marker (``# guard: NAME``) has an entry, each entry names a marker found once,
its mutation fits the marked statement and leaves a file that parses, and its named tests
exist. A guard that no longer applies would be broken nowhere, and break_guards would say so
only when run; this says which, all at once, in the suite, by name."""

from tests.break_guards import MUTATIONS, problems
from tests.guard_markers import all_markers, bad_names, mutate

MARKED = """\
def admit(calls, floor):
    # guard: call-floor
    if calls < floor:
        return "refused"
    # guard: answer
    answer = calls * 2
    return answer
"""


def test_every_marker_has_an_entry():
    named = {entry[0] for entry in MUTATIONS}
    found = [
        f"{m.path}:{m.line}: marker {name!r} has no entry in tests/break_guards.py"
        for name, markers in sorted(all_markers().items())
        if name not in named
        for m in markers
    ]
    assert found == [], "\n".join(found)


def test_every_marker_name_is_a_slug_found_once():
    found = bad_names(all_markers())
    assert found == [], "\n".join(found)


def test_every_mutation_applies_and_names_tests_that_exist():
    found = [f"{entry[0]}: {problem}" for entry in MUTATIONS for problem in problems(entry)]
    assert found == [], f"{len(found)} stale in tests/break_guards.py:\n" + "\n".join(found)


def test_every_mutation_has_a_description_of_its_own():
    names = [m[1] for m in MUTATIONS]
    assert sorted({n for n in names if names.count(n) > 1}) == []


def test_a_guard_moved_or_reworded_is_broken_all_the_same():
    moved = MARKED.replace(
        "    # guard: call-floor", "    # the floor first\n\n    # guard: call-floor"
    )
    reworded = MARKED.replace("calls < floor", "floor > calls").replace("calls * 2", "2 * calls")
    for text in (MARKED, moved, reworded):
        lines = text.splitlines()
        floor = lines.index("    # guard: call-floor") + 1
        answer = lines.index("    # guard: answer") + 1
        assert "    if False:\n" in mutate(text, floor, "off")
        assert "    pass\n    return answer" in mutate(text, answer, "skip")
        assert "    answer = 0\n" in mutate(text, answer, "value=0")
