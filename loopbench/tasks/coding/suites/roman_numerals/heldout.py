from loopbench_suite import raises, rules


@rules("standard-forms")
def test_standard_forms(candidate):
    assert candidate("III") == 3
    assert candidate("VIII") == 8
    assert candidate("XLIV") == 44
    assert candidate("XCIX") == 99
    assert candidate("CD") == 400
    assert candidate("DCCCXC") == 890
    assert candidate("MMXXIV") == 2024
    assert candidate("M") == 1000


@rules("four-repeats")
def test_four_repeats(candidate):
    with raises(ValueError):
        candidate("XXXX")
    with raises(ValueError):
        candidate("CCCC")
    with raises(ValueError):
        candidate("MMMM")


@rules("repeated-five")
def test_repeated_v_l_d(candidate):
    with raises(ValueError):
        candidate("LL")
    with raises(ValueError):
        candidate("DD")


@rules("invalid-pair")
def test_invalid_pairs(candidate):
    with raises(ValueError):
        candidate("IL")
    with raises(ValueError):
        candidate("XD")
    with raises(ValueError):
        candidate("VL")
    with raises(ValueError):
        candidate("IM")


@rules("standard-order")
def test_not_in_standard_order(candidate):
    with raises(ValueError):
        candidate("XLX")
    with raises(ValueError):
        candidate("CDC")
    with raises(ValueError):
        candidate("IVI")
    with raises(ValueError):
        candidate("MCMC")


@rules("lower-case", "other-characters")
def test_other_text(candidate):
    with raises(ValueError):
        candidate(" ")
    with raises(ValueError):
        candidate("IV ")
    with raises(ValueError):
        candidate("iv")
    with raises(ValueError):
        candidate("12")


@rules("empty")
def test_the_empty_string(candidate):
    with raises(ValueError):
        candidate("")
