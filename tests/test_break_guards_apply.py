"""Every mutation in ``tests/break_guards.py`` still applies: its source text is in its
file and its named tests exist. A guard whose text moved would be broken nowhere, and
break_guards would say so only when run; this says which, all at once, in the suite."""

from tests.break_guards import MUTATIONS, stale


def test_every_mutation_applies_and_names_tests_that_exist():
    found = [
        f"{name}: {problem}"
        for name, path, old, _, tests in MUTATIONS
        for problem in stale(path, old, tests)
    ]
    assert found == [], f"{len(found)} stale in tests/break_guards.py:\n" + "\n".join(found)


def test_every_mutation_has_a_name_of_its_own():
    names = [m[0] for m in MUTATIONS]
    assert sorted({n for n in names if names.count(n) > 1}) == []
