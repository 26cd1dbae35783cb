from loopbench_suite import raises, rules


@rules("precedence", "left-associative")
def test_precedence_and_left_associativity(candidate):
    assert candidate("1 + 2 * 3") == 7
    assert candidate("(1 + 2) * 3") == 9
    assert candidate("10 - 4 - 3") == 3
    assert candidate("8 / 4 / 2") == 1


@rules("decimals", "true-division")
def test_decimals_and_true_division(candidate):
    assert candidate("7 / 2") == 3.5
    assert candidate("1.5 * 4") == 6


@rules("unary-below-power")
def test_unary_minus_applies_to_the_whole_power(candidate):
    assert candidate("-2**2") == -4
    assert candidate("(-2)**2") == 4


@rules("signed-exponent")
def test_power_takes_a_negative_exponent(candidate):
    assert candidate("2**-1") == 0.5


@rules("power-right-associative")
def test_power_is_right_associative(candidate):
    assert candidate("2**3**2") == 512


@rules("repeated-unary")
def test_unary_signs_repeat(candidate):
    assert candidate("--3") == 3
    assert candidate("-(1 + 2)") == -3
    assert candidate("3 - -2") == 5


@rules(
    "blank", "dangling-operator", "unbalanced", "adjacent-numbers", "bad-character", "number-form"
)
def test_malformed_expressions_raise_value_error(candidate):
    with raises(ValueError):
        candidate("")
    with raises(ValueError):
        candidate("1 +")
    with raises(ValueError):
        candidate("(1")
    with raises(ValueError):
        candidate("1 2")
    with raises(ValueError):
        candidate("2 $ 3")
    with raises(ValueError):
        candidate("5.")
    with raises(ValueError):
        candidate(".25")


@rules("zero-division")
def test_division_by_zero_raises(candidate):
    with raises(ZeroDivisionError):
        candidate("1 / 0")
