from loopbench_suite import rules


@rules("distance")
def test_classic_pairs(candidate):
    assert candidate("kitten", "sitting") == 3
    assert candidate("flaw", "lawn") == 2


@rules("empty")
def test_empty_strings(candidate):
    assert candidate("", "abc") == 3
    assert candidate("abc", "") == 3
    assert candidate("", "") == 0


@rules("edit-anywhere")
def test_insertion_at_the_start(candidate):
    assert candidate("bc", "abc") == 1
    assert candidate("abc", "xabc") == 1


@rules("swap-costs-two")
def test_adjacent_swap_costs_two(candidate):
    assert candidate("ab", "ba") == 2


@rules("case-matters")
def test_case_matters(candidate):
    assert candidate("Apple", "apple") == 1


@rules("long-inputs", "distance")
def test_long_strings_are_quick(candidate):
    assert candidate("ab" * 150, "ba" * 150) == 2
