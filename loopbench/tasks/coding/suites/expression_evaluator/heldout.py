from loopbench_suite import raises, rules


@rules("precedence")
def test_precedence(candidate):
    assert candidate("2 + 3 * 4 - 5") == 9
    assert candidate("(2 + 3) * (4 - 1)") == 15
    assert candidate("2 * 3**2") == 18


@rules("left-associative")
def test_left_associativity(candidate):
    assert candidate("20 / 5 * 2") == 8
    assert candidate("9 - 3 + 1") == 7
    assert candidate("100 / 10 / 5") == 2


@rules("decimals", "true-division", "spaces")
def test_decimals_division_and_spaces(candidate):
    assert candidate("0.25 * 8") == 2
    assert candidate("1 / 4") == 0.25
    assert candidate("   12.5   ") == 12.5


@rules("unary-below-power")
def test_unary_minus_binds_looser_than_power(candidate):
    assert candidate("-3**2") == -9
    assert candidate("-(3)**2") == -9
    assert candidate("(-3)**2") == 9
    assert candidate("2 * -3**2") == -18


@rules("signed-exponent", "unary-below-power", "power-right-associative")
def test_negative_exponents(candidate):
    assert candidate("4**-1") == 0.25
    assert candidate("2**-1**2") == 0.5


@rules("power-right-associative")
def test_right_associative_power(candidate):
    assert candidate("2**2**3") == 256
    assert candidate("(2**2)**3") == 64


@rules("repeated-unary")
def test_mixed_unary_signs(candidate):
    assert candidate("+-+4") == -4
    assert candidate("-(-(2))") == 2


@rules("blank", "dangling-operator", "unbalanced", "adjacent-numbers", "number-form")
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


@rules("bad-character")
def test_characters_outside_the_grammar(candidate):
    with raises(ValueError):
        candidate("3 % 2")
    with raises(ValueError):
        candidate("1e3")
    with raises(ValueError):
        candidate("2 ^ 3")


@rules("zero-division")
def test_division_by_zero(candidate):
    with raises(ZeroDivisionError):
        candidate("5 / (2 - 2)")
