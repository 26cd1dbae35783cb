from loopbench_suite import raises, rules


def timeline(cache_class, ttl, steps):
    """Plays steps on a cache whose clock reads each step's time; returns what get and len gave.

    A step is (time, "set", key, value), (time, "get", key) or (time, "len"); a missing entry
    reads as "gone".
    """
    now = [0.0]
    cache = cache_class(ttl, lambda: now[0])
    seen = []
    for time, action, *args in steps:
        now[0] = time
        if action == "set":
            cache.set(*args)
        elif action == "get":
            seen.append(cache.get(args[0], "gone"))
        else:
            seen.append(len(cache))
    return seen


@rules("present-before-ttl", "missing-default")
def test_entry_is_present_before_ttl(candidate):
    assert timeline(candidate, 10, [(0, "set", "a", 1), (5, "get", "a"), (5, "get", "b")]) == [
        1,
        "gone",
    ]


@rules("get-keeps-clock", "gone-at-ttl")
def test_get_does_not_restart_clock(candidate):
    assert timeline(candidate, 10, [(0, "set", "a", 1), (9.9, "get", "a"), (10, "get", "a")]) == [
        1,
        "gone",
    ]


@rules("set-restarts", "get-keeps-clock", "gone-at-ttl")
def test_set_restarts_clock(candidate):
    assert timeline(
        candidate, 10, [(0, "set", "a", 1), (5, "set", "a", 2), (12, "get", "a"), (15, "get", "a")]
    ) == [2, "gone"]


@rules("falsy-values")
def test_falsy_values_are_stored(candidate):
    assert timeline(candidate, 10, [(0, "set", "b", 0), (1, "get", "b")]) == [0]


@rules("len", "gone-at-ttl")
def test_len_counts_present_entries(candidate):
    assert timeline(
        candidate,
        10,
        [(0, "set", "a", 1), (5, "set", "b", 2), (5, "len"), (10, "len"), (15, "len")],
    ) == [2, 1, 0]


@rules("default-none")
def test_get_default_is_none(candidate):
    cache = candidate(10, lambda: 0.0)
    assert cache.get("missing") is None


@rules("ttl-positive")
def test_ttl_must_be_positive(candidate):
    with raises(ValueError):
        candidate(0, lambda: 0.0)
    with raises(ValueError):
        candidate(-1, lambda: 0.0)
