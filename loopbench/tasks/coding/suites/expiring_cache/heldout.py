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


@rules("missing-default", "present-before-ttl", "get-keeps-clock", "gone-at-ttl")
def test_missing_and_expired_give_the_default(candidate):
    assert timeline(
        candidate, 3, [(1, "set", "k", "v"), (2, "get", "k"), (2, "get", "other"), (4, "get", "k")]
    ) == ["v", "gone", "gone"]


@rules("get-keeps-clock", "gone-at-ttl")
def test_reads_do_not_extend_the_lifetime(candidate):
    assert timeline(
        candidate,
        5,
        [
            (100, "set", "x", 7),
            (101, "get", "x"),
            (103, "get", "x"),
            (104.5, "get", "x"),
            (105, "get", "x"),
        ],
    ) == [7, 7, 7, "gone"]


@rules("gone-at-ttl", "get-keeps-clock")
def test_entry_is_gone_exactly_at_ttl(candidate):
    assert timeline(
        candidate, 2.5, [(0, "set", "k", "v"), (2.4999, "get", "k"), (2.5, "get", "k")]
    ) == ["v", "gone"]


@rules("set-restarts", "get-keeps-clock", "gone-at-ttl")
def test_overwriting_restarts_the_lifetime(candidate):
    assert timeline(
        candidate, 4, [(0, "set", "k", 1), (3, "set", "k", 2), (6.5, "get", "k"), (7, "get", "k")]
    ) == [2, "gone"]


@rules("independent-keys", "gone-at-ttl")
def test_keys_expire_independently(candidate):
    assert timeline(
        candidate,
        3,
        [
            (0, "set", "a", "A"),
            (2, "set", "b", "B"),
            (3, "get", "a"),
            (3, "get", "b"),
            (4, "get", "b"),
        ],
    ) == ["gone", "B", "B"]


@rules("len", "gone-at-ttl")
def test_len_ignores_expired_entries(candidate):
    assert timeline(
        candidate,
        1,
        [(0, "set", "a", 1), (0.5, "set", "b", 2), (0.5, "len"), (1, "len"), (1.5, "len")],
    ) == [2, 1, 0]


@rules("falsy-values", "hashable-keys")
def test_stores_falsy_values_and_any_hashable_key(candidate):
    assert timeline(
        candidate,
        2,
        [(0, "set", ("t", 1), ""), (0, "set", 3, False), (1, "get", ("t", 1)), (1, "get", 3)],
    ) == ["", False]


@rules("default-none")
def test_get_without_default_gives_none(candidate):
    cache = candidate(1.5, lambda: 0.0)
    cache.set("k", 1)
    assert cache.get("absent") is None


@rules("ttl-positive")
def test_nonpositive_ttl_raises(candidate):
    with raises(ValueError):
        candidate(0.0, lambda: 0.0)
    with raises(ValueError):
        candidate(-0.5, lambda: 0.0)
