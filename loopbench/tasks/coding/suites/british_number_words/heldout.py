from loopbench_suite import raises, rules


@rules("small")
def test_small_numbers(candidate):
    assert candidate(10) == "ten"
    assert candidate(11) == "eleven"
    assert candidate(19) == "nineteen"
    assert candidate(90) == "ninety"


@rules("zero")
def test_zero(candidate):
    assert candidate(0) == "zero"


@rules("hyphen")
def test_hyphens(candidate):
    assert candidate(35) == "thirty-five"
    assert candidate(68) == "sixty-eight"


@rules("hundred-and")
def test_hundreds(candidate):
    assert candidate(500) == "five hundred"
    assert candidate(909) == "nine hundred and nine"
    assert candidate(110) == "one hundred and ten"
    assert candidate(999) == "nine hundred and ninety-nine"


@rules("and-before-last-group", "no-and-between-groups")
def test_and_before_the_last_group(candidate):
    assert candidate(2050) == "two thousand and fifty"
    assert candidate(1000099) == "one million and ninety-nine"
    assert candidate(7000000001) == "seven billion and one"
    assert candidate(12345) == "twelve thousand three hundred and forty-five"


@rules("no-and-between-groups", "scales")
def test_no_and_between_higher_groups(candidate):
    assert candidate(1005000) == "one million five thousand"
    assert candidate(100000) == "one hundred thousand"
    assert candidate(21000000) == "twenty-one million"


@rules("scales", "hundred-and")
def test_largest_number(candidate):
    assert candidate(999999999999) == (
        "nine hundred and ninety-nine billion nine hundred and ninety-nine million "
        "nine hundred and ninety-nine thousand nine hundred and ninety-nine"
    )


@rules("range")
def test_out_of_range(candidate):
    with raises(ValueError):
        candidate(10**12 + 5)
    with raises(ValueError):
        candidate(-42)
