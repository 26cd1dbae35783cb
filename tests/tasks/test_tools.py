import pytest

from tasks.tools import CalcError, Encyclopedia, calculate, improved_lookup, plain_lookup

BOOK = Encyclopedia(
    entries={
        "Porto depot": "Depot opened 2017.",
        "Leeds depot": "Depot opened 2020.",
        "Porto": "A city in Portugal.",
        "Northwind": "A company with depots.",
    },
    related={"Northwind": ["Porto depot", "Leeds depot"]},
    naming="Depots are titled '<city> depot'.",
)


def test_plain_exact_match_ignores_case():
    assert plain_lookup(BOOK, "porto DEPOT") == "Depot opened 2017."


def test_plain_unique_substring_match():
    assert plain_lookup(BOOK, "Leeds") == "Depot opened 2020."


def test_plain_several_matches_is_an_error():
    assert plain_lookup(BOOK, "depot").startswith("Error: 2 entries match")


def test_plain_miss_suggests_closest():
    result = plain_lookup(BOOK, "Leeds depto")
    assert result.startswith("Not found") and "'Leeds depot'" in result


def test_plain_entry_does_not_list_related():
    assert "Related" not in plain_lookup(BOOK, "Northwind")


def test_improved_lists_related_entries():
    assert improved_lookup(BOOK, "Northwind").endswith("Related entries: Porto depot, Leeds depot.")


def test_improved_returns_several_matches_as_entries():
    result = improved_lookup(BOOK, "depot")
    assert "[Porto depot] Depot opened 2017." in result
    assert "[Leeds depot] Depot opened 2020." in result


def test_improved_miss_explains_naming():
    result = improved_lookup(BOOK, "Lisbon warehouse")
    assert "No entry is titled 'Lisbon warehouse'" in result
    assert "Depots are titled '<city> depot'." in result


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("2020 - 2017", "3"),
        ("8,849 - 5,895", "2954"),
        ("(58 + 44) * 2", "204"),
        ("7 / 2", "3.5"),
        ("-3 ** 2", "-9"),
        ("2 \u00d7 3", "6"),
    ],
)
def test_calc(expression, value):
    assert calculate(expression) == value


@pytest.mark.parametrize(
    "expression",
    ["__import__('os').system('true')", "open('x')", "a + 1", "2 ** 1000", "1 / 0", "", "3 +"],
)
def test_calc_refuses_anything_but_arithmetic(expression):
    with pytest.raises(CalcError):
        calculate(expression)
