from loopbench_suite import raises, rules


@rules("star", "single-number")
def test_star_and_single_numbers(candidate):
    assert [mo for mo in range(1, 13) if candidate("*", mo, "month")] == list(range(1, 13))
    assert [m for m in range(60) if candidate("0", m, "minute")] == [0]
    assert [d for d in range(1, 32) if candidate("31", d, "day")] == [31]


@rules("range", "weekday-field-7")
def test_ranges(candidate):
    assert [mo for mo in range(1, 13) if candidate("1-3", mo, "month")] == [1, 2, 3]
    assert [d for d in range(8) if candidate("5-7", d, "weekday")] == [0, 5, 6, 7]
    assert [d for d in range(8) if candidate("0-7", d, "weekday")] == list(range(8))


@rules("star-step")
def test_star_steps(candidate):
    assert [mo for mo in range(1, 13) if candidate("*/2", mo, "month")] == [1, 3, 5, 7, 9, 11]
    assert [h for h in range(24) if candidate("*/6", h, "hour")] == [0, 6, 12, 18]
    assert [d for d in range(7) if candidate("*/2", d, "weekday")] == [0, 2, 4, 6]


@rules("range-step")
def test_range_steps(candidate):
    assert [d for d in range(1, 32) if candidate("1-10/3", d, "day")] == [1, 4, 7, 10]
    assert [m for m in range(60) if candidate("0-20/7", m, "minute")] == [0, 7, 14]
    assert [h for h in range(24) if candidate("8-18/5", h, "hour")] == [8, 13, 18]


@rules("list")
def test_lists(candidate):
    assert [d for d in range(1, 32) if candidate("1,3-4,10-20/5", d, "day")] == [
        1,
        3,
        4,
        10,
        15,
        20,
    ]
    assert [h for h in range(24) if candidate("23,0", h, "hour")] == [0, 23]


@rules("weekday-field-7")
def test_seven_in_the_weekday_field_is_sunday(candidate):
    assert [d for d in range(8) if candidate("7", d, "weekday")] == [0, 7]
    assert [d for d in range(8) if candidate("1,7", d, "weekday")] == [0, 1, 7]


@rules("weekday-value-7")
def test_weekday_value_seven(candidate):
    assert candidate("0", 7, "weekday")
    assert not candidate("6", 7, "weekday")


@rules("bounds")
def test_out_of_bounds(candidate):
    with raises(ValueError):
        candidate("24", 0, "hour")
    with raises(ValueError):
        candidate("0", 1, "month")
    with raises(ValueError):
        candidate("1-32", 1, "day")
    with raises(ValueError):
        candidate("8", 0, "weekday")
    with raises(ValueError):
        candidate("*", 60, "minute")
    with raises(ValueError):
        candidate("*", 0, "day")


@rules("reversed-range", "zero-step", "missing-step", "bad-character", "unknown-unit")
def test_malformed(candidate):
    with raises(ValueError):
        candidate("3-1", 2, "hour")
    with raises(ValueError):
        candidate("1-5/0", 1, "day")
    with raises(ValueError):
        candidate("*/", 0, "minute")
    with raises(ValueError):
        candidate("a", 0, "minute")
    with raises(ValueError):
        candidate("1, 2", 1, "hour")
    with raises(ValueError):
        candidate("*", 1, "year")


@rules("empty-item")
def test_empty_items(candidate):
    with raises(ValueError):
        candidate(",", 0, "minute")
    with raises(ValueError):
        candidate("3,", 3, "hour")


# guard: held-out-cron-step-needs
@rules("step-of-a-number")
def test_a_step_needs_a_star_or_a_range(candidate):
    with raises(ValueError):
        candidate("10/5", 10, "minute")
    with raises(ValueError):
        candidate("1,2/2", 2, "day")
