"""CSV text cells a spreadsheet would read as a formula are written as text (OWASP's rule)."""

import csv
import io

import numpy as np
import pandas as pd
import pytest

from loopbench.harness.spreadsheet import FORMULA_STARTS, cell, csv_frame, csv_row, text_cell

FORMULAS = ['=HYPERLINK("http://x","y")', "+1+2", "-2+3", "@SUM(A1)", "\t=1", "\r=1"]


@pytest.mark.parametrize("text", FORMULAS)
def test_a_text_cell_starting_a_formula_gets_a_leading_apostrophe(text):
    assert text_cell(text) == "'" + text
    assert text.startswith(FORMULA_STARTS)


@pytest.mark.parametrize("text", ["", "plain", " =1", "'=1", "a=b", "1-2", "é=", "{}"])
def test_other_text_is_left_as_it_is(text):
    assert text_cell(text) == text


def test_only_text_cells_numbers_negative_ones_too_stay_numbers():
    assert csv_row(["-2+3", -1.5, -3, None, True, "ok"]) == ["'-2+3", -1.5, -3, None, True, "ok"]
    assert cell(-0.25) == -0.25


def test_a_frame_keeps_its_numbers_and_types_and_neutralises_its_text():
    frame = pd.DataFrame(
        {
            "arm": ["=cmd", "ok", None],
            "difference": [-0.5, 0.25, np.nan],
            "runs": [-3, 4, 5],
            "task": pd.array(["@x", pd.NA, "-1"], dtype="string"),
            "mixed": [-1.5, "+y", None],
        }
    )
    safe = csv_frame(frame)
    assert safe["arm"].tolist()[:2] == ["'=cmd", "ok"] and pd.isna(safe["arm"].iloc[2])
    assert safe["difference"].equals(frame["difference"])
    assert safe["runs"].equals(frame["runs"])
    assert safe["task"].dtype == frame["task"].dtype
    assert safe["task"].iloc[0] == "'@x" and safe["task"].iloc[2] == "'-1"
    assert safe["mixed"].tolist()[:2] == [-1.5, "'+y"]
    assert frame["arm"].iloc[0] == "=cmd"  # the frame given is left as it was
    back = list(csv.reader(io.StringIO(safe.to_csv(index=False))))
    assert back[1] == ["'=cmd", "-0.5", "-3", "'@x", "-1.5"]


def test_a_frame_with_nothing_to_neutralise_is_returned_as_it_is():
    frame = pd.DataFrame({"arm": ["a", "b"], "n": [-1, 2]})
    assert csv_frame(frame) is frame


def test_a_frame_with_a_repeated_index_is_neutralised_cell_by_cell():
    frame = pd.DataFrame({"arm": ["=a", "b", "+c"], "n": [1, 2, 3]}, index=[0, 0, 1])
    assert csv_frame(frame)["arm"].tolist() == ["'=a", "b", "'+c"]
