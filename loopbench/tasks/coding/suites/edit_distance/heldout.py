from loopbench_suite import rules


@rules("distance")
def test_textbook_pairs(candidate):
    assert candidate("intention", "execution") == 5
    assert candidate("sunday", "saturday") == 3


@rules("empty", "equal")
def test_empty_and_equal_strings(candidate):
    assert candidate("", "x") == 1
    assert candidate("hello", "") == 5
    assert candidate("same", "same") == 0


@rules("edit-anywhere")
def test_insertions_and_deletions_anywhere(candidate):
    assert candidate("abc", "yabd") == 2
    assert candidate("yabd", "abc") == 2
    assert candidate("market", "mark") == 2


@rules("swap-costs-two")
def test_swaps_are_not_one_operation(candidate):
    assert candidate("abcdef", "abdcef") == 2
    assert candidate("converse", "conserve") == 2


@rules("case-matters", "code-points")
def test_case_and_code_points(candidate):
    assert candidate("Hello", "hELLO") == 5
    assert candidate("café", "cafe") == 1


@rules("long-inputs", "distance")
def test_long_strings(candidate):
    assert candidate("x" * 300, "x" * 150 + "y" * 150) == 150
    assert candidate("abcdefghij" * 30, "bcdefghija" * 30) == 2
