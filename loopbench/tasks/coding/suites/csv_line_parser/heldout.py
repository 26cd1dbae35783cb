from loopbench_suite import raises, rules


@rules("plain-fields")
def test_plain_fields(candidate):
    assert candidate("x,y") == ["x", "y"]
    assert candidate("1,2,3,4") == ["1", "2", "3", "4"]


@rules("empty-fields", "unquoted-as-is")
def test_empty_fields(candidate):
    assert candidate(",,") == ["", "", ""]
    assert candidate(",a") == ["", "a"]
    assert candidate("  ") == ["  "]


# guard: held-out-empty-csv-line
@rules("empty-line")
def test_an_empty_line_is_one_empty_field(candidate):
    assert candidate("") == [""]


@rules("comma-in-quotes")
def test_commas_inside_quotes(candidate):
    assert candidate('name,"Smith, John",42') == ["name", "Smith, John", "42"]
    assert candidate('",,,"') == [",,,"]


@rules("doubled-quote")
def test_doubled_quotes(candidate):
    assert candidate('"He said ""no"", twice"') == ['He said "no", twice']
    assert candidate('a,"""quoted"""') == ["a", '"quoted"']


@rules("quoted-empty")
def test_quoted_empty_fields(candidate):
    assert candidate('a,""') == ["a", ""]
    assert candidate('""') == [""]


@rules("unquoted-as-is")
def test_quotes_inside_unquoted_fields(candidate):
    assert candidate('x "y" z,w') == ['x "y" z', "w"]
    assert candidate('a, "b,c"') == ["a", ' "b', 'c"']


@rules("unclosed-quote")
def test_unclosed_quote_raises(candidate):
    with raises(ValueError):
        candidate('a,"b')
    with raises(ValueError):
        candidate('"a""')


@rules("text-after-quote")
def test_text_after_closing_quote_raises(candidate):
    with raises(ValueError):
        candidate('"x" ,y')
