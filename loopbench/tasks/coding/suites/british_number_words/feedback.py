from loopbench_suite import raises, rules


@rules("zero", "small")
def test_small_numbers(candidate):
    assert candidate(0) == "zero"
    assert candidate(7) == "seven"
    assert candidate(13) == "thirteen"
    assert candidate(40) == "forty"


@rules("hyphen")
def test_tens_and_units_are_hyphenated(candidate):
    assert candidate(21) == "twenty-one"
    assert candidate(99) == "ninety-nine"


@rules("hundred-and")
def test_and_after_hundreds(candidate):
    assert candidate(100) == "one hundred"
    assert candidate(101) == "one hundred and one"
    assert candidate(342) == "three hundred and forty-two"


@rules("and-before-last-group", "no-and-between-groups")
def test_and_before_a_small_last_group(candidate):
    assert candidate(1001) == "one thousand and one"
    assert candidate(1100) == "one thousand one hundred"


@rules("scales", "no-and-between-groups", "hundred-and")
def test_scales(candidate):
    assert candidate(1000000) == "one million"
    assert candidate(2500000) == "two million five hundred thousand"
    assert candidate(305000) == "three hundred and five thousand"
    assert candidate(1000000000) == "one billion"


@rules("range")
def test_out_of_range_raises(candidate):
    with raises(ValueError):
        candidate(-1)
    with raises(ValueError):
        candidate(10**12)
