from loopbench_suite import raises, rules


@rules("standard-forms")
def test_standard_forms(candidate):
    assert candidate("I") == 1
    assert candidate("IV") == 4
    assert candidate("IX") == 9
    assert candidate("XIV") == 14
    assert candidate("XL") == 40
    assert candidate("MCMXCIV") == 1994
    assert candidate("MMMCMXCIX") == 3999


@rules("four-repeats", "repeated-five")
def test_four_repeats_and_repeated_fives_raise(candidate):
    with raises(ValueError):
        candidate("IIII")
    with raises(ValueError):
        candidate("VV")


@rules("invalid-pair")
def test_invalid_subtractive_pairs_raise(candidate):
    with raises(ValueError):
        candidate("IC")
    with raises(ValueError):
        candidate("VX")


@rules("standard-order")
def test_non_standard_order_raises(candidate):
    with raises(ValueError):
        candidate("XCX")


@rules("empty", "lower-case", "other-characters")
def test_empty_lower_case_and_other_characters_raise(candidate):
    with raises(ValueError):
        candidate("")
    with raises(ValueError):
        candidate("xiv")
    with raises(ValueError):
        candidate("X I")
