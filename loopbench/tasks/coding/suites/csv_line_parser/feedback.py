from loopbench_suite import raises, rules


@rules("plain-fields")
def test_plain_fields(candidate):
    assert candidate("a,b,c") == ["a", "b", "c"]
    assert candidate("one") == ["one"]


@rules("empty-fields", "empty-line")
def test_empty_fields(candidate):
    assert candidate("") == [""]
    assert candidate("a,,b") == ["a", "", "b"]
    assert candidate("a,") == ["a", ""]


@rules("comma-in-quotes")
def test_comma_inside_quotes(candidate):
    assert candidate('"a,b",c') == ["a,b", "c"]


@rules("doubled-quote")
def test_doubled_quotes_inside_quotes(candidate):
    assert candidate('"say ""hi""",x') == ['say "hi"', "x"]
    assert candidate('""""') == ['"']


@rules("quoted-empty")
def test_quoted_empty_field(candidate):
    assert candidate('"",a') == ["", "a"]


@rules("unquoted-as-is")
def test_unquoted_fields_keep_quotes_and_spaces(candidate):
    assert candidate(' a , "b"') == [" a ", ' "b"']
    assert candidate('a"b,c') == ['a"b', "c"]


@rules("unclosed-quote", "text-after-quote")
def test_bad_quoting_raises(candidate):
    with raises(ValueError):
        candidate('"abc')
    with raises(ValueError):
        candidate('"a"b,c')
