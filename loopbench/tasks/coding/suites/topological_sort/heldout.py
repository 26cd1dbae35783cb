from loopbench_suite import raises, rules


@rules("dependencies-first")
def test_pipeline(candidate):
    assert candidate({"deploy": ["test"], "test": ["build"], "build": ["fetch"]}) == [
        "fetch",
        "build",
        "test",
        "deploy",
    ]


@rules("smallest-ready")
def test_smallest_ready_node_first(candidate):
    assert candidate({"d": ["a"], "b": ["a"], "c": [], "a": []}) == ["a", "b", "c", "d"]
    assert candidate({"m": [], "a": ["z"], "z": []}) == ["m", "z", "a"]
    assert candidate({"a": [], "B": []}) == ["B", "a"]


@rules("dependencies-first", "smallest-ready")
def test_diamond(candidate):
    assert candidate({"d": ["b", "c"], "b": ["a"], "c": ["a"]}) == ["a", "b", "c", "d"]


@rules("nodes-in-lists")
def test_dependencies_that_are_not_keys(candidate):
    assert candidate({"x": ["w", "v"], "y": ["x"]}) == ["v", "w", "x", "y"]


@rules("duplicates")
def test_duplicates(candidate):
    assert candidate({"c": ["a", "b", "a"], "b": ["a"]}) == ["a", "b", "c"]


@rules("single-node")
def test_single_node(candidate):
    assert candidate({"only": []}) == ["only"]


@rules("empty-graph")
def test_no_nodes(candidate):
    assert candidate({}) == []


@rules("cycle")
def test_cycles(candidate):
    with raises(ValueError):
        candidate({"p": ["q"], "q": ["r"], "r": ["p"]})
    with raises(ValueError):
        candidate({"solo": ["solo"]})
    with raises(ValueError):
        candidate({"a": [], "b": ["c"], "c": ["b"]})
