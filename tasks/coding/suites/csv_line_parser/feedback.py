from loopbench_suite import raises


def test_plain_fields(candidate):
    assert candidate("a,b,c") == ["a", "b", "c"]
    assert candidate("one") == ["one"]


def test_empty_fields(candidate):
    assert candidate("") == [""]
    assert candidate("a,,b") == ["a", "", "b"]
    assert candidate("a,") == ["a", ""]


def test_comma_inside_quotes(candidate):
    assert candidate('"a,b",c') == ["a,b", "c"]


def test_doubled_quotes_inside_quotes(candidate):
    assert candidate('"say ""hi""",x') == ['say "hi"', "x"]
    assert candidate('""""') == ['"']


def test_quoted_empty_field(candidate):
    assert candidate('"",a') == ["", "a"]


def test_unquoted_fields_keep_quotes_and_spaces(candidate):
    assert candidate(' a , "b"') == [" a ", ' "b"']
    assert candidate('a"b,c') == ['a"b', "c"]


def test_bad_quoting_raises(candidate):
    with raises(ValueError):
        candidate('"abc')
    with raises(ValueError):
        candidate('"a"b,c')
