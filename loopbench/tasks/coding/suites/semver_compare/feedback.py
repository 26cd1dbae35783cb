from loopbench_suite import raises, rules


@rules("core-numeric")
def test_core_numbers_compare_numerically(candidate):
    assert candidate("1.2.3", "1.2.3") == 0
    assert candidate("1.10.0", "1.9.0") == 1
    assert candidate("2.0.0", "10.0.0") == -1
    assert candidate("1.0.1", "1.0.0") == 1


@rules("pre-release-lower")
def test_pre_release_is_lower_than_release(candidate):
    assert candidate("1.0.0-alpha", "1.0.0") == -1
    assert candidate("1.0.0", "1.0.0-rc.1") == 1


@rules(
    "fewer-identifiers-lower", "numeric-below-alphanumeric", "ascii-order", "numeric-identifiers"
)
def test_pre_release_identifiers(candidate):
    assert candidate("1.0.0-alpha", "1.0.0-alpha.1") == -1
    assert candidate("1.0.0-alpha.1", "1.0.0-alpha.beta") == -1
    assert candidate("1.0.0-alpha.beta", "1.0.0-beta") == -1
    assert candidate("1.0.0-beta.2", "1.0.0-beta.11") == -1
    assert candidate("1.0.0-rc.1", "1.0.0-beta.11") == 1
    assert candidate("1.0.0-RC.1", "1.0.0-rc.1") == -1


@rules("build-ignored")
def test_build_metadata_is_ignored(candidate):
    assert candidate("1.0.0+build.1", "1.0.0+build.2") == 0
    assert candidate("1.0.0-alpha+001", "1.0.0-alpha") == 0


@rules("invalid-core", "leading-zero", "empty-identifier")
def test_invalid_versions_raise(candidate):
    with raises(ValueError):
        candidate("1.2", "1.2.0")
    with raises(ValueError):
        candidate("v1.2.3", "1.2.3")
    with raises(ValueError):
        candidate("1.2.3", "01.2.3")
    with raises(ValueError):
        candidate("1.2.3-", "1.2.3")
    with raises(ValueError):
        candidate("1.2.3-01", "1.2.3")
    with raises(ValueError):
        candidate("1.2.3+", "1.2.3")
    with raises(ValueError):
        candidate("1.2.3", "1.2.3-a..b")
