from loopbench_suite import raises


def test_chain(candidate):
    assert candidate({"c": ["b"], "b": ["a"]}) == ["a", "b", "c"]


def test_ties_take_the_smallest_ready_node(candidate):
    assert candidate({"b": ["a"], "c": ["a"], "a": []}) == ["a", "b", "c"]
    assert candidate({"z": [], "y": [], "x": []}) == ["x", "y", "z"]
    assert candidate({"b": [], "a": ["c"], "c": []}) == ["b", "c", "a"]


def test_nodes_only_in_lists_are_included(candidate):
    assert candidate({"app": ["lib", "util"]}) == ["lib", "util", "app"]


def test_repeated_dependencies_count_once(candidate):
    assert candidate({"b": ["a", "a"]}) == ["a", "b"]


def test_empty_graph(candidate):
    assert candidate({}) == []


def test_cycles_raise(candidate):
    with raises(ValueError):
        candidate({"x": ["y"], "y": ["x"]})
    with raises(ValueError):
        candidate({"a": ["a"]})
    with raises(ValueError):
        candidate({"a": ["b"], "b": ["c"], "c": ["a"], "d": []})
