from loopbench_suite import raises, rules


@rules("star", "single-number")
def test_star_and_single_numbers(candidate):
    assert [m for m in range(60) if candidate("*", m, "minute")] == list(range(60))
    assert [h for h in range(24) if candidate("5", h, "hour")] == [5]


@rules("range")
def test_ranges(candidate):
    assert [h for h in range(24) if candidate("9-17", h, "hour")] == list(range(9, 18))
    assert [d for d in range(7) if candidate("1-5", d, "weekday")] == [1, 2, 3, 4, 5]


@rules("star-step")
def test_star_steps_start_at_the_lowest_number(candidate):
    assert [m for m in range(60) if candidate("*/15", m, "minute")] == [0, 15, 30, 45]
    assert [d for d in range(1, 32) if candidate("*/5", d, "day")] == [1, 6, 11, 16, 21, 26, 31]


@rules("range-step")
def test_range_steps_start_at_the_range_start(candidate):
    assert [m for m in range(60) if candidate("10-30/10", m, "minute")] == [10, 20, 30]
    assert [d for d in range(1, 32) if candidate("1-10/4", d, "day")] == [1, 5, 9]


@rules("list")
def test_lists(candidate):
    assert [m for m in range(60) if candidate("0,30,45-47", m, "minute")] == [0, 30, 45, 46, 47]
    assert [mo for mo in range(1, 13) if candidate("1,6-12/3", mo, "month")] == [1, 6, 9, 12]


@rules("weekday-value-7")
def test_weekday_value_seven_is_sunday(candidate):
    assert candidate("0", 7, "weekday")
    assert not candidate("1-5", 7, "weekday")
    assert candidate("0,6", 6, "weekday")


@rules("bounds")
def test_numbers_outside_the_bounds_raise(candidate):
    with raises(ValueError):
        candidate("60", 0, "minute")
    with raises(ValueError):
        candidate("0", 1, "day")
    with raises(ValueError):
        candidate("1-13", 1, "month")
    with raises(ValueError):
        candidate("*", 24, "hour")
    with raises(ValueError):
        candidate("*", 8, "weekday")


@rules("reversed-range", "zero-step", "empty-item", "step-of-a-number", "unknown-unit")
def test_malformed_fields_raise(candidate):
    with raises(ValueError):
        candidate("10-5", 7, "minute")
    with raises(ValueError):
        candidate("*/0", 0, "minute")
    with raises(ValueError):
        candidate("", 0, "minute")
    with raises(ValueError):
        candidate("1,,2", 1, "hour")
    with raises(ValueError):
        candidate("5/2", 5, "minute")
    with raises(ValueError):
        candidate("*", 0, "second")
