"""Every mutation in ``tests/break_guards.py`` still applies: its source text is in its
file and its named tests exist. A guard whose text moved would be broken nowhere, and the
run of break_guards would stop at it; this says which, in the suite."""

from pathlib import Path

import pytest

from tests.break_guards import MUTATIONS

ROOT = Path(__file__).parents[1]


@pytest.mark.parametrize(
    ("name", "path", "old", "tests"), [(m[0], m[1], m[2], m[4]) for m in MUTATIONS]
)
def test_the_mutation_applies_and_names_tests_that_exist(name, path, old, tests):
    assert old in (ROOT / path).read_text(encoding="utf-8"), f"{name}: text not in {path}"
    for test in tests:
        file, _, function = test.partition("::")
        assert Path(file).name.startswith("test_"), f"{name}: {file} is not a test module"
        assert (ROOT / file).exists(), f"{name}: no {test}"
        if function:
            defined = f"def {function.split('[')[0]}("
            assert defined in (ROOT / file).read_text(encoding="utf-8"), f"{name}: no {test}"


def test_every_mutation_has_a_name_of_its_own():
    names = [m[0] for m in MUTATIONS]
    assert len(names) == len(set(names))
