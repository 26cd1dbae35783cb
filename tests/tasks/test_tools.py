import asyncio

import pytest

from loopbench.harness.tools import ToolFailure, ToolSet
from loopbench.tasks.loading import load_taskset
from loopbench.tasks.tools import (
    CalcError,
    Encyclopedia,
    calculate,
    improved_lookup,
    lookup_tool,
    plain_lookup,
)

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


def invoke(variant, title, book=BOOK):
    return asyncio.run(ToolSet([lookup_tool(book, variant)]).invoke("lookup", {"title": title}))


def test_plain_several_matches_is_a_failed_result():
    with pytest.raises(ToolFailure, match=r"^Error: 2 entries match 'depot'"):
        plain_lookup(BOOK, "depot")
    result = invoke("plain", "depot")
    assert not result.ok and result.content.startswith("Error: 2 entries match 'depot'.")


def test_plain_miss_names_no_candidate():
    result = invoke("plain", "Leeds depto")
    assert (result.ok, result.content) == (False, "Not found: no entry titled 'Leeds depto'.")


def test_plain_miss_in_the_depot_encyclopedia_names_no_title():
    book = load_taskset("depot").encyclopedia
    result = invoke("plain", "Larkspur Fraight", book)
    assert not result.ok and result.content.startswith("Not found")
    assert not [title for title in book.entries if title in result.content]


def test_plain_entry_does_not_list_related():
    assert "Related" not in plain_lookup(BOOK, "Northwind")


def test_improved_lists_related_entries():
    assert improved_lookup(BOOK, "Northwind").endswith("Related entries: Porto depot, Leeds depot.")


def test_improved_returns_several_matches_as_entries():
    result = improved_lookup(BOOK, "depot")
    assert "[Porto depot] Depot opened 2017." in result
    assert "[Leeds depot] Depot opened 2020." in result


def test_improved_miss_is_a_failed_result_that_explains_naming():
    result = invoke("improved", "Lisbon warehouse")
    assert not result.ok
    assert result.content == (
        "No entry is titled 'Lisbon warehouse'. Depots are titled '<city> depot'."
    )


def test_improved_miss_lists_the_closest_titles():
    with pytest.raises(ToolFailure, match="Closest titles: Northwind"):
        improved_lookup(BOOK, "Northwnd")


def test_a_hit_is_an_ok_result():
    hit = invoke("plain", "Porto")
    assert (hit.ok, hit.content) == (True, "A city in Portugal.")


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
