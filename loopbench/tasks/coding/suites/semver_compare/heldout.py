from loopbench_suite import raises, rules


@rules("core-numeric")
def test_core_numbers(candidate):
    assert candidate("0.9.9", "0.10.0") == -1
    assert candidate("3.0.0", "2.99.99") == 1
    assert candidate("1.1.0", "1.0.99") == 1
    assert candidate("0.0.0", "0.0.0") == 0


@rules("pre-release-lower", "core-first")
def test_core_decides_before_pre_release(candidate):
    assert candidate("2.0.0-rc.9", "2.0.0") == -1
    assert candidate("2.0.0-rc.1", "1.9.9") == 1


@rules("numeric-identifiers")
def test_numeric_identifiers_compare_numerically(candidate):
    assert candidate("1.0.0-alpha.10", "1.0.0-alpha.9") == 1
    assert candidate("1.0.0-rc.1.2", "1.0.0-rc.1.10") == -1


@rules("numeric-below-alphanumeric")
def test_numeric_identifiers_are_lower_than_alphanumeric(candidate):
    assert candidate("1.0.0-2", "1.0.0-a") == -1
    assert candidate("1.0.0-1a", "1.0.0-10") == 1


@rules("fewer-identifiers-lower", "ascii-order")
def test_fewer_identifiers_are_lower_and_ascii_order(candidate):
    assert candidate("1.0.0-alpha", "1.0.0-alpha.0") == -1
    assert candidate("1.0.0-Zeta", "1.0.0-alpha") == -1
    assert candidate("1.0.0-x-1", "1.0.0-x-2") == -1
    assert candidate("1.0.0-beta", "1.0.0-beta") == 0


@rules("build-ignored")
def test_build_metadata(candidate):
    assert candidate("2.1.0+linux", "2.1.0+windows") == 0
    assert candidate("1.0.0-beta+exp.sha.5114f85", "1.0.0-beta") == 0
    assert candidate("1.0.0+20130313144700", "1.0.0+001") == 0


@rules("invalid-core", "leading-zero", "empty-identifier", "bad-character")
def test_invalid_versions(candidate):
    with raises(ValueError):
        candidate("1.2.3.4", "1.2.3")
    with raises(ValueError):
        candidate("1.2.3", " 1.2.3")
    with raises(ValueError):
        candidate("1.2.03", "1.2.3")
    with raises(ValueError):
        candidate("1.2.3-beta.007", "1.2.3")
    with raises(ValueError):
        candidate("1.2.3", "1.2.3+a..b")
    with raises(ValueError):
        candidate("1.2.3-alpha_1", "1.2.3")
    with raises(ValueError):
        candidate("", "1.2.3")
