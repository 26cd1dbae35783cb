from loopbench_suite import raises


def test_precedence(candidate):
    assert candidate("2 + 3 * 4 - 5") == 9
    assert candidate("(2 + 3) * (4 - 1)") == 15
    assert candidate("2 * 3**2") == 18


def test_left_associativity(candidate):
    assert candidate("20 / 5 * 2") == 8
    assert candidate("9 - 3 + 1") == 7
    assert candidate("100 / 10 / 5") == 2


def test_decimals_division_and_spaces(candidate):
    assert candidate("0.25 * 8") == 2
    assert candidate("1 / 4") == 0.25
    assert candidate("   12.5   ") == 12.5


def test_unary_minus_binds_looser_than_power(candidate):
    assert candidate("-3**2") == -9
    assert candidate("-(3)**2") == -9
    assert candidate("(-3)**2") == 9
    assert candidate("2 * -3**2") == -18


def test_negative_exponents(candidate):
    assert candidate("4**-1") == 0.25
    assert candidate("2**-1**2") == 0.5


def test_right_associative_power(candidate):
    assert candidate("2**2**3") == 256
    assert candidate("(2**2)**3") == 64


def test_mixed_unary_signs(candidate):
    assert candidate("+-+4") == -4
    assert candidate("-(-(2))") == 2


def test_malformed_expressions(candidate):
    with raises(ValueError):
        candidate(")")
    with raises(ValueError):
        candidate("3 +* 4")
    with raises(ValueError):
        candidate("()")
    with raises(ValueError):
        candidate("1.")
    with raises(ValueError):
        candidate(".5")
    with raises(ValueError):
        candidate("2 ** ")
    with raises(ValueError):
        candidate("4 4")
    with raises(ValueError):
        candidate("   ")


def test_division_by_zero(candidate):
    with raises(ZeroDivisionError):
        candidate("5 / (2 - 2)")
