from loopbench_suite import raises, rules


@rules("dependencies-first")
def test_chain(candidate):
    assert candidate({"c": ["b"], "b": ["a"]}) == ["a", "b", "c"]


@rules("smallest-ready")
def test_ties_take_the_smallest_ready_node(candidate):
    assert candidate({"b": ["a"], "c": ["a"], "a": []}) == ["a", "b", "c"]
    assert candidate({"z": [], "y": [], "x": []}) == ["x", "y", "z"]
    assert candidate({"b": [], "a": ["c"], "c": []}) == ["b", "c", "a"]


@rules("nodes-in-lists")
def test_nodes_only_in_lists_are_included(candidate):
    assert candidate({"app": ["lib", "util"]}) == ["lib", "util", "app"]


@rules("duplicates")
def test_repeated_dependencies_count_once(candidate):
    assert candidate({"b": ["a", "a"]}) == ["a", "b"]


@rules("empty-graph")
def test_empty_graph(candidate):
    assert candidate({}) == []


@rules("cycle")
def test_cycles_raise(candidate):
    with raises(ValueError):
        candidate({"x": ["y"], "y": ["x"]})
    with raises(ValueError):
        candidate({"a": ["a"]})
    with raises(ValueError):
        candidate({"a": ["b"], "b": ["c"], "c": ["a"], "d": []})
